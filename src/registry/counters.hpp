#pragma once
// The registry's counters, one per Counter, from which Stats is filled. Each is sharded so
// that counting memory hits, which every `get` does, never makes threads share a cache line.

#include <kreg/types.hpp>

#include "core/sharded_counter.hpp"

#include <array>
#include <cstddef>
#include <cstdint>

namespace kreg::registry {

// One per field of Stats, in the order of stats_fields(): counter i fills field i, a time
// field from nanoseconds.
enum class Counter : std::size_t {
  MemoryHits,
  DiskHits,
  PrecompiledHits,
  Compiles,
  WorkerCompiles,
  PchCreations,
  PchUses,
  Failures,
  Loads,
  CompileNs,
  DiskNs,
  PrecompiledNs,
  LoadNs,
  RemoteHits,
  RemoteMisses,
  RemoteRejected,
  RemoteErrors,
  RemoteNs,
  Count
};

class Counters {
 public:
  void add(Counter counter, std::uint64_t n = 1) noexcept {
    counters_[static_cast<std::size_t>(counter)].add(n);
  }
  std::uint64_t total(Counter counter) const noexcept {
    return counters_[static_cast<std::size_t>(counter)].total();
  }
  Stats stats() const noexcept;

 private:
  std::array<core::ShardedCounter, static_cast<std::size_t>(Counter::Count)> counters_{};
};

}  // namespace kreg::registry
