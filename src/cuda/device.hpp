#pragma once
// GPUs as the registry sees them. No driver types leak out of this header.

#include <memory>
#include <string>

namespace kreg::cuda {

// The GPU ordinals kreg keeps per-GPU state for (contexts, memory pools, registries).
inline constexpr int kMaxDevices = 64;

struct DeviceInfo {
  int ordinal = 0;
  std::string name;
  int major = 0;
  int minor = 0;
  int max_threads_per_block = 0;
  int multiprocessors = 0;
  std::string arch() const { return "sm_" + std::to_string(major * 10 + minor); }
};

// Whether a driver is present and initialized; `why` says why not. Never throws.
bool driver_available(std::string* why = nullptr) noexcept;
// Driver version, e.g. 13000; 0 without a driver.
int driver_version() noexcept;
// GPUs visible to this process; 0 without a driver.
int device_count() noexcept;
// Throws NoDevice for an ordinal that does not exist.
DeviceInfo device_info(int ordinal);
// The multiprocessors of a GPU that exists, asked of the driver once and kept.
int multiprocessor_count(int ordinal);
// Throws InvalidArgument for a negative ordinal, or for one past the last GPU when a driver is
// present to tell (without one, whatever needs the GPU later reports NoDevice).
void check_device(int ordinal);

// One GPU and its retained primary context (released on destruction).
class Device {
 public:
  explicit Device(int ordinal);  // throws NoDevice / CudaError
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  const DeviceInfo& info() const noexcept { return info_; }
  int native_device() const noexcept { return native_; }  // CUdevice
  void* context() const noexcept { return context_; }     // CUcontext

 private:
  DeviceInfo info_;
  int native_ = 0;
  void* context_ = nullptr;
};

}  // namespace kreg::cuda
