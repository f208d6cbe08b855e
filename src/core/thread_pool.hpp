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
  explicit ThreadPool(std::size_t threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  std::size_t size() const noexcept { return workers_.size(); }  // may be 0: see run_all
  void submit(std::function<void()> task);
  // Runs every task on the pool and returns when all have finished.
  void run_all(std::vector<std::function<void()>> tasks);

 private:
  void work();

  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::function<void()>> queue_;
  bool stopping_ = false;
  std::vector<std::jthread> workers_;
};

}  // namespace kreg::core
