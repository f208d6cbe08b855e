#pragma once
// What a CustomKernel shares with the pending launches it made: its definition, and one
// generated source per combination of argument kinds, dtypes and template arguments.

#include <kreg/custom_kernel.hpp>
#include <kreg/kernel.hpp>

#include "cuda/device.hpp"
#include "custom/codegen.hpp"

#include <array>
#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace kreg::custom {

// One generated source, and the kernel built from it on each GPU.
struct Variant {
  std::string key;  // what distinguishes it from the kernel's other variants
  Generated generated;
  // For a body with threadgroup arrays: the same kernel with them in dynamic shared memory
  // (KernelSpec::dynamic_threadgroup), built when they do not fit the 48 KiB a kernel may
  // hold statically; no source when the body has none.
  Generated dynamic;
  std::vector<InputKind> kinds;
  std::vector<InputParams> params;
  std::vector<Dtype> output_dtypes;

  // The kernel on a GPU: compiled and loaded through that GPU's custom-kernel registry on
  // first use. Throws CompileError with the numbered source.
  const Kernel& kernel(int device, const std::string& kernel_name);
  // The dynamic shared memory the kernel on `device` carves its threadgroup arrays from (0
  // for a kernel that holds them statically). Known once kernel() returned.
  std::size_t carved_bytes(int device) const noexcept {
    return carved_bytes_[static_cast<std::size_t>(device)].load(std::memory_order_acquire);
  }

 private:
  std::array<std::atomic<const Kernel*>, cuda::kMaxDevices> kernels_{};
  std::array<std::atomic<std::size_t>, cuda::kMaxDevices> carved_bytes_{};
  std::mutex mutex_;
};

struct CustomKernelState {
  std::string name;
  std::string what;  // "custom kernel 'name'", for messages
  std::vector<std::string> input_names;
  std::vector<std::string> output_names;
  // "custom kernel 'name': output 'out'", one per output: checked on every call.
  std::vector<std::string> output_whats;
  std::string body;
  CustomKernelOptions options;
  // Per input: whether the body subscripts it. A 0-d input it subscripts ("d[0]", as MLX's
  // CUDA kernels read scalars) is passed as a one-element array instead of a plain value.
  std::vector<bool> subscripted;

  std::mutex mutex;  // guards variants
  std::vector<std::shared_ptr<custom::Variant>> variants;
};

}  // namespace kreg::custom
