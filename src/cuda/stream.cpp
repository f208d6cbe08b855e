#include "cuda/stream.hpp"

#include "core/log.hpp"
#include "cuda/driver_api.hpp"
#include "cuda/launch_journal.hpp"

#include <string>

namespace kreg::cuda {

void* create_stream() {
  CUstream stream = nullptr;
  check(driver().cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), ErrorCode::CudaError,
        "cuStreamCreate");
  return stream;
}

void destroy_stream(void* stream) noexcept {
  const DriverApi* api = driver_api();
  if (api == nullptr || stream == nullptr) return;
  const CUresult result = api->cuStreamDestroy(static_cast<CUstream>(stream));
  if (result == CUDA_SUCCESS || result == CUDA_ERROR_DEINITIALIZED) return;
  try {
    core::log_write(core::LogLevel::Warn, "cuStreamDestroy failed: " + describe(result));
  } catch (...) {
    // The warning is lost; a destructor must not throw.
  }
}

void synchronize_stream(void* stream) {
  check_stream(driver().cuStreamSynchronize(static_cast<CUstream>(stream)), stream,
               "waiting for the stream");
}

void order_after(void* waiter, void* producer) {
  if (waiter == producer) return;
  const DriverApi& api = driver();
  CUevent event = nullptr;
  check(api.cuEventCreate(&event, CU_EVENT_DISABLE_TIMING), ErrorCode::CudaError, "cuEventCreate");
  // Destroying an event with waits pending is allowed: the waits still complete.
  CUresult result = api.cuEventRecord(event, static_cast<CUstream>(producer));
  if (result == CUDA_SUCCESS) {
    result = api.cuStreamWaitEvent(static_cast<CUstream>(waiter), event, 0);
  }
  const CUresult destroyed = api.cuEventDestroy(event);
  if (result == CUDA_SUCCESS) result = destroyed;
  check(result, ErrorCode::CudaError, "ordering work across streams");
}

}  // namespace kreg::cuda
