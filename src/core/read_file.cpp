#include "core/read_file.hpp"

#include "core/posix.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <system_error>

namespace kreg::core {
namespace {

// What a file of mode `mode` is, for messages.
std::string file_kind(mode_t mode) {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "not a regular file";
}

// "64.0 MiB", "3.2 GiB", "512 bytes": a size for messages.
std::string size_text(std::uint64_t bytes) {
  char text[32];
  if (bytes >= (std::uint64_t{1} << 30)) {
    std::snprintf(text, sizeof(text), "%.1f GiB", static_cast<double>(bytes) / (1 << 30));
  } else if (bytes >= (std::uint64_t{1} << 20)) {
    std::snprintf(text, sizeof(text), "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  } else {
    std::snprintf(text, sizeof(text), "%llu bytes", static_cast<unsigned long long>(bytes));
  }
  return text;
}

}  // namespace

bool read_to_end(int fd, std::uint64_t max_bytes, std::string& out) {
  constexpr std::size_t kChunk = std::size_t{1} << 16;
  for (;;) {
    const std::size_t at = out.size();
    out.resize(at + kChunk);
    const ssize_t n = posix::read_some(fd, out.data() + at, kChunk);
    const int error = errno;
    out.resize(at + static_cast<std::size_t>(n > 0 ? n : 0));
    if (n < 0 && error == EINTR) continue;
    if (n < 0) {
      errno = error;
      return false;
    }
    if (n == 0) return true;
    if (out.size() > max_bytes) return false;
  }
}

std::optional<std::string> read_regular_file(const std::filesystem::path& path,
                                             std::uint64_t max_bytes, std::string& why) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer forever.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    why = "cannot be opened: " + std::generic_category().message(errno);
    return std::nullopt;
  }
  struct stat st {};
  std::optional<std::string> out;
  if (::fstat(fd, &st) != 0) {
    why = "cannot be examined: " + std::generic_category().message(errno);
  } else if (!S_ISREG(st.st_mode)) {
    why = "is " + file_kind(st.st_mode) + ", not a regular file";
  } else if (static_cast<std::uint64_t>(st.st_size) > max_bytes) {
    why = "is " + size_text(static_cast<std::uint64_t>(st.st_size)) + ", more than the " +
          size_text(max_bytes) + " allowed";
  } else if (std::string bytes; !read_to_end(fd, max_bytes, bytes)) {
    why = bytes.size() > max_bytes ? "grew past the " + size_text(max_bytes) + " allowed"
                                   : "cannot be read: " + std::generic_category().message(errno);
  } else {
    out = std::move(bytes);
  }
  ::close(fd);
  return out;
}

}  // namespace kreg::core
