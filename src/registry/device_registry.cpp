#include <kreg/error.hpp>
#include <kreg/registry.hpp>

#include "cuda/device.hpp"

#include <array>
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace kreg {

Registry& device_registry(int device) {
  if (device < 0 || device >= cuda::kMaxDevices) {
    throw Error(ErrorCode::InvalidArgument, "no registry for GPU " + std::to_string(device));
  }
  // Alive until static destruction, which joins the registries' background NVRTC warm-up (a
  // thread still inside NVRTC while the process exits could crash it). Kernels handed out
  // stay valid until then; nothing uses them after.
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<Registry>, std::less<>> by_arch;
  static std::array<Registry*, cuda::kMaxDevices> by_device{};
  std::lock_guard lock(mutex);
  if (by_device[device] != nullptr) return *by_device[device];
  // One registry per arch: a binary built for one GPU is loaded as is on every other GPU of
  // its arch, so each kernel compiles once however many GPUs run it. Without a driver there
  // is no arch to tell, and one registry (compile-only) serves.
  const std::string arch =
      device < cuda::device_count() ? cuda::device_info(device).arch() : std::string();
  std::unique_ptr<Registry>& registry = by_arch[arch];
  if (registry == nullptr) {
    RegistryOptions options;
    options.arch = arch;
    options.device = arch.empty() ? 0 : device;  // its primary context, for threads without one
    registry = std::make_unique<Registry>(std::move(options));
  }
  // Without a driver, a later call may find one no more than now: keep the answer.
  by_device[device] = registry.get();
  return *registry;
}

}  // namespace kreg
