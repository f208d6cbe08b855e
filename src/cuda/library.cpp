#include "cuda/library.hpp"

#include "core/log.hpp"
#include "cuda/driver_api.hpp"

#include <string>

namespace kreg::cuda {

Library::Library(std::span<const char> image, std::string_view key) {
  const DriverApi& api = driver();
  CUlibrary library = nullptr;
  CUresult result =
      api.cuLibraryLoadData(&library, image.data(), nullptr, nullptr, 0, nullptr, nullptr, 0);
  check(result, ErrorCode::LoadError, "loading binary '" + std::string(key) + "'");
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
