#pragma once
// Streams and the event plumbing that orders work across them. Every function expects the
// stream's GPU's context to be current (see ContextScope).

namespace kreg::cuda {

// A new non-blocking stream. Throws CudaError.
void* create_stream();
// Never throws; failures are logged.
void destroy_stream(void* stream) noexcept;
// Throws LaunchError: a failure here is usually an earlier kernel's fault.
void synchronize_stream(void* stream);
// Work queued on `waiter` from now on starts after everything queued on `producer` so far.
// Nothing happens when they are the same stream.
void order_after(void* waiter, void* producer);

}  // namespace kreg::cuda
