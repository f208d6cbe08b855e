#pragma once
// A fixed set of worker threads for prewarming. Tasks must not throw; the pool catches
// and drops anything that escapes so that a worker never terminates the process.

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace kreg::core {

class ThreadPool {
 public:
  // Starts no thread until run_all needs them, and then no more than it has tasks, up to
  // `threads`: a small prewarm in a fresh process should not pay for sixteen threads.
  explicit ThreadPool(std::size_t threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // Threads started so far. Not synchronized with a concurrent run_all: for tests.
  std::size_t size() const noexcept { return workers_.size(); }
  // Runs every task on the pool and returns when all have finished.
  void run_all(std::vector<std::function<void()>> tasks);

 private:
  void submit(std::function<void()> task);
  void work();
  // Starts threads up to min(wanted, limit); false if there are none at all.
  bool grow(std::size_t wanted);

  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::function<void()>> queue_;
  bool stopping_ = false;
  std::mutex grow_mutex_;  // guards workers_ while it grows
  const std::size_t limit_;
  std::vector<std::jthread> workers_;  // grown by the thread calling run_all only
};

}  // namespace kreg::core
