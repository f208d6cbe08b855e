#include <kreg/error.hpp>

#include <string>
#include <string_view>
#include <utility>

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

namespace {

constexpr std::string_view kPrefix = "kreg: ";

std::string with_prefix(const std::string& message) {
  if (message.starts_with(kPrefix)) return message;
  std::string text;
  text.reserve(kPrefix.size() + message.size());
  return text.append(kPrefix).append(message);
}

}  // namespace

Error::Error(ErrorCode code, const std::string& message)
    : std::runtime_error(with_prefix(message)), code_(code) {}

Error::Error(const std::string& message, CompileFailure failure)
    : std::runtime_error(with_prefix(message)),
      code_(ErrorCode::CompileError),
      failure_(std::make_shared<const CompileFailure>(std::move(failure))) {}

Error Error::with_message(const std::string& message) const {
  Error out(code_, message);
  out.failure_ = failure_;
  return out;
}

std::string_view Error::message() const noexcept {
  return std::string_view(what()).substr(kPrefix.size());
}

}  // namespace kreg
