#include "registry/remote_tier.hpp"

#include "core/log.hpp"
#include "registry/storage_key.hpp"

namespace kreg::registry {

RemoteTier::RemoteTier(cache::RemoteConfig config, Counters& counters)
    : remote_(std::move(config)),
      salt_(storage_salt()),
      counters_(counters),
      writer_([this](const std::string& key, const std::string& payload) {
        if (remote_.store(key, payload) == cache::RemoteCache::Outcome::Failed) {
          counters_.add(Counter::RemoteErrors);
        }
      }) {}

void RemoteTier::rejected(const BuildRequest& request, const std::string& why) noexcept {
  counters_.add(Counter::RemoteRejected);
  try {
    // A bad value may be an attack; say so once at warn level, then only at debug.
    const bool first = !warned_rejected_.exchange(true);
    core::log_write(first ? core::LogLevel::Warn : core::LogLevel::Debug,
                    "remote cache " + remote_.config().url + ": refused the value for '" +
                        request.key + "' (" + why + "); compiling");
  } catch (...) {
    // Logging must not turn a cache problem into a failure.
  }
}

std::optional<Found> RemoteTier::find(const BuildRequest& request) {
  cache::RemoteCache::Loaded loaded = remote_.load(storage_key(salt_, request));
  if (loaded.outcome == cache::RemoteCache::Outcome::Skipped) return std::nullopt;
  std::optional<Found> found;
  switch (loaded.outcome) {
    case cache::RemoteCache::Outcome::Hit:
      found = decode_found(loaded.payload, request, Origin::Remote);
      if (!found) rejected(request, "not a successful compile of this request");
      break;
    case cache::RemoteCache::Outcome::Rejected: rejected(request, loaded.why); break;
    case cache::RemoteCache::Outcome::Failed: counters_.add(Counter::RemoteErrors); break;
    default: break;
  }
  if (!found && loaded.outcome != cache::RemoteCache::Outcome::Failed) {
    counters_.add(Counter::RemoteMisses);
  }
  return found;
}

void RemoteTier::store(const BuildRequest& request, const Found& found) noexcept {
  try {
    if (remote_.config().read_only || found.origin != Origin::Compiled) return;
    writer_.submit(storage_key(salt_, request), encode_found(found));
  } catch (...) {
    // Out of memory while building the key or payload: the binary is simply not sent.
  }
}

std::optional<std::string> RemoteTier::find_record(const std::string& key) {
  cache::RemoteCache::Loaded loaded = remote_.load(key);
  switch (loaded.outcome) {
    case cache::RemoteCache::Outcome::Hit: return std::move(loaded.payload);
    case cache::RemoteCache::Outcome::Rejected: counters_.add(Counter::RemoteRejected); break;
    case cache::RemoteCache::Outcome::Failed: counters_.add(Counter::RemoteErrors); break;
    default: break;
  }
  return std::nullopt;
}

void RemoteTier::store_record(const std::string& key, const std::string& payload) noexcept {
  try {
    if (!remote_.config().read_only) writer_.submit(key, payload);
  } catch (...) {
    // Out of memory: the record is simply not sent.
  }
}

}  // namespace kreg::registry
