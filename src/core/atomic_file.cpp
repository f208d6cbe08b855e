#include "core/atomic_file.hpp"

#include "core/posix.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <random>
#include <string>

namespace kreg::core {

int write_atomically(const std::filesystem::path& path, std::string_view bytes,
                     const std::filesystem::path& temp_dir, mode_t mode) {
  // Unique per writer, threads of one process included.
  thread_local std::mt19937_64 rng{std::random_device{}()};
  const std::filesystem::path temp =
      temp_dir / (path.filename().string() + "." + std::to_string(::getpid()) + "." +
                  std::to_string(rng()) + ".tmp");
  const int fd =
      posix::open_file(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
  if (fd < 0) return errno;
  int error = 0;
  std::size_t done = 0;
  while (error == 0 && done < bytes.size()) {
    const ssize_t n = posix::write_some(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) error = n < 0 ? errno : EIO;
    if (n > 0) done += static_cast<std::size_t>(n);
  }
  if (error == 0 && posix::sync_file(fd) != 0) error = errno;
  ::close(fd);
  if (error == 0 && posix::rename_file(temp.c_str(), path.c_str()) != 0) error = errno;
  if (error != 0) ::unlink(temp.c_str());
  return error;
}

}  // namespace kreg::core
