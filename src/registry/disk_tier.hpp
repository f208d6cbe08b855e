#pragma once
// The disk cache (cache/disk_cache.hpp) as a tier. Keys are the request's key text salted
// with NVRTC's identity (storage_key.hpp); the chain gives it only what that key covers, and
// it writes in the background (cache/background_writer.hpp).

#include "cache/background_writer.hpp"
#include "cache/disk_cache.hpp"
#include "registry/counters.hpp"
#include "registry/storage_key.hpp"
#include "registry/tier.hpp"

#include <filesystem>
#include <memory>
#include <string>

namespace kreg::registry {

class DiskTier final : public Tier {
 public:
  // Null when the folder cannot be used: then there is no disk tier at all.
  static std::unique_ptr<DiskTier> open(const std::filesystem::path& dir, std::uint64_t max_bytes);

  std::string_view name() const noexcept override { return "disk"; }
  bool keyed() const noexcept override { return true; }
  std::optional<Timing> timing() const noexcept override {
    return Timing{Counter::DiskHits, Counter::DiskNs, false};
  }
  std::optional<Found> find(const BuildRequest& request) override;
  void store(const BuildRequest& request, const Found& found) noexcept override;
  void flush() override { writer_.flush(); }
  std::optional<std::string> find_record(const std::string& key) override {
    return cache_->load(key);
  }
  void store_record(const std::string& key, const std::string& payload) noexcept override;

  const std::filesystem::path& dir() const noexcept { return cache_->dir(); }

 private:
  explicit DiskTier(std::unique_ptr<cache::DiskCache> cache);
  std::string disk_key(const BuildRequest& request) const { return storage_key(salt_, request); }

  std::unique_ptr<cache::DiskCache> cache_;
  cache::BackgroundWriter writer_;  // after cache_: destroyed first, writing what is queued
  std::string salt_;                // storage_salt(): part of every key
};

}  // namespace kreg::registry
