#pragma once
// The compile worker processes (compiler/worker_pool.hpp) a registry starts for large
// prewarms, and the rule for when they pay for themselves.

#include <cstddef>
#include <memory>
#include <mutex>

namespace kreg::compiler {
class WorkerPool;
}

namespace kreg::registry {

class CompileWorkers {
 public:
  // `option`: RegistryOptions::compile_processes; `threads`: the prewarm threads.
  CompileWorkers(int option, unsigned threads);
  ~CompileWorkers();
  CompileWorkers(const CompileWorkers&) = delete;
  CompileWorkers& operator=(const CompileWorkers&) = delete;

  // Starts the workers if a prewarm with `binaries` to build pays for them; whether they run.
  bool use_for(std::size_t binaries);
  // The running pool, or null.
  compiler::WorkerPool* pool();

 private:
  std::size_t processes() const;

  int option_;
  unsigned threads_;
  std::mutex mutex_;
  std::unique_ptr<compiler::WorkerPool> pool_;  // guarded by mutex_; once set, never reset
};

}  // namespace kreg::registry
