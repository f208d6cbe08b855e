#pragma once
// Compile worker processes (kreg-nvrtc-worker). NVRTC holds a process-wide lock for most of
// a compile, so threads of one process stop scaling at about four; separate processes do
// not share it. Workers start on demand, up to the pool's size, stay alive for the pool's
// life, and exit when it closes their sockets.

#include "compiler/nvrtc_compiler.hpp"

#include <sys/types.h>

#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace kreg::compiler {

class WorkerPool {
 public:
  // A worker that takes longer than `timeout_ms` to answer one request is retired (NVRTC
  // itself never takes that long; a worker stuck that long is broken).
  //
  // `identity` is the NVRTC identity workers must have (compiler::identity() by default); a
  // worker with another one refuses to start.
  WorkerPool(std::string executable, std::size_t size, int timeout_ms = 600'000,
             std::string identity = {});
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Compiles in a worker. std::nullopt when no worker could (none would start, or one died
  // or answered nonsense): the caller then compiles in-process. Never throws for that.
  std::optional<Result> compile(const Request& request);

  std::size_t size() const noexcept { return size_; }
  std::size_t started() const;  // worker processes started so far, replacements included

  // The worker executable: KREG_COMPILE_WORKER, else beside the running program, else the
  // installed or built one; empty if none is executable.
  static std::string find_executable();

 private:
  struct Worker {
    pid_t pid = -1;
    int fd = -1;
  };
  std::optional<Worker> spawn();
  // Returns a worker after a request: back to the idle list, or retired if it failed.
  void release(Worker worker, bool healthy) noexcept;
  static void stop(Worker worker) noexcept;

  std::string executable_;
  std::size_t size_;
  int timeout_ms_;
  std::string identity_;
  mutable std::mutex mutex_;
  std::condition_variable idle_ready_;
  std::vector<Worker> idle_;
  std::size_t live_ = 0;  // idle plus busy
  std::size_t started_ = 0;
  std::size_t failures_ = 0;  // consecutive; past a few, the pool stops trying
};

}  // namespace kreg::compiler
