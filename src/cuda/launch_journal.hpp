#pragma once
// Kernel faults (an illegal address, a trap) reach the host only at a later call that waits
// for the stream, long after the launch returned. kreg keeps the label of the last kernel it
// launched on each stream so that such an error can name the likely culprit. The table is
// per thread, so that a launch takes no lock: a wait names the kernel its own thread last
// launched on the stream, which covers the usual case of one thread launching and waiting
// (eval, then to_vector). It is small and bounded.

#include <cuda.h>

#include <string>
#include <string_view>

namespace kreg::cuda {

// Records that `label` was the last kernel this thread launched on `stream`. Never throws.
void note_launch(void* stream, const std::string& label) noexcept;

// The label this thread noted for `stream`, or "" when none is known.
std::string last_launch(void* stream);

// Whether `result` reports a kernel fault, after which the context is unusable.
bool is_kernel_fault(CUresult result) noexcept;

// check() for calls that wait for `stream`: a kernel fault is a LaunchError that names the
// last kernel launched there and says what the fault did to the context; any other failure
// is a LaunchError with the driver's description.
void check_stream(CUresult result, void* stream, std::string_view what);

}  // namespace kreg::cuda
