#include "compiler/include_trace.hpp"

#include "core/read_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

namespace kreg::compiler {
namespace {

// Even cub's deepest include trees list a few thousand files; a trace past this is not one.
constexpr std::size_t kMaxTraceBytes = std::size_t{16} << 20;

}  // namespace

IncludeTrace::IncludeTrace() {
  fd_ = ::memfd_create("kreg-include-trace", MFD_CLOEXEC);
  if (fd_ >= 0) {
    path_ = "/proc/self/fd/" + std::to_string(fd_);
    if (::access(path_.c_str(), W_OK) == 0) return;
    ::close(fd_);  // no /proc: NVRTC could not open it by name
    fd_ = -1;
  }
  std::error_code error;
  std::string pattern =
      (std::filesystem::temp_directory_path(error) / "kreg-trace-XXXXXX").string();
  if (error) pattern = "/tmp/kreg-trace-XXXXXX";
  fd_ = ::mkostemp(pattern.data(), O_CLOEXEC);
  if (fd_ < 0) return;
  path_ = pattern;
  remove_ = true;
}

IncludeTrace::~IncludeTrace() {
  if (fd_ < 0) return;
  if (remove_) ::unlink(path_.c_str());
  ::close(fd_);
}

std::vector<std::string> IncludeTrace::options() const {
  if (fd_ < 0) return {};
  return {"-Xcudafe", "--trace_includes", "-Xcudafe", "--error_output=" + path_};
}

std::optional<std::vector<std::string>> IncludeTrace::files() const {
  if (fd_ < 0) return std::nullopt;
  // NVRTC wrote through a descriptor of its own, so this one still reads from the start.
  std::string text;
  if (!core::read_to_end(fd_, kMaxTraceBytes, text)) return std::nullopt;
  // One file a line, indented by one space per level of nesting.
  std::vector<std::string> files;
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    std::size_t begin = at;
    while (begin < end && text[begin] == ' ') ++begin;
    if (begin < end) files.emplace_back(text, begin, end - begin);
    at = end + 1;
  }
  if (files.empty()) return std::nullopt;
  return files;
}

}  // namespace kreg::compiler
