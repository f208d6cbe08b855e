#include "registry/build_chain.hpp"

#include "core/env.hpp"
#include "core/log.hpp"
#include "core/stopwatch.hpp"
#include "registry/compile_tier.hpp"
#include "registry/disk_tier.hpp"
#include "registry/key_coverage.hpp"
#include "registry/precompiled_tier.hpp"
#include "registry/remote_tier.hpp"

#include <kreg/error.hpp>

namespace kreg::registry {

BuildChain::BuildChain(const RegistryOptions& options, Counters& counters, CompileWorkers& workers,
                       CompilerWarmUp* warm_up)
    : counters_(counters) {
  if (options.precompiled && core::env_flag("KREG_PRECOMPILED", true)) {
    tiers_.push_back(
        std::make_unique<PrecompiledTier>(core::env_flag("KREG_PRECOMPILED_CONSTANTS", true)));
  }
  if (options.disk_cache && core::env_flag("KREG_DISK_CACHE", true)) {
    std::unique_ptr<DiskTier> disk = DiskTier::open(
        options.cache_dir.empty() ? cache::DiskCache::default_dir() : options.cache_dir,
        options.cache_max_bytes != 0 ? options.cache_max_bytes
                                     : cache::DiskCache::default_max_bytes());
    if (disk) {
      disk_ = disk.get();
      tiers_.push_back(std::move(disk));
    }
  }
  if (std::optional<cache::RemoteConfig> remote = cache::remote_config(options.remote)) {
    tiers_.push_back(std::make_unique<RemoteTier>(std::move(*remote), counters));
  }
  tiers_.push_back(std::make_unique<CompileTier>(counters, workers, warm_up));
}

BuildChain::~BuildChain() = default;

Found BuildChain::build(const BuildRequest& request) {
  // A request that lets NVRTC read files of the caller's choice is never looked up by key.
  const bool covered = key_can_cover(request.source, request.request);
  for (std::size_t i = 0; i < tiers_.size(); ++i) {
    Tier& tier = *tiers_[i];
    if (tier.keyed() && !covered) continue;
    const core::Stopwatch watch;
    std::optional<Found> found = tier.find(request);
    if (const std::optional<Tier::Timing> timing = tier.timing()) {
      const std::uint64_t ns = watch.nanoseconds();
      if (found || timing->misses_too) counters_.add(timing->ns, ns);
      if (found) {
        counters_.add(timing->hits);
        found->ms = static_cast<double>(ns) / 1e6;
      }
    }
    if (!found) continue;
    offer(i, request, *found, covered);
    return std::move(*found);
  }
  // The compile tier answers every request; reaching here is a bug, reported, not fatal.
  throw Error(ErrorCode::CompileError, "no tier could build '" + std::string(request.label) + "'");
}

void BuildChain::offer(std::size_t from, const BuildRequest& request, const Found& found,
                       bool covered) noexcept {
  std::optional<std::string> uncovered;  // why the key cannot hold the binary, once known
  for (std::size_t earlier = 0; earlier < from; ++earlier) {
    Tier& tier = *tiers_[earlier];
    if (tier.keyed()) {
      if (!covered) continue;
      try {
        // A compile that read a file the key does not hold could change under the same key.
        if (!uncovered) {
          uncovered = uncovered_read(request.request, found.result);
          if (!uncovered->empty()) {
            core::log_write(core::LogLevel::Info,
                            "not caching '" + request.key + "' by key: " + *uncovered);
          }
        }
      } catch (...) {
        return;  // out of memory: nothing is kept
      }
      if (!uncovered->empty()) continue;
    }
    tier.store(request, found);
  }
}

std::optional<std::string> BuildChain::find_record(const std::string& key) {
  for (std::size_t i = 0; i < tiers_.size(); ++i) {
    if (!tiers_[i]->keyed()) continue;
    std::optional<std::string> found = tiers_[i]->find_record(key);
    if (!found) continue;
    for (std::size_t earlier = 0; earlier < i; ++earlier) {
      if (tiers_[earlier]->keyed()) tiers_[earlier]->store_record(key, *found);
    }
    return found;
  }
  return std::nullopt;
}

void BuildChain::store_record(const std::string& key, const std::string& payload) noexcept {
  for (const std::unique_ptr<Tier>& tier : tiers_) {
    if (tier->keyed()) tier->store_record(key, payload);
  }
}

void BuildChain::flush() {
  for (const std::unique_ptr<Tier>& tier : tiers_) tier->flush();
}

std::filesystem::path BuildChain::cache_dir() const {
  return disk_ != nullptr ? disk_->dir() : std::filesystem::path();
}

}  // namespace kreg::registry
