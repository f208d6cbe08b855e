#include "cache/remote_cache.hpp"

#include "cache/signed_value.hpp"
#include "core/log.hpp"
#include "core/stopwatch.hpp"

#include <chrono>

namespace kreg::cache {
namespace {

// Idle connections kept for reuse; more are opened when more threads ask at once.
constexpr std::size_t kMaxIdle = 32;

std::int64_t now_ns() noexcept {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

RemoteCache::RemoteCache(RemoteConfig config) : config_(std::move(config)) {}

RemoteCache::~RemoteCache() = default;

bool RemoteCache::backing_off(bool write) const noexcept {
  const std::int64_t now = now_ns();
  return now < reads_resume_at_.load(std::memory_order_relaxed) ||
         (write && now < writes_resume_at_.load(std::memory_order_relaxed));
}

void RemoteCache::failed(bool write_only, const std::string& why) noexcept {
  const std::int64_t resume =
      now_ns() + std::chrono::duration_cast<std::chrono::nanoseconds>(config_.backoff).count();
  writes_resume_at_.store(resume, std::memory_order_relaxed);
  if (!write_only) reads_resume_at_.store(resume, std::memory_order_relaxed);
  const bool first = !down_.exchange(true);
  try {
    const std::string message = "remote cache " + config_.url + ": " + why + "; " +
                                (write_only ? "not writing" : "skipping it") + " for " +
                                std::to_string(config_.backoff.count()) + " ms";
    core::log_write(first ? core::LogLevel::Warn : core::LogLevel::Debug, message);
  } catch (...) {
    // Logging must not turn a cache problem into a failure.
  }
}

void RemoteCache::succeeded() noexcept {
  if (down_.load(std::memory_order_relaxed)) down_.store(false, std::memory_order_relaxed);
}

RedisReply RemoteCache::run(std::initializer_list<std::string_view> args, bool write,
                            bool honour_backoff) {
  if (honour_backoff && backing_off(write))
    return {RedisReply::Status::Broken, "backing off", 0, {}};
  std::unique_ptr<RedisConnection> connection;
  {
    std::lock_guard lock(idle_mutex_);
    if (!idle_.empty()) {
      connection = std::move(idle_.back());
      idle_.pop_back();
    }
  }
  const bool reused = connection != nullptr;
  RedisReply reply;
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (connection == nullptr) {
      std::string why;
      connection = RedisConnection::open(config_.endpoint, config_.connect_timeout,
                                         config_.operation_timeout, why);
      if (connection == nullptr) {
        failed(false, why);
        return {RedisReply::Status::Broken, why, 0, {}};
      }
    }
    reply = connection->command(args);
    if (reply.status != RedisReply::Status::Broken) break;
    connection.reset();
    // A kept connection the server closed (it restarted, or dropped idle clients) is not an
    // outage: try once more on a new one. A timeout is: waiting twice would double its cost.
    if (!reused || attempt > 0 || reply.text == "timed out") {
      failed(false, reply.text);
      return reply;
    }
  }
  if (reply.status == RedisReply::Status::Refused && write) {
    failed(true, "write refused: " + reply.text);
  } else {
    succeeded();
  }
  std::lock_guard lock(idle_mutex_);
  if (idle_.size() < kMaxIdle) idle_.push_back(std::move(connection));
  return reply;
}

RemoteCache::Loaded RemoteCache::open_entry(const std::string& value, DecodedEntry& entry) const {
  std::string why;
  const std::optional<std::string_view> inner = open_value(value, config_.secret, &why);
  std::optional<DecodedEntry> decoded;
  if (inner) decoded = decode_entry(*inner, &why);
  if (!decoded) return {Outcome::Rejected, {}, why};
  entry = std::move(*decoded);
  return {Outcome::Hit, {}, {}};
}

RemoteCache::Loaded RemoteCache::load_digest(std::string_view digest, DecodedEntry& entry) {
  if (backing_off(false)) return {Outcome::Skipped, {}, {}};
  const RedisReply reply = run({"GET", redis_key(digest)}, false, true);
  switch (reply.status) {
    case RedisReply::Status::Nil: return {Outcome::Miss, {}, {}};
    case RedisReply::Status::Value: break;
    default: return {Outcome::Failed, {}, reply.text.empty() ? "unexpected reply" : reply.text};
  }
  Loaded loaded = open_entry(reply.text, entry);
  if (loaded.outcome == Outcome::Hit && key_digest(entry.key) != digest) {
    return {Outcome::Rejected, {}, "holds another key"};
  }
  return loaded;
}

RemoteCache::Loaded RemoteCache::load(std::string_view key) {
  DecodedEntry entry;
  Loaded loaded = load_digest(key_digest(key), entry);
  if (loaded.outcome != Outcome::Hit) return loaded;
  // The same digest, another key: astronomically unlikely by accident, so a forgery.
  if (entry.key != key) return {Outcome::Rejected, {}, "holds another key"};
  loaded.payload = std::move(entry.payload);
  return loaded;
}

RemoteCache::Outcome RemoteCache::store(std::string_view key, std::string_view payload) {
  if (config_.read_only || backing_off(true)) return Outcome::Skipped;
  const std::string value = seal_value(encode_entry(key, payload), config_.secret);
  if (value.empty() || value.size() > kMaxEntryBytes) return Outcome::Skipped;
  const std::string redis = redis_key(key_digest(key));
  const std::string ttl = std::to_string(config_.ttl.count());
  const RedisReply reply = config_.ttl.count() > 0
                               ? run({"SET", redis, value, "EX", ttl}, true, true)
                               : run({"SET", redis, value}, true, true);
  return reply.status == RedisReply::Status::Ok ? Outcome::Hit : Outcome::Failed;
}

std::optional<double> RemoteCache::ping(std::string& why) {
  const core::Stopwatch watch;
  const RedisReply reply = run({"PING"}, false, false);
  if (reply.status != RedisReply::Status::Ok) {
    why = reply.text.empty() ? "unexpected reply" : reply.text;
    return std::nullopt;
  }
  return static_cast<double>(watch.nanoseconds()) / 1e6;
}

RedisReply RemoteCache::query(std::initializer_list<std::string_view> args) {
  return run(args, false, false);
}

}  // namespace kreg::cache
