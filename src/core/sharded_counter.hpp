#pragma once
// A counter that many threads bump without sharing a cache line, so that counting hits
// does not serialize the lock-free lookup path.

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>

namespace kreg::core {

class ShardedCounter {
 public:
  void add(std::uint64_t n = 1) noexcept {
    shards_[shard()].value.fetch_add(n, std::memory_order_relaxed);
  }
  std::uint64_t total() const noexcept {
    std::uint64_t sum = 0;
    for (const Shard& s : shards_) sum += s.value.load(std::memory_order_relaxed);
    return sum;
  }

 private:
  static constexpr std::size_t kShards = 64;
  struct alignas(64) Shard {
    std::atomic<std::uint64_t> value{0};
  };

  static std::size_t shard() noexcept {
    static std::atomic<std::size_t> next{0};
    thread_local const std::size_t index = next.fetch_add(1, std::memory_order_relaxed) % kShards;
    return index;
  }

  std::array<Shard, kShards> shards_{};
};

}  // namespace kreg::core
