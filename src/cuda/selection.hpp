#pragma once
// What the calling thread's innermost DeviceScope or StreamScope selected. One record,
// thread-local, read by the scopes and current_stream (stream_api.cpp) and by
// Kernel::launch, which runs in the scoped GPU's primary context.

#include <memory>

namespace kreg::cuda {

struct StreamState;

struct Selection {
  std::shared_ptr<const StreamState> stream;  // null: the selected GPU's default stream
  int device = -1;                            // -1: no GPU scope (GPU 0 is the default)
  bool cpu = false;                           // DeviceScope(Device::cpu())

  // The GPU a scope chose, or -1 (no scope, or the CPU).
  int scoped_gpu() const noexcept { return cpu ? -1 : device; }
};

Selection& selection() noexcept;

}  // namespace kreg::cuda
