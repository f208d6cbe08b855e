#include "cache/folder_check.hpp"

#include <fcntl.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <system_error>

namespace kreg::cache {
namespace fs = std::filesystem;
namespace {

std::string error_text(int error) {
  return std::generic_category().message(error);
}

std::string mode_text(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

// What stands at a path where a folder should be.
std::string kind_of(mode_t mode) {
  if (S_ISLNK(mode)) return "a symbolic link";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISREG(mode)) return "a file";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  return "something else";
}

// Why this user cannot add files to the folder `path` (mode `mode`), or std::nullopt.
std::optional<std::string> not_writable(const fs::path& path, mode_t mode) {
  struct statvfs volume {};
  if (::statvfs(path.c_str(), &volume) == 0 && (volume.f_flag & ST_RDONLY) != 0) {
    return path.string() + " is on a read-only file system";
  }
  // AT_EACCESS: the effective user is the one that will write, as for the ownership check.
  if (::faccessat(AT_FDCWD, path.c_str(), W_OK | X_OK, AT_EACCESS) == 0) return std::nullopt;
  if (errno == EROFS) return path.string() + " is on a read-only file system";
  return path.string() + " is not writable by this user (mode " + mode_text(mode) + ")";
}

// Whether the missing folder `path` (and any missing folders above it) can be created:
// the nearest path above it that exists must be a folder this user can write to.
FolderCheck check_creatable(const fs::path& path) {
  fs::path above = path.parent_path();
  struct stat st {};
  while (::lstat(above.c_str(), &st) != 0) {
    const int error = errno;
    if ((error != ENOENT && error != ENOTDIR) || above == above.parent_path()) {
      return {CacheState::Unusable,
              "cannot create " + path.string() + ": " + above.string() + ": " + error_text(error)};
    }
    above = above.parent_path();
  }
  // Links above the cache folder are followed, as creating the folder follows them.
  if (::stat(above.c_str(), &st) != 0) {
    return {CacheState::Unusable, "cannot create " + path.string() + ": " + above.string() +
                                      " is a link to nothing (" + error_text(errno) + ")"};
  }
  if (!S_ISDIR(st.st_mode)) {
    return {CacheState::Unusable, "cannot create " + path.string() + ": " + above.string() +
                                      " is " + kind_of(st.st_mode) + ", not a folder"};
  }
  if (const auto why = not_writable(above, st.st_mode)) {
    return {CacheState::Unusable, "cannot create " + path.string() + ": " + *why};
  }
  return {CacheState::WillBeCreated, "does not exist yet; kreg will create it"};
}

}  // namespace

std::optional<std::string> refusal(const fs::path& path, const struct stat& st) {
  // A link is refused even to a good folder: whoever made it chose where entries go.
  if (S_ISLNK(st.st_mode)) return path.string() + " is a symbolic link";
  if (!S_ISDIR(st.st_mode)) return path.string() + " is " + kind_of(st.st_mode) + ", not a folder";
  if (st.st_uid != ::geteuid()) {
    return path.string() + " is owned by another user (uid " + std::to_string(st.st_uid) + ")";
  }
  // Sticky or not: another user could still add a file under an entry's name.
  if ((st.st_mode & S_IWOTH) != 0) {
    return path.string() + " is writable by others (mode " + mode_text(st.st_mode) + ")";
  }
  if ((st.st_mode & S_IWGRP) != 0) {
    return path.string() + " is writable by its group (mode " + mode_text(st.st_mode) + ")";
  }
  return std::nullopt;
}

FolderCheck check_folders(const std::vector<fs::path>& folders) {
  std::optional<std::string> read_only;  // why an existing folder takes no new files
  for (std::size_t i = 0; i < folders.size(); ++i) {
    const fs::path& path = folders[i];
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) {
      const int error = errno;
      if (error != ENOENT && error != ENOTDIR) {
        return {CacheState::Unusable, "cannot look at " + path.string() + ": " + error_text(error)};
      }
      if (i == 0) return check_creatable(path);
      if (read_only)
        return {CacheState::Unusable, "cannot create " + path.string() + ": " + *read_only};
      // The folder above was checked: this one and the rest can be made in it. Without the
      // format's folder there are no entries yet; without a later one there may be.
      if (i == 1) return {CacheState::WillBeCreated, "holds no entries yet; kreg will create them"};
      return {CacheState::Ready, ""};
    }
    if (auto why = refusal(path, st)) return {CacheState::Unusable, std::move(*why)};
    if (::faccessat(AT_FDCWD, path.c_str(), R_OK | X_OK, AT_EACCESS) != 0) {
      return {CacheState::Unusable,
              path.string() + " is not readable by this user (mode " + mode_text(st.st_mode) + ")"};
    }
    if (!read_only) read_only = not_writable(path, st.st_mode);
  }
  if (read_only) {
    return {CacheState::ReadOnly, *read_only + "; entries are loaded, none are stored"};
  }
  return {CacheState::Ready, ""};
}

}  // namespace kreg::cache
