#include <kreg/error.hpp>

namespace kreg {

const char* to_string(ErrorCode code) noexcept {
  switch (code) {
    case ErrorCode::KernelNotFound: return "KernelNotFound";
    case ErrorCode::CompileError: return "CompileError";
    case ErrorCode::LoadError: return "LoadError";
    case ErrorCode::LaunchError: return "LaunchError";
    case ErrorCode::InvalidArgument: return "InvalidArgument";
    case ErrorCode::NoDevice: return "NoDevice";
    case ErrorCode::CudaError: return "CudaError";
  }
  return "Unknown";
}

Error::Error(ErrorCode code, const std::string& message)
    : std::runtime_error(message), code_(code) {}

}  // namespace kreg
