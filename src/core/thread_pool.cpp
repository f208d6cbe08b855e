#include "core/thread_pool.hpp"

#include "core/log.hpp"

#include <algorithm>
#include <latch>
#include <string>
#include <system_error>

namespace kreg::core {

ThreadPool::ThreadPool(std::size_t threads) : limit_(threads == 0 ? 1 : threads) {}

bool ThreadPool::grow(std::size_t wanted) {
  std::lock_guard lock(grow_mutex_);  // two prewarms may start at once
  wanted = std::min(wanted, limit_);
  try {
    while (workers_.size() < wanted) workers_.emplace_back([this] { work(); });
  } catch (const std::exception&) {
    // Out of threads (a ulimit, a cgroup) or memory: work with those that started, and try
    // again next time; with none, run_all runs the tasks on the caller's thread.
    log_write(LogLevel::Warn,
              "could not start every prewarm thread; using " + std::to_string(workers_.size()));
  }
  return !workers_.empty();
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  ready_.notify_all();
  workers_.clear();  // joins
}

void ThreadPool::submit(std::function<void()> task) {
  {
    std::lock_guard lock(mutex_);
    queue_.push_back(std::move(task));
  }
  ready_.notify_one();
}

void ThreadPool::run_all(std::vector<std::function<void()>> tasks) {
  if (!grow(tasks.size())) {
    for (auto& task : tasks) {
      try {
        task();
      } catch (...) {
        log_write(LogLevel::Error, "a pooled task threw unexpectedly; ignored");
      }
    }
    return;
  }
  std::latch done(static_cast<std::ptrdiff_t>(tasks.size()));
  for (auto& task : tasks) {
    submit([&done, task = std::move(task)] {
      try {
        task();
      } catch (...) {
        log_write(LogLevel::Error, "a pooled task threw unexpectedly; ignored");
      }
      done.count_down();
    });
  }
  done.wait();
}

void ThreadPool::work() {
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock lock(mutex_);
      ready_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, and nothing left to do
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    try {
      task();
    } catch (...) {
      log_write(LogLevel::Error, "worker task threw unexpectedly; ignored");
    }
  }
}

}  // namespace kreg::core
