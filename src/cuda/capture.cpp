#include "cuda/capture.hpp"

#include <kreg/error.hpp>

#include "cuda/driver_api.hpp"
#include "cuda/selection.hpp"
#include "cuda/stream_state.hpp"

#include <cstdint>
#include <cstdio>
#include <string>

namespace kreg::cuda {
namespace {

struct Hint {
  void* stream = nullptr;
  bool set = false;
};

Hint& hint() noexcept {
  thread_local Hint current;
  return current;
}

std::string stream_text(void* stream) {
  char text[32];
  std::snprintf(text, sizeof text, "0x%llx",
                static_cast<unsigned long long>(reinterpret_cast<std::uintptr_t>(stream)));
  return text;
}

}  // namespace

bool is_capturing(void* stream) {
  if (stream == nullptr) return false;
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  check(driver().cuStreamIsCapturing(static_cast<CUstream>(stream), &status), ErrorCode::CudaError,
        "cuStreamIsCapturing");
  return status != CU_STREAM_CAPTURE_STATUS_NONE;
}

void relax_capture_mode_on_this_thread() noexcept {
  const DriverApi* api = driver_api();
  if (api == nullptr) return;
  CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
  // The thread's previous mode comes back in `mode`; these threads never go back to it.
  (void)api->cuThreadExchangeStreamCaptureMode(&mode);
}

void refuse_during_capture(void* stream, std::string_view what) {
  if (!is_capturing(stream)) return;
  throw Error(ErrorCode::InvalidArgument,
              std::string(what) + ": refused while stream " + stream_text(stream) +
                  " is capturing a CUDA graph (the capture is left as it was). Prewarm the "
                  "kernels and run the work once before capture; see \"Prewarm, then "
                  "capture\" in docs/registry.md");
}

void* launch_stream() noexcept {
  const Hint& current = hint();
  if (current.set) return current.stream;
  const std::shared_ptr<const StreamState>& scoped = selection().stream;
  return scoped != nullptr ? scoped->native : nullptr;
}

LaunchStreamHint::LaunchStreamHint(void* stream) noexcept
    : previous_(hint().stream), previous_set_(hint().set) {
  hint() = {stream, true};
}

LaunchStreamHint::~LaunchStreamHint() {
  hint() = {previous_, previous_set_};
}

}  // namespace kreg::cuda
