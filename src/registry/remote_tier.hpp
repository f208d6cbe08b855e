#pragma once
// The fleet's remote cache (cache/remote_cache.hpp) as a tier, after the disk tier: a hit
// has been checked (signature, checksum, full key) and decodes to a result that fits the
// request, and the chain then offers it to the disk tier to keep. A compile is written back
// in the background. Keys are the disk tier's (storage_key.hpp), and the chain's coverage
// rules keep a binary that depends on files outside its key off the wire.

#include "cache/background_writer.hpp"
#include "cache/remote_cache.hpp"
#include "registry/counters.hpp"
#include "registry/tier.hpp"

#include <atomic>
#include <string>

namespace kreg::registry {

class RemoteTier final : public Tier {
 public:
  RemoteTier(cache::RemoteConfig config, Counters& counters);

  std::string_view name() const noexcept override { return "remote"; }
  bool keyed() const noexcept override { return true; }
  std::optional<Timing> timing() const noexcept override {
    return Timing{Counter::RemoteHits, Counter::RemoteNs, true};
  }
  std::optional<Found> find(const BuildRequest& request) override;
  void store(const BuildRequest& request, const Found& found) noexcept override;
  void flush() override { writer_.flush(); }
  std::optional<std::string> find_record(const std::string& key) override;
  void store_record(const std::string& key, const std::string& payload) noexcept override;

 private:
  void rejected(const BuildRequest& request, const std::string& why) noexcept;

  cache::RemoteCache remote_;
  std::string salt_;  // storage_salt()
  Counters& counters_;
  std::atomic<bool> warned_rejected_{false};
  cache::BackgroundWriter writer_;  // last: destroyed first, writing what is queued
};

}  // namespace kreg::registry
