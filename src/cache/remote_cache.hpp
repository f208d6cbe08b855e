#pragma once
// The fleet's Redis server as a cache of entries. Keys are the key prefix and the digest
// of the full key (key_digest); values are entries (entry.hpp) sealed for travel
// (signed_value.hpp). A value is used only if it opens (signature), decodes (checksum) and
// holds exactly the key asked for: anything else is a miss.
//
// Fail open: a failure (no connection, a timeout, a broken reply) makes every call skip the
// server for the back-off period, with one warning per outage; a refused write (the server
// is full, or read-only) skips writes only. Nothing here throws, and no call waits much
// longer than one connect timeout plus one operation timeout.

#include "cache/entry.hpp"
#include "cache/redis_connection.hpp"
#include "cache/remote_config.hpp"

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kreg::cache {

class RemoteCache {
 public:
  explicit RemoteCache(RemoteConfig config);
  ~RemoteCache();
  RemoteCache(const RemoteCache&) = delete;
  RemoteCache& operator=(const RemoteCache&) = delete;

  enum class Outcome {
    Hit,
    Miss,      // no value under the key
    Rejected,  // a value that is not a good entry for the key, or not signed as it must be
    Failed,    // the server did not answer, or answered with an error
    Skipped,   // not asked: backing off after a failure, or a write in read-only mode
  };
  struct Loaded {
    Outcome outcome = Outcome::Miss;
    std::string payload;
    std::string why;  // Rejected or Failed: what happened
  };
  // The payload stored under `key`.
  Loaded load(std::string_view key);
  // The entry under a digest, whatever its key (for pulling what a manifest names): the
  // digest of the entry's key must be `digest`.
  Loaded load_digest(std::string_view digest, DecodedEntry& entry);
  // Writes `payload` under `key`: Hit when stored.
  Outcome store(std::string_view key, std::string_view payload);

  // PING's round trip in milliseconds, or std::nullopt with `why` set. Ignores the back-off.
  std::optional<double> ping(std::string& why);
  // A command's reply, for the CLI's statistics (INFO, DBSIZE, SCAN). Ignores the back-off.
  RedisReply query(std::initializer_list<std::string_view> args);

  const RemoteConfig& config() const noexcept { return config_; }
  std::string redis_key(std::string_view digest) const {
    return config_.key_prefix + std::string(digest);
  }

 private:
  // Runs one command on a pooled connection; records a failure and starts the back-off.
  RedisReply run(std::initializer_list<std::string_view> args, bool write, bool honour_backoff);
  bool backing_off(bool write) const noexcept;
  void failed(bool write_only, const std::string& why) noexcept;
  void succeeded() noexcept;
  Loaded open_entry(const std::string& value, DecodedEntry& entry) const;

  RemoteConfig config_;
  std::mutex idle_mutex_;
  std::vector<std::unique_ptr<RedisConnection>> idle_;
  // Steady-clock nanoseconds until which reads (or writes) are skipped.
  std::atomic<std::int64_t> reads_resume_at_{0};
  std::atomic<std::int64_t> writes_resume_at_{0};
  std::atomic<bool> down_{false};  // warned of the current outage already
};

}  // namespace kreg::cache
