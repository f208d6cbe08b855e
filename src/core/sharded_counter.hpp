#pragma once
// A counter that many threads bump without sharing a cache line, so that counting hits
// does not serialize the lock-free lookup path.
//
// Each thread is given a shard of its own while it lives (the same index in every counter),
// so a bump is a plain load and store, not a locked read-modify-write: the lookup path
// counts every hit, and a locked add would be its most expensive instruction. Threads past
// the owned shards, and a thread that is exiting, share the last few shards and add
// atomically.

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>

namespace kreg::core {

inline constexpr int kOwnedShards = 64;
inline constexpr int kSharedShards = 8;

// This thread's shard: below kOwnedShards, one no other living thread writes; from
// kOwnedShards on, one that threads share; -1 before the first count.
extern thread_local constinit int thread_shard;
// Gives the calling thread its shard and returns it (thread_shard afterwards).
int claim_thread_shard() noexcept;

class ShardedCounter {
 public:
  void add(std::uint64_t n = 1) noexcept {
    int shard = thread_shard;
    if (shard < 0) [[unlikely]]
      shard = claim_thread_shard();
    std::atomic<std::uint64_t>& value = shards_[static_cast<std::size_t>(shard)].value;
    if (shard < kOwnedShards) {
      // Only this thread writes this shard; readers see either value, never a torn one.
      value.store(value.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
    } else {
      value.fetch_add(n, std::memory_order_relaxed);
    }
  }
  std::uint64_t total() const noexcept {
    std::uint64_t sum = 0;
    for (const Shard& s : shards_) sum += s.value.load(std::memory_order_relaxed);
    return sum;
  }

 private:
  struct alignas(64) Shard {
    std::atomic<std::uint64_t> value{0};
  };

  std::array<Shard, kOwnedShards + kSharedShards> shards_{};
};

}  // namespace kreg::core
