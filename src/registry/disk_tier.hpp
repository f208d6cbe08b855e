#pragma once
// The disk cache (cache/disk_cache.hpp) as a tier. Keys are the request's text salted with
// NVRTC's identity; a binary is stored only when that key covers every file its compile read
// (key_coverage.hpp), and written in the background (cache/background_writer.hpp).

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
  static std::unique_ptr<DiskTier> open(const std::filesystem::path& dir, std::uint64_t max_bytes,
                                        Counters& counters);

  std::string_view name() const noexcept override { return "disk"; }
  std::optional<Found> find(const BuildRequest& request) override;
  void store(const BuildRequest& request, const Found& found) noexcept override;
  void flush() override { writer_.flush(); }

  const std::filesystem::path& dir() const noexcept { return cache_->dir(); }

 private:
  DiskTier(std::unique_ptr<cache::DiskCache> cache, Counters& counters);
  std::string disk_key(const BuildRequest& request) const { return storage_key(salt_, request); }

  std::unique_ptr<cache::DiskCache> cache_;
  cache::BackgroundWriter writer_;  // after cache_: destroyed first, writing what is queued
  std::string salt_;                // storage_salt(): part of every key
  Counters& counters_;
};

}  // namespace kreg::registry
