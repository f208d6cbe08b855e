#pragma once
// What the driver-level benchmarks share: checked driver calls and a current context.

#include <cuda.h>

#include <stdexcept>
#include <string>

namespace kreg::bench {

inline void require(CUresult result, const char* what) {
  if (result != CUDA_SUCCESS) {
    throw std::runtime_error(std::string(what) + " failed (" +
                             std::to_string(static_cast<int>(result)) + ")");
  }
}

// Starts the driver and makes GPU `ordinal`'s primary context current, as any driver-API
// program would before its first launch.
inline void start_driver(int ordinal = 0) {
  CUdevice device = 0;
  CUcontext context = nullptr;
  require(cuInit(0), "cuInit");
  require(cuDeviceGet(&device, ordinal), "cuDeviceGet");
  require(cuDevicePrimaryCtxRetain(&context, device), "cuDevicePrimaryCtxRetain");
  require(cuCtxSetCurrent(context), "cuCtxSetCurrent");
}

}  // namespace kreg::bench
