#pragma once
// Launch settings a kernel must opt into before a launch needs them.

#include <cstddef>

namespace kreg::cuda {

// Lets `kernel` (a CUkernel) use `bytes` of dynamic shared memory per block on `device`;
// above 48 KiB the driver requires this opt-in. Throws LaunchError when the device has less.
void allow_dynamic_shared_memory(void* kernel, std::size_t bytes, int device);

}  // namespace kreg::cuda
