// What the machine offers, for `kreg doctor` and similar reports.
#include <kreg/version.hpp>

#include "cuda/device.hpp"

namespace kreg {

std::string driver_version(std::string* why) {
  if (!cuda::driver_available(why)) return {};
  const int v = cuda::driver_version();
  return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
}

std::vector<std::string> devices() {
  std::vector<std::string> out;
  for (int i = 0; i < cuda::device_count(); ++i) {
    const cuda::DeviceInfo info = cuda::device_info(i);
    out.push_back(info.name + " (" + info.arch() + ")");
  }
  return out;
}

}  // namespace kreg
