#include "cuda/launch_limits.hpp"

#include "cuda/driver_api.hpp"

#include <string>

namespace kreg::cuda {

void allow_dynamic_shared_memory(void* kernel, std::size_t bytes, int device) {
  const DriverApi& api = driver();
  CUdevice handle = 0;
  check(api.cuDeviceGet(&handle, device), ErrorCode::CudaError, "cuDeviceGet");
  int limit = 0;
  check(api.cuDeviceGetAttribute(&limit, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
                                 handle),
        ErrorCode::CudaError, "cuDeviceGetAttribute");
  if (bytes > static_cast<std::size_t>(limit)) {
    throw Error(ErrorCode::LaunchError,
                std::to_string(bytes) + " bytes of shared memory requested; GPU " +
                    std::to_string(device) + " allows at most " + std::to_string(limit));
  }
  check(api.cuKernelSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                 static_cast<int>(bytes), static_cast<CUkernel>(kernel), handle),
        ErrorCode::LaunchError, "allowing " + std::to_string(bytes) + " bytes of shared memory");
}

}  // namespace kreg::cuda
