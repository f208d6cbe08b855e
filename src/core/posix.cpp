#include "core/posix.hpp"

#include "core/faults.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

namespace kreg::core::posix {
namespace {

// Reports an injected failure as the call would: -1 with errno set.
int fail(int error) noexcept {
  errno = error;
  return -1;
}

}  // namespace

int make_dir(const char* path, mode_t mode) noexcept {
  if (::mkdir(path, mode) != 0) return -1;
  if (auto error = faults::hit(faults::Point::MakeDir)) {
    ::rmdir(path);
    return fail(*error);
  }
  return 0;
}

int open_file(const char* path, int flags, mode_t mode) noexcept {
  if ((flags & O_CREAT) != 0) {
    if (auto error = faults::hit(faults::Point::CreateFile)) return fail(*error);
  }
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-vararg): open is variadic by definition
  return ::open(path, flags, mode);
}

ssize_t write_some(int fd, const void* data, std::size_t size) noexcept {
  if (auto error = faults::hit(faults::Point::Write)) {
    if (size > 1 && ::write(fd, data, size / 2) < 0) return -1;
    return fail(*error);
  }
  return ::write(fd, data, size);
}

ssize_t read_some(int fd, void* data, std::size_t size) noexcept {
  if (faults::hit(faults::Point::ReadEof)) return 0;
  if (faults::hit(faults::Point::Read)) return ::read(fd, data, (size + 1) / 2);
  return ::read(fd, data, size);
}

int sync_file(int fd) noexcept {
  if (auto error = faults::hit(faults::Point::Sync)) return fail(*error);
  return ::fsync(fd);
}

int rename_file(const char* from, const char* to) noexcept {
  if (auto error = faults::hit(faults::Point::Rename)) return fail(*error);
  return ::rename(from, to);
}

}  // namespace kreg::core::posix
