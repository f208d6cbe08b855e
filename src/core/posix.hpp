#pragma once
// The system calls of kreg's file handling, each behind the fault switch (faults.hpp), so that
// tests can make them fail the way a full disk or a changed permission would. Each returns
// what the call returns and sets errno as it would; with nothing armed, each is the call.

#include <sys/types.h>

#include <cstddef>

namespace kreg::core::posix {

// mkdir. The MakeDir fault applies only to a folder the call really creates (it is removed
// again): an existing folder is EEXIST whatever the permissions, and so it stays here.
int make_dir(const char* path, mode_t mode) noexcept;
// open. The CreateFile fault applies to calls with O_CREAT.
int open_file(const char* path, int flags, mode_t mode = 0) noexcept;
// write. The Write fault stores half of the bytes, then reports the armed errno: what a
// write cut short by a full disk leaves behind.
ssize_t write_some(int fd, const void* data, std::size_t size) noexcept;
// read. The Read fault returns half of the bytes asked for (a short count, which callers
// must take in stride); ReadEof returns 0 (end of file).
ssize_t read_some(int fd, void* data, std::size_t size) noexcept;
int sync_file(int fd) noexcept;
int rename_file(const char* from, const char* to) noexcept;

}  // namespace kreg::core::posix
