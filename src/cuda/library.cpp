#include "cuda/library.hpp"

#include "core/faults.hpp"
#include "core/log.hpp"
#include "cuda/driver_api.hpp"

#include <optional>
#include <string>

namespace kreg::cuda {

Library::Library(std::span<const char> image, std::string_view key) {
  CUlibrary library = nullptr;
  // An injected failure stands in for the driver's answer, and so needs no driver: tests
  // check what a refused binary turns into on machines without a GPU.
  const std::optional<int> injected = core::faults::hit(core::faults::Point::LibraryLoad);
  const CUresult result = injected ? static_cast<CUresult>(*injected)
                                   : driver().cuLibraryLoadData(&library, image.data(), nullptr,
                                                                nullptr, 0, nullptr, nullptr, 0);
  const bool in_capture = result == CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED ||
                          result == CUDA_ERROR_STREAM_CAPTURE_INVALIDATED ||
                          result == CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
  check(result, ErrorCode::LoadError,
        "loading binary '" + std::string(key) + "'" +
            (in_capture ? std::string(" while a stream captured a CUDA graph (prewarm kernels "
                                      "before capture; see \"Prewarm, then capture\" in "
                                      "docs/registry.md)")
                        : std::string()));
  handle_ = library;
}

Library::~Library() {
  const DriverApi* api = driver_api();
  if (api == nullptr || handle_ == nullptr) return;
  CUresult result = api->cuLibraryUnload(static_cast<CUlibrary>(handle_));
  if (result != CUDA_SUCCESS && result != CUDA_ERROR_DEINITIALIZED) {
    try {
      core::log_write(core::LogLevel::Warn,
                      "unloading a kernel library failed: " + describe(result));
    } catch (...) {
      // Nothing to report with: a destructor must not throw.
    }
  }
}

void* Library::kernel(std::string_view symbol, std::string_view label) const {
  const DriverApi& api = driver();
  CUkernel kernel = nullptr;
  std::string name(symbol);
  check(api.cuLibraryGetKernel(&kernel, static_cast<CUlibrary>(handle_), name.c_str()),
        ErrorCode::LoadError, "finding '" + name + "' for '" + std::string(label) + "'");
  return kernel;
}

}  // namespace kreg::cuda
