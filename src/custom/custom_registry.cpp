#include <kreg/custom_kernel.hpp>
#include <kreg/registry.hpp>

#include "custom/state.hpp"

#include <array>
#include <memory>
#include <mutex>
#include <string>

namespace kreg {

Registry& custom_kernel_registry(int device) {
  if (device < 0 || device >= custom::kMaxDevices) {
    throw Error(ErrorCode::InvalidArgument,
                "kreg: no custom-kernel registry for GPU " + std::to_string(device));
  }
  // One per GPU, alive until static destruction, which joins its background NVRTC warm-up
  // (a thread still inside NVRTC while the process exits could crash it). Kernels handed out
  // stay valid until then; nothing uses them after.
  static std::mutex mutex;
  static std::array<std::unique_ptr<Registry>, custom::kMaxDevices> registries;
  std::lock_guard lock(mutex);
  if (registries[device] == nullptr) {
    RegistryOptions options;
    options.device = device;
    registries[device] = std::make_unique<Registry>(std::move(options));
  }
  return *registries[device];
}

}  // namespace kreg
