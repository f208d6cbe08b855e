#include "cache/redis_connection.hpp"

#include <hiredis/hiredis.h>

#include <pthread.h>
#include <sys/time.h>

#include <cerrno>
#include <csignal>

namespace kreg::cache {
namespace {

timeval to_timeval(std::chrono::milliseconds ms) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(ms.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((ms.count() % 1000) * 1000);
  return tv;
}

// Keeps a write to a server that has gone away from raising SIGPIPE, whose default action
// would end the process: hiredis writes with write(2), not send(2) with MSG_NOSIGNAL. The
// signal is blocked on this thread while the command runs, and one that arrived meanwhile
// (it is directed at the writing thread) is taken off before the old mask comes back.
class SigpipeBlock {
 public:
  SigpipeBlock() noexcept {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    sigset_t pending;
    sigpending(&pending);
    already_pending_ = sigismember(&pending, SIGPIPE) == 1;
    blocked_ = pthread_sigmask(SIG_BLOCK, &pipe_, &old_) == 0;
  }
  ~SigpipeBlock() {
    if (!blocked_) return;
    sigset_t pending;
    sigpending(&pending);
    if (!already_pending_ && sigismember(&pending, SIGPIPE) == 1) {
      const timespec none{};
      sigtimedwait(&pipe_, nullptr, &none);
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  SigpipeBlock(const SigpipeBlock&) = delete;
  SigpipeBlock& operator=(const SigpipeBlock&) = delete;

 private:
  sigset_t pipe_{};
  sigset_t old_{};
  bool already_pending_ = false;
  bool blocked_ = false;
};

struct ReplyDeleter {
  void operator()(redisReply* reply) const noexcept { freeReplyObject(reply); }
};

RedisReply convert(const redisReply& r) {
  RedisReply out;
  switch (r.type) {
    case REDIS_REPLY_STRING:
      out.status = RedisReply::Status::Value;
      out.text.assign(r.str, r.len);
      break;
    case REDIS_REPLY_INTEGER:
      out.status = RedisReply::Status::Value;
      out.integer = r.integer;
      break;
    case REDIS_REPLY_NIL: out.status = RedisReply::Status::Nil; break;
    case REDIS_REPLY_STATUS:
      out.status = RedisReply::Status::Ok;
      out.text.assign(r.str, r.len);
      break;
    case REDIS_REPLY_ERROR:
      out.status = RedisReply::Status::Refused;
      out.text.assign(r.str, r.len);
      break;
    case REDIS_REPLY_ARRAY:
      out.status = RedisReply::Status::Array;
      for (std::size_t i = 0; i < r.elements; ++i) {
        const redisReply* item = r.element[i];
        if (item != nullptr && item->type == REDIS_REPLY_STRING) {
          out.items.emplace_back(item->str, item->len);
        } else if (item != nullptr && item->type == REDIS_REPLY_ARRAY) {
          // SCAN answers [cursor, [keys...]]: the keys follow the cursor, flattened.
          for (std::size_t j = 0; j < item->elements; ++j) {
            const redisReply* inner = item->element[j];
            if (inner != nullptr && inner->type == REDIS_REPLY_STRING) {
              out.items.emplace_back(inner->str, inner->len);
            }
          }
        }
      }
      break;
    default: out.text = "unexpected reply type"; break;
  }
  return out;
}

}  // namespace

std::unique_ptr<RedisConnection> RedisConnection::open(const RemoteEndpoint& endpoint,
                                                       std::chrono::milliseconds connect_timeout,
                                                       std::chrono::milliseconds operation_timeout,
                                                       std::string& why) {
  const timeval connect_tv = to_timeval(connect_timeout);
  redisContext* context =
      endpoint.unix_socket
          ? redisConnectUnixWithTimeout(endpoint.path.c_str(), connect_tv)
          : redisConnectWithTimeout(endpoint.host.c_str(), endpoint.port, connect_tv);
  if (context == nullptr) {
    why = "out of memory";
    return nullptr;
  }
  std::unique_ptr<RedisConnection> connection(new RedisConnection(context));
  if (context->err != 0) {
    why = std::string("cannot connect: ") + context->errstr;
    return nullptr;
  }
  if (redisSetTimeout(context, to_timeval(operation_timeout)) != REDIS_OK) {
    why = "cannot set the operation timeout";
    return nullptr;
  }
  if (endpoint.db != 0) {
    const std::string db = std::to_string(endpoint.db);
    const RedisReply reply = connection->command({"SELECT", db});
    if (reply.status != RedisReply::Status::Ok) {
      why = "SELECT " + db + " failed: " + (reply.text.empty() ? "no answer" : reply.text);
      return nullptr;
    }
  }
  return connection;
}

RedisConnection::~RedisConnection() {
  redisFree(context_);
}

RedisReply RedisConnection::command(std::initializer_list<std::string_view> args) {
  if (broken_) return {RedisReply::Status::Broken, "connection already failed", 0, {}};
  std::vector<const char*> argv;
  std::vector<std::size_t> lengths;
  argv.reserve(args.size());
  lengths.reserve(args.size());
  for (std::string_view arg : args) {
    argv.push_back(arg.data());
    lengths.push_back(arg.size());
  }
  const SigpipeBlock no_sigpipe;
  std::unique_ptr<redisReply, ReplyDeleter> reply(static_cast<redisReply*>(
      redisCommandArgv(context_, static_cast<int>(argv.size()), argv.data(), lengths.data())));
  if (reply == nullptr) {
    broken_ = true;
    // errstr says "Resource temporarily unavailable" for a timeout; say so plainly.
    const bool timed_out =
        context_->err == REDIS_ERR_IO && (errno == EAGAIN || errno == EWOULDBLOCK);
    return {RedisReply::Status::Broken, timed_out ? "timed out" : context_->errstr, 0, {}};
  }
  return convert(*reply);
}

}  // namespace kreg::cache
