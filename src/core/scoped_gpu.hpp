#pragma once
// The GPU that the calling thread's innermost DeviceScope or StreamScope selected, if any.
// Kept here, at the bottom of the layers, because launches of registry kernels honour it as
// well as custom kernels. Thread-local; set only by the scopes.

namespace kreg::core {

// -1 when no scope selected a GPU (none is active, or the innermost selected the CPU).
int scoped_gpu() noexcept;
void set_scoped_gpu(int device) noexcept;

}  // namespace kreg::core
