#pragma once
// Builds Kernel objects from a loaded library. Used by the registry, which must not see
// driver types, so everything here is opaque.

#include <kreg/kernel.hpp>

#include <memory>
#include <string>
#include <string_view>

namespace kreg::cuda {
class Device;
class Library;
}  // namespace kreg::cuda

namespace kreg::cuda {

class KernelFactory {
 public:
  static std::shared_ptr<const LaunchContext> make_context(
      std::shared_ptr<const cuda::Device> device, bool nvtx);

  // Looks `symbol` up in `library` and reads its attributes (the parameter sizes are read on
  // first use: Kernel::parameter_sizes).
  // Throws LoadError.
  static std::unique_ptr<Kernel> make(std::string name, std::string label,
                                      std::shared_ptr<const Binary> binary,
                                      std::shared_ptr<const cuda::Library> library,
                                      std::string_view symbol,
                                      std::shared_ptr<const LaunchContext> context);
};

// Puts `kernel`'s code into GPU `device`'s primary context now, rather than at its first
// launch there (where the driver loads a library's kernels lazily): prewarming a kernel makes
// its first launch as fast as any other. Throws LoadError.
void make_resident(const Kernel& kernel, int device);

}  // namespace kreg::cuda
