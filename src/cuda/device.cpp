#include "cuda/device.hpp"

#include "core/log.hpp"
#include "cuda/driver_api.hpp"

#include <array>
#include <atomic>

namespace kreg::cuda {

bool driver_available(std::string* why) noexcept {
  return driver_api(why) != nullptr;
}

int driver_version() noexcept {
  const DriverApi* api = driver_api();
  return api == nullptr ? 0 : api->version;
}

int device_count() noexcept {
  const DriverApi* api = driver_api();
  int count = 0;
  if (api == nullptr || api->cuDeviceGetCount(&count) != CUDA_SUCCESS) return 0;
  return count;
}

void check_device(int ordinal) {
  if (ordinal >= 0 && (!driver_available() || ordinal < device_count())) return;
  std::string message = "GPU " + std::to_string(ordinal) + " does not exist";
  if (ordinal >= 0) message += " (this machine has " + std::to_string(device_count()) + ")";
  throw Error(ErrorCode::InvalidArgument, message);
}

DeviceInfo device_info(int ordinal) {
  const DriverApi& api = driver();
  const int count = device_count();
  if (ordinal < 0 || ordinal >= count) {
    throw Error(ErrorCode::NoDevice, "no GPU with ordinal " + std::to_string(ordinal) +
                                         " (this machine has " + std::to_string(count) + ")");
  }
  CUdevice device = 0;
  check(api.cuDeviceGet(&device, ordinal), ErrorCode::CudaError, "cuDeviceGet");
  DeviceInfo info;
  info.ordinal = ordinal;
  char name[256] = {};
  check(api.cuDeviceGetName(name, sizeof(name), device), ErrorCode::CudaError, "cuDeviceGetName");
  info.name = name;
  auto attribute = [&](CUdevice_attribute which) {
    int value = 0;
    check(api.cuDeviceGetAttribute(&value, which, device), ErrorCode::CudaError,
          "cuDeviceGetAttribute");
    return value;
  };
  info.major = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  info.minor = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  info.max_threads_per_block = attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  info.multiprocessors = attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  return info;
}

int multiprocessor_count(int ordinal) {
  // Asked of the driver once a GPU: ops size their grids by it on every call.
  static std::array<std::atomic<int>, kMaxDevices> known{};
  const bool kept = ordinal >= 0 && ordinal < kMaxDevices;
  if (kept) {
    if (const int value = known[ordinal].load(std::memory_order_relaxed); value > 0) return value;
  }
  const DriverApi& api = driver();
  CUdevice device = 0;
  check(api.cuDeviceGet(&device, ordinal), ErrorCode::CudaError, "cuDeviceGet");
  int value = 0;
  check(api.cuDeviceGetAttribute(&value, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device),
        ErrorCode::CudaError, "cuDeviceGetAttribute");
  if (kept) known[ordinal].store(value, std::memory_order_relaxed);
  return value;
}

Device::Device(int ordinal) : info_(device_info(ordinal)) {
  const DriverApi& api = driver();
  CUdevice device = 0;
  check(api.cuDeviceGet(&device, ordinal), ErrorCode::CudaError, "cuDeviceGet");
  native_ = device;
  CUcontext context = nullptr;
  check(api.cuDevicePrimaryCtxRetain(&context, device), ErrorCode::CudaError,
        "cuDevicePrimaryCtxRetain");
  context_ = context;
}

Device::~Device() {
  const DriverApi* api = driver_api();
  if (api == nullptr || context_ == nullptr) return;
  CUresult result = api->cuDevicePrimaryCtxRelease(native_);
  // At process exit the driver may already be shutting down; that is not worth a warning.
  if (result != CUDA_SUCCESS && result != CUDA_ERROR_DEINITIALIZED) {
    try {
      core::log_write(core::LogLevel::Warn,
                      "releasing the primary context failed: " + describe(result));
    } catch (...) {
      // Nothing to report with: a destructor must not throw.
    }
  }
}

}  // namespace kreg::cuda
