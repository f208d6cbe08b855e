#include "core/sharded_counter.hpp"

#include <bit>

namespace kreg::core {
namespace {

static_assert(kOwnedShards == 64, "the free owned shards are the bits of one word");

// The owned shards no living thread holds, one bit each. A word rather than a locked list:
// a thread's first count takes one compare-and-swap, and nothing is constructed, so nothing
// can be destroyed before the thread-exit destructors that hand shards back.
constinit std::atomic<std::uint64_t> free_shards{~std::uint64_t{0}};
constinit std::atomic<unsigned> next_shared{0};

// Hands an owned shard back when its thread exits. Release on the hand-back and acquire on
// the take order the exiting thread's last plain store before the next owner's first load.
struct ShardReturn {
  int shard = -1;
  ShardReturn() = default;
  ShardReturn(const ShardReturn&) = delete;
  ShardReturn& operator=(const ShardReturn&) = delete;
  ~ShardReturn() {
    if (shard < 0 || shard >= kOwnedShards) return;
    // Counts made later on this thread (by other thread-exit destructors) go to a shared
    // shard, since the owned one may already be another thread's.
    thread_shard = kOwnedShards + shard % kSharedShards;
    free_shards.fetch_or(std::uint64_t{1} << shard, std::memory_order_release);
  }
};

int take_shard() noexcept {
  std::uint64_t free = free_shards.load(std::memory_order_relaxed);
  while (free != 0) {
    const int shard = std::countr_zero(free);
    if (free_shards.compare_exchange_weak(free, free & ~(std::uint64_t{1} << shard),
                                          std::memory_order_acquire, std::memory_order_relaxed)) {
      return shard;
    }
  }
  return kOwnedShards +
         static_cast<int>(next_shared.fetch_add(1, std::memory_order_relaxed) % kSharedShards);
}

}  // namespace

thread_local constinit int thread_shard = -1;

int claim_thread_shard() noexcept {
  const int shard = take_shard();
  if (shard < kOwnedShards) {
    thread_local ShardReturn on_exit;
    on_exit.shard = shard;
  }
  thread_shard = shard;
  return shard;
}

}  // namespace kreg::core
