#include "registry/compile_workers.hpp"

#include "compiler/worker_pool.hpp"
#include "core/env.hpp"
#include "core/log.hpp"

#include <algorithm>
#include <string>

namespace kreg::registry {
namespace {

// Below this many binaries to build, starting worker processes (each pays NVRTC's start-up,
// about 200 ms on an H200 host) costs more than it saves.
constexpr std::size_t kWorkerThreshold = 16;

}  // namespace

CompileWorkers::CompileWorkers(int option, unsigned threads) : option_(option), threads_(threads) {}

CompileWorkers::~CompileWorkers() = default;

std::size_t CompileWorkers::processes() const {
  int wanted = option_;
  if (auto value = core::env_string("KREG_COMPILE_PROCESSES")) {
    if (!core::env_flag("KREG_COMPILE_PROCESSES", true)) return 0;
    try {
      wanted = std::stoi(*value);
    } catch (const std::exception&) {
      core::log_write(core::LogLevel::Warn,
                      "KREG_COMPILE_PROCESSES='" + *value + "' is not a number; using the default");
    }
  }
  if (wanted == 0) return 0;
  return wanted < 0 ? threads_ : std::min<std::size_t>(static_cast<std::size_t>(wanted), threads_);
}

bool CompileWorkers::use_for(std::size_t binaries) {
  std::lock_guard lock(mutex_);
  if (pool_) return true;
  if (binaries < kWorkerThreshold) return false;
  const std::size_t count = processes();
  if (count == 0) return false;
  std::string executable = compiler::WorkerPool::find_executable();
  if (executable.empty()) {
    core::log_write(core::LogLevel::Debug,
                    "no kreg-nvrtc-worker found; prewarm compiles in-process");
    return false;
  }
  core::log_write(core::LogLevel::Debug, "prewarm compiles in up to " + std::to_string(count) +
                                             " worker processes of '" + executable + "'");
  pool_ = std::make_unique<compiler::WorkerPool>(std::move(executable), count);
  return true;
}

compiler::WorkerPool* CompileWorkers::pool() {
  std::lock_guard lock(mutex_);
  return pool_.get();
}

}  // namespace kreg::registry
