#pragma once
// Device time of launches, by CUDA events on the stream they are queued on.

#include <functional>
#include <vector>

namespace kreg::cuda {

// Calls `launch` `repeats` times, each between two events recorded on `stream` (of GPU
// `device`), waits for the last, and returns each call's time on the GPU in ms. `launch`
// must queue its work on `stream`. Throws CudaError, or LaunchError for a fault in the work.
std::vector<double> time_launches(int device, void* stream, const std::function<void()>& launch,
                                  int repeats);

}  // namespace kreg::cuda
