#include "core/thread_pool.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>

namespace kreg::core {
namespace {

TEST(ThreadPool, RunsEveryTaskAndWaits) {
  ThreadPool pool(3);
  std::atomic<int> sum{0};
  std::vector<std::function<void()>> tasks;
  for (int i = 1; i <= 100; ++i) tasks.emplace_back([&sum, i] { sum += i; });
  pool.run_all(std::move(tasks));
  EXPECT_EQ(sum.load(), 5050);
}

TEST(ThreadPool, ThrowingTaskDoesNotStopTheOthers) {
  ThreadPool pool(2);
  std::atomic<int> ran{0};
  std::vector<std::function<void()>> tasks;
  tasks.emplace_back([] { throw std::runtime_error("boom"); });
  for (int i = 0; i < 10; ++i) tasks.emplace_back([&ran] { ++ran; });
  pool.run_all(std::move(tasks));
  EXPECT_EQ(ran.load(), 10);
}

TEST(ThreadPool, ZeroThreadsMeansOne) {
  ThreadPool pool(0);
  std::atomic<int> ran{0};
  pool.run_all(std::vector<std::function<void()>>(5, [&ran] { ++ran; }));
  EXPECT_EQ(ran.load(), 5);
  EXPECT_EQ(pool.size(), 1u);
}

TEST(ThreadPool, StartsOnlyTheThreadsItsWorkNeeds) {
  ThreadPool pool(8);
  EXPECT_EQ(pool.size(), 0u);
  std::atomic<int> ran{0};
  pool.run_all(std::vector<std::function<void()>>(2, [&ran] { ++ran; }));
  EXPECT_EQ(pool.size(), 2u);
  pool.run_all(std::vector<std::function<void()>>(20, [&ran] { ++ran; }));
  EXPECT_EQ(pool.size(), 8u);
  EXPECT_EQ(ran.load(), 22);
}

}  // namespace
}  // namespace kreg::core
