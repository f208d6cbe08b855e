#pragma once
// What every kernel of a registry needs at launch time. Shared, immutable.

#include "cuda/device.hpp"
#include "cuda/driver_api.hpp"

#include <memory>

namespace kreg::cuda {

struct LaunchContext {
  const cuda::DriverApi* api = nullptr;
  // Made current on a launching thread that has no context of its own.
  std::shared_ptr<const cuda::Device> device;
  bool nvtx = false;  // KREG_NVTX: wrap launches in ranges named by the label
};

}  // namespace kreg::cuda
