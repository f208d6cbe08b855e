#include "cuda/launch_limits.hpp"

#include "cuda/driver_api.hpp"

#include <kreg/kernel.hpp>

#include <atomic>
#include <cstddef>
#include <string>

namespace kreg::cuda {

void allow_dynamic_shared_memory(const Kernel& kernel, std::size_t dynamic_bytes, int device) {
  constexpr std::size_t kDefault = std::size_t{48} * 1024;
  const auto static_bytes = static_cast<std::size_t>(kernel.attributes().static_shared_bytes);
  if (static_bytes + dynamic_bytes <= kDefault) return;
  // The opt-in is made once a GPU, for all the device allows: every thread then sets the same
  // value, so none can lower what another's launch relies on.
  std::atomic<std::size_t>* opted = device >= 0 && device < Kernel::kOptInDevices
                                        ? &kernel.shared_opt_in_[static_cast<std::size_t>(device)]
                                        : nullptr;
  if (opted != nullptr && dynamic_bytes <= opted->load(std::memory_order_acquire)) return;
  const DriverApi& api = driver();
  CUdevice handle = 0;
  check(api.cuDeviceGet(&handle, device), ErrorCode::CudaError, "cuDeviceGet");
  int limit = 0;
  check(api.cuDeviceGetAttribute(&limit, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
                                 handle),
        ErrorCode::CudaError, "cuDeviceGetAttribute");
  if (static_bytes + dynamic_bytes > static_cast<std::size_t>(limit)) {
    throw Error(ErrorCode::LaunchError,
                "'" + kernel.label() + "': " + std::to_string(dynamic_bytes) +
                    " bytes of dynamic shared memory requested beside its " +
                    std::to_string(static_bytes) + " static; GPU " + std::to_string(device) +
                    " allows at most " + std::to_string(limit) + " in all");
  }
  const std::size_t most = static_cast<std::size_t>(limit) - static_bytes;
  check(api.cuKernelSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                 static_cast<int>(most),
                                 static_cast<CUkernel>(kernel.native_handle()), handle),
        ErrorCode::LaunchError,
        "allowing " + std::to_string(most) + " bytes of dynamic shared memory");
  if (opted != nullptr) opted->store(most, std::memory_order_release);
}

}  // namespace kreg::cuda
