// Counts stay exact however many threads count, live at once, or come and go.
#include "core/sharded_counter.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace kreg::core {
namespace {

void count_on_threads(ShardedCounter& counter, int threads, int each) {
  std::atomic<int> ready{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      // All alive at once, so that more threads count than there are owned shards.
      ready.fetch_add(1);
      while (ready.load() < threads) std::this_thread::yield();
      for (int i = 0; i < each; ++i) counter.add();
    });
  }
  for (std::thread& t : pool) t.join();
}

TEST(ShardedCounter, MoreLiveThreadsThanOwnedShardsCountExactly) {
  ShardedCounter counter;
  count_on_threads(counter, kOwnedShards + 3 * kSharedShards, 5000);
  EXPECT_EQ(counter.total(), std::uint64_t{kOwnedShards + 3 * kSharedShards} * 5000);
}

TEST(ShardedCounter, ShardsOfExitedThreadsAreReusedWithoutLosingCounts) {
  ShardedCounter counter;
  for (int wave = 0; wave < 6; ++wave) count_on_threads(counter, 40, 2000);
  counter.add(7);
  EXPECT_EQ(counter.total(), std::uint64_t{6} * 40 * 2000 + 7);
}

TEST(ShardedCounter, ReadersSeeOnlyGrowingTotals) {
  ShardedCounter counter;
  std::atomic<bool> done{false};
  std::thread reader([&] {
    std::uint64_t last = 0;
    while (!done.load()) {
      const std::uint64_t now = counter.total();
      EXPECT_GE(now, last);
      last = now;
    }
  });
  count_on_threads(counter, 8, 20000);
  done = true;
  reader.join();
  EXPECT_EQ(counter.total(), std::uint64_t{8} * 20000);
}

}  // namespace
}  // namespace kreg::core
