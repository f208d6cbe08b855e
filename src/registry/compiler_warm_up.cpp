#include "registry/compiler_warm_up.hpp"

#include "compiler/nvrtc_compiler.hpp"
#include "core/log.hpp"
#include "core/stopwatch.hpp"
#include "cuda/capture.hpp"
#include "cuda/memory.hpp"

#include <chrono>
#include <vector>

namespace kreg::registry {
namespace {

// Compiles a trivial kernel so that NVRTC's start-up is paid off the caller's path.
void warm_compiler(std::string arch) {
  try {
    if (arch.empty()) {
      const std::vector<int> supported = compiler::supported_archs();
      if (supported.empty()) return;
      arch = "sm_" + std::to_string(supported.front());
    }
    compiler::Request request;
    request.program_name = "kreg_warm_up.cu";
    request.source = "extern \"C\" __global__ void kreg_warm_up(int* p) { if (p) *p = 0; }\n";
    request.arch = arch;
    request.options = {"-minimal"};
    const core::Stopwatch watch;
    compiler::compile(request);
    core::log_write(core::LogLevel::Debug,
                    "NVRTC warmed up in " + std::to_string(watch.nanoseconds() / 1000000) + " ms");
  } catch (...) {
    // Warming is an optimization; any real problem resurfaces on the first compile.
  }
}

}  // namespace

void CompilerWarmUp::start(std::string arch, int device) {
  if (thread_.joinable()) return;
  thread_ = std::jthread([this, arch = std::move(arch), device](const std::stop_token& stop) {
    cuda::relax_capture_mode_on_this_thread();
    cuda::warm_pool(device, true);  // the driver's work, beside NVRTC's

    // NVRTC compiles one program at a time, so a compile asked for right after the registry
    // was made would only wait behind the warm-up and pay for both: such a compile starts
    // NVRTC itself. A program that compiles later finds it warm.
    constexpr std::chrono::milliseconds kGrace{10};
    {
      std::unique_lock lock(mutex_);
      if (wake_.wait_for(lock, stop, kGrace, [this] { return requested_; })) return;
    }
    if (!stop.stop_requested()) warm_compiler(arch);
  });
}

void CompilerWarmUp::compile_requested() {
  {
    const std::lock_guard lock(mutex_);
    requested_ = true;
  }
  wake_.notify_all();
}

}  // namespace kreg::registry
