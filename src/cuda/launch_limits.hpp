#pragma once
// Launch settings a kernel must opt into before a launch needs them.

#include <cstddef>

namespace kreg {
class Kernel;
}

namespace kreg::cuda {

// Lets `kernel` launch with `dynamic_bytes` of dynamic shared memory per block on `device`.
// The driver's default allows 48 KiB less the kernel's static shared memory, so the opt-in
// is made when static and dynamic memory together pass 48 KiB, once per kernel and GPU (for
// all the GPU allows; a later launch then makes no driver call). Throws LaunchError when the
// device has less than the two together.
void allow_dynamic_shared_memory(const Kernel& kernel, std::size_t dynamic_bytes, int device);

}  // namespace kreg::cuda
