#include "registry/build_chain.hpp"

#include "core/env.hpp"
#include "registry/compile_tier.hpp"
#include "registry/disk_tier.hpp"
#include "registry/precompiled_tier.hpp"
#include "registry/remote_tier.hpp"

#include <kreg/error.hpp>

namespace kreg::registry {

BuildChain::BuildChain(const RegistryOptions& options, Counters& counters, CompileWorkers& workers,
                       CompilerWarmUp* warm_up) {
  if (options.precompiled && core::env_flag("KREG_PRECOMPILED", true)) {
    tiers_.push_back(std::make_unique<PrecompiledTier>(
        counters, core::env_flag("KREG_PRECOMPILED_CONSTANTS", true)));
  }
  if (options.disk_cache && core::env_flag("KREG_DISK_CACHE", true)) {
    std::unique_ptr<DiskTier> disk = DiskTier::open(
        options.cache_dir.empty() ? cache::DiskCache::default_dir() : options.cache_dir,
        options.cache_max_bytes != 0 ? options.cache_max_bytes
                                     : cache::DiskCache::default_max_bytes(),
        counters);
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
  for (std::size_t i = 0; i < tiers_.size(); ++i) {
    std::optional<Found> found = tiers_[i]->find(request);
    if (!found) continue;
    for (std::size_t earlier = 0; earlier < i; ++earlier) tiers_[earlier]->store(request, *found);
    return std::move(*found);
  }
  // The compile tier answers every request; reaching here is a bug, reported, not fatal.
  throw Error(ErrorCode::CompileError, "no tier could build '" + std::string(request.label) + "'");
}

void BuildChain::flush() {
  for (const std::unique_ptr<Tier>& tier : tiers_) tier->flush();
}

std::filesystem::path BuildChain::cache_dir() const {
  return disk_ != nullptr ? disk_->dir() : std::filesystem::path();
}

}  // namespace kreg::registry
