#pragma once
/// \file
/// The one exception type kreg throws, and the codes that classify it.

#include <stdexcept>
#include <string>

namespace kreg {

/// What went wrong. Every failure that reaches a caller carries exactly one code.
enum class ErrorCode {
  KernelNotFound,   ///< No registered source declares the requested entry name.
  CompileError,     ///< NVRTC rejected the source, or a required constant is missing or mistyped.
  LoadError,        ///< The driver refused to load a compiled binary or find an entry in it.
  LaunchError,      ///< The driver refused a launch (bad geometry, too much shared memory, ...).
  InvalidArgument,  ///< The caller passed something kreg can reject before doing any work.
  NoDevice,         ///< The operation needs a GPU (or a driver) and there is none.
  CudaError,        ///< Any other driver failure.
};

/// The printable name of a code, e.g. "CompileError".
const char* to_string(ErrorCode code) noexcept;

/// kreg's exception. The message names the kernel, the cache key and the cause; for a
/// compile error it also holds the compiler's full log.
class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string& message);
  ErrorCode code() const noexcept { return code_; }

 private:
  ErrorCode code_;
};

}  // namespace kreg
