#include "cuda/context.hpp"

#include "core/log.hpp"
#include "cuda/device.hpp"
#include "cuda/driver_api.hpp"

#include <array>
#include <atomic>
#include <mutex>
#include <string>

namespace kreg::cuda {
namespace {

struct Contexts {
  std::mutex mutex;  // taken only to retain a context the first time
  std::array<std::atomic<CUcontext>, kMaxDevices> retained{};
};

Contexts& contexts() {
  // Never destroyed: see primary_context.
  static auto* const instance = new Contexts();
  return *instance;
}

}  // namespace

void* primary_context(int device) {
  Contexts& all = contexts();
  if (device >= 0 && device < kMaxDevices) {
    CUcontext context = all.retained[device].load(std::memory_order_acquire);
    if (context != nullptr) return context;
  }
  const DriverApi& api = driver();
  check_device(device);
  if (device >= kMaxDevices) {
    throw Error(ErrorCode::InvalidArgument,
                "arrays support GPU ordinals below " + std::to_string(kMaxDevices));
  }
  std::lock_guard lock(all.mutex);
  CUcontext context = all.retained[device].load(std::memory_order_relaxed);
  if (context != nullptr) return context;
  CUdevice handle = 0;
  check(api.cuDeviceGet(&handle, device), ErrorCode::CudaError, "cuDeviceGet");
  check(api.cuDevicePrimaryCtxRetain(&context, handle), ErrorCode::CudaError,
        "cuDevicePrimaryCtxRetain");
  all.retained[device].store(context, std::memory_order_release);
  return context;
}

ContextScope::ContextScope(int device) {
  auto* wanted = static_cast<CUcontext>(primary_context(device));
  // Only a retained context gets here, so the driver is loaded.
  const DriverApi& api = *driver_api();
  CUcontext current = nullptr;
  check(api.cuCtxGetCurrent(&current), ErrorCode::CudaError, "cuCtxGetCurrent");
  if (current == wanted) return;
  check(api.cuCtxPushCurrent(wanted), ErrorCode::CudaError, "cuCtxPushCurrent");
  pushed_ = true;
}

ContextScope::~ContextScope() {
  if (!pushed_) return;
  CUcontext popped = nullptr;
  const CUresult result = driver_api()->cuCtxPopCurrent(&popped);
  if (result != CUDA_SUCCESS) {
    try {
      core::log_write(core::LogLevel::Warn, "cuCtxPopCurrent failed: " + describe(result));
    } catch (...) {
      // A destructor must not throw; the warning is lost.
    }
  }
}

}  // namespace kreg::cuda
