#pragma once
// Where a binary that is not in memory comes from: tiers (tier.hpp) asked in order, first to
// last, as ccache asks local storage before remote ones. What one tier finds is offered to
// every tier before it, which keeps it if it can: a compile goes to the disk cache (in the
// background), a precompiled hit goes nowhere. A failed build is never offered.
//
// The order is precompiled -> disk -> remote -> compile, and the constructor is the only
// place that knows it: a remote hit is kept on disk, a compile goes to disk and to the remote
// cache. To add a tier (an HTTP store beside the remote one, say):
//   1. derive it from Tier, in a file of its own: find() misses rather than throws when it
//      cannot answer; store() keeps what it may and never throws; flush() if it writes late;
//      keyed() if it keeps binaries under the storage key (the chain then applies the
//      key-coverage rules to it), timing() for the counters of its hits and times;
//   2. give those Counter values, and their fields in <kreg/stats.hpp>'s table;
//   3. construct it in BuildChain's constructor at its place in the order.
// The registry needs no change: it only calls build(), flush() and cache_dir().

#include <kreg/types.hpp>

#include "registry/compile_workers.hpp"
#include "registry/compiler_warm_up.hpp"
#include "registry/counters.hpp"
#include "registry/tier.hpp"

#include <filesystem>
#include <memory>
#include <vector>

namespace kreg::registry {

class DiskTier;

class BuildChain {
 public:
  // The tiers `options` and the environment turn on. Counters, workers and the warm-up
  // (null when off) must outlive the chain.
  BuildChain(const RegistryOptions& options, Counters& counters, CompileWorkers& workers,
             CompilerWarmUp* warm_up);
  // A chain of the given tiers, asked in their order (tests).
  BuildChain(Counters& counters, std::vector<std::unique_ptr<Tier>> tiers)
      : counters_(counters), tiers_(std::move(tiers)) {}
  ~BuildChain();
  BuildChain(const BuildChain&) = delete;
  BuildChain& operator=(const BuildChain&) = delete;

  // The binary from the first tier that has it. Throws what the compile tier throws for a
  // build that fails.
  Found build(const BuildRequest& request);
  // Returns once every tier has written what it was given.
  void flush();
  // A record (tier.hpp's find_record) from the first keyed tier that has it, offered to the
  // keyed tiers before that one; std::nullopt when none has it.
  std::optional<std::string> find_record(const std::string& key);
  // Offers a record to every keyed tier.
  void store_record(const std::string& key, const std::string& payload) noexcept;
  // The disk cache folder; empty without a disk tier.
  std::filesystem::path cache_dir() const;

 private:
  // Offers `found`, from tier `from`, to each tier before it that may keep it.
  void offer(std::size_t from, const BuildRequest& request, const Found& found,
             bool covered) noexcept;

  Counters& counters_;
  std::vector<std::unique_ptr<Tier>> tiers_;
  const DiskTier* disk_ = nullptr;  // one of tiers_, if there is one
};

}  // namespace kreg::registry
