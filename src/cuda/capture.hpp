#pragma once
// CUDA graph capture, as kreg meets it: a stream the caller is capturing into a graph takes
// launches, stream-ordered allocations and frees of what it allocated, and nothing else kreg
// could do on a miss (a compile, a module load, a copy through pageable memory, a wait on
// the host). kreg asks before any of those, so that it refuses them with a kreg::Error and
// the capture stays valid, rather than make a call that the driver would answer by
// invalidating the capture.

#include <string_view>

namespace kreg::cuda {

// Whether `stream` (a CUstream; null is the legacy default stream, which cannot capture) is
// capturing, or was and has been invalidated and not ended yet. Throws CudaError if the
// driver cannot tell.
bool is_capturing(void* stream);

// Throws InvalidArgument, saying that `what` is refused while `stream` captures a graph and
// how to prepare for the capture, if `stream` is capturing.
void refuse_during_capture(void* stream, std::string_view what);

// Puts the calling thread in relaxed capture mode, so that another thread's capture in
// global mode (torch.cuda.graph's default) neither refuses this thread's allocations and
// synchronizations nor is invalidated by them. For kreg's own background threads (the
// warm-up, the context's start), which never launch into a capture. Does nothing without a
// driver.
void relax_capture_mode_on_this_thread() noexcept;

// The stream the calling thread launches on next, for the registry to check on a miss:
// the one a LaunchStreamHint names, else the innermost StreamScope's, else null.
void* launch_stream() noexcept;

// Names the stream the calling thread's next launches go to, for its life. Ops and custom
// kernels set it around their get, so that a miss during capture is refused.
class LaunchStreamHint {
 public:
  explicit LaunchStreamHint(void* stream) noexcept;
  ~LaunchStreamHint();
  LaunchStreamHint(const LaunchStreamHint&) = delete;
  LaunchStreamHint& operator=(const LaunchStreamHint&) = delete;

 private:
  void* previous_;
  bool previous_set_;
};

}  // namespace kreg::cuda
