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
  // A new worker must say it is ready within `ready_timeout_ms` (start-up takes about 0.2 s);
  // one that does not, or that takes longer than `timeout_ms` to answer a request (NVRTC
  // itself never takes that long), or that announces a reply larger than any compile result,
  // is killed, and the pool starts no more workers: every later compile() comes back at once
  // for the caller to compile in-process. A worker that dies is replaced, up to a few times
  // in a row.
  //
  // `identity` is the NVRTC identity workers must have (compiler::identity() by default); a
  // worker with another one refuses to start.
  static constexpr int kReadyTimeoutMs = 3000;
  WorkerPool(std::string executable, std::size_t size, int timeout_ms = 600'000,
             std::string identity = {}, int ready_timeout_ms = kReadyTimeoutMs);
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
  enum class Health : unsigned char { Healthy, Died, Unresponsive };
  // A started worker that said it is ready, or std::nullopt (and `health` says why not).
  std::optional<Worker> spawn(Health& health);
  // Returns a worker after a request: back to the idle list, or retired if it failed.
  void release(Worker worker, Health health) noexcept;
  // Retires a worker; `kill` at once for one that stopped answering (it would not exit on
  // its own).
  static void stop(Worker worker, bool kill = false) noexcept;
  void warn_giving_up(const char* why) const noexcept;

  std::string executable_;
  std::size_t size_;
  int timeout_ms_;
  std::string identity_;
  int ready_timeout_ms_;
  mutable std::mutex mutex_;
  std::condition_variable idle_ready_;
  std::vector<Worker> idle_;
  std::size_t live_ = 0;  // idle plus busy
  std::size_t started_ = 0;
  std::size_t failures_ = 0;  // consecutive; past a few, the pool stops trying
  bool given_up_ = false;     // a worker stopped answering: no more are started
};

}  // namespace kreg::compiler
