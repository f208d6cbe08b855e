#pragma once
/// \file
/// A loaded, launchable kernel.

#include <kreg/binary.hpp>
#include <kreg/types.hpp>

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

namespace kreg {

class Kernel;

namespace cuda {
class KernelFactory;   // the one maker of kernels
struct LaunchContext;  // what every kernel of a registry launches with
// The built-in ops' launch that overlaps the kernel before it (src/cuda/dependent_launch.hpp).
void launch_dependent(const Kernel& kernel, Dim3 grid, Dim3 block, std::size_t shared_bytes,
                      StreamRef stream, void** args, const std::size_t* sizes, std::size_t count);
// The opt-in to more than 48 KiB of shared memory a block (src/cuda/launch_limits.hpp).
void allow_dynamic_shared_memory(const Kernel& kernel, std::size_t dynamic_bytes, int device);
}  // namespace cuda

/// Resource use of a kernel on the registry's device, as the driver reports it.
struct KernelAttributes {
  int registers = 0;              ///< Registers per thread.
  int static_shared_bytes = 0;    ///< Statically allocated shared memory per block.
  int local_bytes = 0;            ///< Local memory (stack, spills) per thread.
  int constant_bytes = 0;         ///< User constant memory.
  int max_threads_per_block = 0;  ///< The largest block this kernel can be launched with.
};

/// One entry point of a compiled source, specialized by its constants and loaded into the
/// driver. Obtained from `Registry::get`; the registry owns it, and a reference to it stays
/// valid for the registry's whole life (even after its source is replaced).
class Kernel {
 public:
  Kernel(const Kernel&) = delete;
  Kernel& operator=(const Kernel&) = delete;
  ~Kernel();

  /// The entry name, e.g. "elementwise_add_f32".
  const std::string& name() const noexcept { return name_; }
  /// The cache key, e.g. "attn|200:b1|300:i64" (just the name when there are no constants).
  const std::string& label() const noexcept { return label_; }
  const KernelAttributes& attributes() const noexcept { return attributes_; }
  /// The binary this kernel was loaded from.
  const Binary& binary() const noexcept { return *binary_; }
  /// The driver handle (a `CUkernel`), for use with the driver API directly. It is
  /// context-independent: one handle serves every GPU of the binary's arch.
  void* native_handle() const noexcept { return handle_; }
  /// The kernel as a `CUfunction` in GPU `device`'s primary context, loaded there on first
  /// request. Throws `InvalidArgument` for a GPU that does not exist, `LoadError` if the
  /// binary cannot run on that GPU (another arch).
  void* function(int device) const;
  /// The byte size of each of the kernel's parameters, in order, as the binary declares
  /// them; empty when `parameters_known()` is false (a binary without that record). Read
  /// from the driver on first use (the first checked launch, say), not by `get`: asking needs
  /// the kernel loaded into a context, which a launch does anyway.
  const std::vector<std::size_t>& parameter_sizes() const noexcept { return parameters().sizes; }
  /// Whether the parameter list is known, so that launches can be checked against it.
  bool parameters_known() const noexcept { return parameters().known; }

  /// Launches with typed arguments, passed by value as the kernel's parameters. The count
  /// and the size of each argument are checked against the kernel's parameter list, so a
  /// `long` passed for an `int` is an `InvalidArgument`, not a silent misread.
  /// Launches on the GPU that the thread's `DeviceScope` or `StreamScope` selects (in its
  /// primary context); without a scope, on the calling thread's current context, and if it
  /// has none, on the registry device's primary context. Every launch form takes more than
  /// 48 KiB of shared memory a block (static and dynamic together): the first such launch on
  /// a GPU opts the kernel in to all the GPU allows, and a request past that is a
  /// `LaunchError` that names both sizes.
  template <class... Args>
  void launch(Dim3 grid, Dim3 block, std::size_t shared_bytes, StreamRef stream,
              const Args&... args) const {
    static_assert((std::is_trivially_copyable_v<Args> && ...),
                  "kernel arguments are copied bytewise and must be trivially copyable");
    void* pointers[sizeof...(Args) + 1] = {const_cast<void*>(static_cast<const void*>(&args))...,
                                           nullptr};
    static constexpr std::size_t sizes[sizeof...(Args) + 1] = {sizeof(Args)..., 0};
    launch_checked(grid, block, shared_bytes, stream, pointers, sizes, sizeof...(Args));
  }

  /// Launches with `args` as in `cuLaunchKernel`: one pointer per parameter. Nothing is
  /// checked but the block size and the shared memory (as `launch` does).
  void launch_raw(Dim3 grid, Dim3 block, std::size_t shared_bytes, StreamRef stream,
                  void** args) const;

  /// Launches with `args` as `launch_raw` does, after checking `count` and `sizes` (the
  /// byte size of each argument) against the kernel's parameter list as the typed `launch`
  /// does: a mismatch is an `InvalidArgument` that names the kernel and the parameter.
  void launch_checked(Dim3 grid, Dim3 block, std::size_t shared_bytes, StreamRef stream,
                      void** args, const std::size_t* sizes, std::size_t count) const;

 private:
  friend class cuda::KernelFactory;
  friend void cuda::launch_dependent(const Kernel& kernel, Dim3 grid, Dim3 block,
                                     std::size_t shared_bytes, StreamRef stream, void** args,
                                     const std::size_t* sizes, std::size_t count);
  friend void cuda::allow_dynamic_shared_memory(const Kernel& kernel, std::size_t dynamic_bytes,
                                                int device);

  void check_arguments(const std::size_t* sizes, std::size_t count) const;
  // launch_raw's work; `dependent` launches with programmatic stream serialization.
  void launch_native(Dim3 grid, Dim3 block, std::size_t shared_bytes, StreamRef stream, void** args,
                     bool dependent) const;

  Kernel(std::string name, std::string label, std::shared_ptr<const Binary> binary,
         std::shared_ptr<const void> library, void* handle, KernelAttributes attributes,
         std::shared_ptr<const cuda::LaunchContext> context);

  struct Parameters {
    std::vector<std::size_t> sizes;
    bool known = false;
  };
  const Parameters& parameters() const noexcept;

  std::string name_;
  std::string label_;
  std::shared_ptr<const Binary> binary_;
  std::shared_ptr<const void> library_;
  void* handle_;
  KernelAttributes attributes_;
  std::shared_ptr<const cuda::LaunchContext> context_;
  mutable std::once_flag parameters_once_;
  mutable Parameters parameters_;
  // The dynamic shared memory each of the first GPUs allows this kernel once it has opted in
  // (0 before), so that later launches make no driver calls for it.
  static constexpr int kOptInDevices = 8;
  mutable std::array<std::atomic<std::size_t>, kOptInDevices> shared_opt_in_{};
};

}  // namespace kreg
