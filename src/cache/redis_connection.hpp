#pragma once
// One connection to a Redis server (hiredis, blocking, with timeouts): move-only, closed by
// its destructor. Not for use by two threads at once; RemoteCache keeps a pool of them.
//
// Timeouts: `connect` bounds the TCP or Unix connect; `operation` bounds each wait on the
// socket (a send, or a part of a reply), so a server that stops answering costs about one
// `operation` timeout. A host name is resolved before the connect timeout starts: give an
// address or a name the resolver answers quickly.

#include "cache/remote_config.hpp"

#include <chrono>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

struct redisContext;

namespace kreg::cache {

struct RedisReply {
  enum class Status {
    Value,    // a string (text) or an integer (integer)
    Nil,      // no such key
    Ok,       // a status reply ("OK", "PONG") in text
    Array,    // items
    Refused,  // the server answered with an error, in text ("OOM command not allowed ...")
    Broken,   // no answer: timeout, reset, protocol error; the connection is unusable
  };
  Status status = Status::Broken;
  std::string text;
  long long integer = 0;
  std::vector<std::string> items;
};

class RedisConnection {
 public:
  // A connection that has selected the endpoint's database, or null with `why` set.
  static std::unique_ptr<RedisConnection> open(const RemoteEndpoint& endpoint,
                                               std::chrono::milliseconds connect_timeout,
                                               std::chrono::milliseconds operation_timeout,
                                               std::string& why);
  ~RedisConnection();
  RedisConnection(const RedisConnection&) = delete;
  RedisConnection& operator=(const RedisConnection&) = delete;

  // Sends one command, its arguments binary-safe, and reads the reply.
  RedisReply command(std::initializer_list<std::string_view> args);
  // After a Broken reply every later command is Broken too: drop the connection.
  bool broken() const noexcept { return broken_; }

 private:
  explicit RedisConnection(redisContext* context) : context_(context) {}

  redisContext* context_;
  bool broken_ = false;
};

}  // namespace kreg::cache
