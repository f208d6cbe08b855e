#pragma once
/// \file
/// The one exception type kreg throws, and the codes that classify it.

#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

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

/// What a compile that NVRTC refused was, as fields, for callers that show or inspect it
/// without reading the message's text.
struct CompileFailure {
  std::string source_name;  ///< the source's name in its registry (a custom kernel's entry)
  std::string label;        ///< the kernel that was asked for: "name|200:b1"
  std::string key;          ///< the binary's key: "source|200:b1@sm_90"
  std::string log;          ///< NVRTC's full log
  std::string source;       ///< the source's text (a custom kernel's: its generated source)
};

/// kreg's exception. The message names the kernel, the cache key and the cause; for a
/// compile error it also holds the compiler's full log, and `compile_failure()` the same
/// as fields.
///
/// `what()` is the message after one prefix, `"kreg: "`, so that a caller who logs any
/// `std::exception` can tell where it came from. Text that shows the code or kreg's name by
/// itself (the CLI's `error:` line, a Python exception class, a log line, another error that
/// quotes this one) takes `message()`, which has no prefix, so that kreg is named once.
class Error : public std::runtime_error {
 public:
  /// A message that already starts with the prefix keeps it, and is not given a second one.
  Error(ErrorCode code, const std::string& message);
  /// A CompileError for a compile NVRTC refused.
  Error(const std::string& message, CompileFailure failure);
  ErrorCode code() const noexcept { return code_; }
  /// The message without the prefix.
  std::string_view message() const noexcept;
  /// The refused compile behind a CompileError from NVRTC; null for every other error
  /// (a missing constant, say, is a CompileError that never reached the compiler).
  const CompileFailure* compile_failure() const noexcept { return failure_.get(); }
  /// The same error, code and compile failure, told by another message (one that adds
  /// where it happened).
  Error with_message(const std::string& message) const;

 private:
  ErrorCode code_;
  std::shared_ptr<const CompileFailure> failure_;  // shared: exceptions copy without throwing
};

}  // namespace kreg
