#include "cache/disk_cache.hpp"

#include "cache/entry.hpp"
#include "cache/folder_check.hpp"
#include "core/atomic_file.hpp"
#include "core/env.hpp"
#include "core/log.hpp"
#include "core/posix.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <system_error>
#include <vector>

namespace kreg::cache {
namespace fs = std::filesystem;
namespace {

constexpr const char* kSuffix = ".kbin";
constexpr const char* kNoFolder = "no cache folder (set KREG_CACHE_DIR or HOME)";

void warn(std::string_view message) noexcept {
  try {
    core::log_write(core::LogLevel::Warn, "disk cache: " + std::string(message));
  } catch (...) {
    // Logging must not turn a cache problem into a failure.
  }
}

// Owned by us and writable by nobody else: the only folders and files we trust.
bool trusted(const struct stat& st) {
  return st.st_uid == ::geteuid() && (st.st_mode & (S_IWGRP | S_IWOTH)) == 0;
}

// Creates `dir` (and missing parents) with mode 0700 and checks that it can be trusted.
bool prepare_dir(const fs::path& dir, std::string& why) {
  std::error_code error;
  fs::path partial;
  for (const auto& part : dir) {
    partial /= part;
    if (partial == partial.root_path()) continue;
    if (core::posix::make_dir(partial.c_str(), 0700) != 0 && errno != EEXIST) {
      why = "cannot create " + partial.string() + ": " + std::generic_category().message(errno);
      return false;
    }
  }
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) {
    why = "cannot look at " + dir.string() + ": " + std::generic_category().message(errno);
    return false;
  }
  if (auto refused = refusal(dir, st)) {
    why = std::move(*refused);
    return false;
  }
  return true;
}

// Absolute from the start: a later change of the current folder must not move the cache.
fs::path absolute_dir(const fs::path& dir) {
  std::error_code error;
  fs::path out = dir.empty() ? dir : fs::absolute(dir, error).lexically_normal();
  return error ? dir : out;
}

// Why read_trusted found nothing.
enum class Unread : unsigned char {
  Missing,   // no such file (never written, or removed since it was listed)
  Refused,   // there is one, but not a regular file only this user could have written, or
             // it is reached through a folder that is a link or that others could change
  TooLarge,  // larger than any entry can be (a sparse file, say)
  Failed,    // it could not be opened for another reason
};

// An entry's two-digit folder, opened only if it is a real folder (not a link) that no other
// user could change; -1 otherwise.
int open_entry_folder(const fs::path& folder, Unread& why) {
  const int fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    // ELOOP: a link; ENOTDIR: a file where the folder should be.
    why = errno == ENOENT                      ? Unread::Missing
          : errno == ELOOP || errno == ENOTDIR ? Unread::Refused
                                               : Unread::Failed;
    return -1;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !trusted(st)) {
    ::close(fd);
    why = Unread::Refused;
    return -1;
  }
  return fd;
}

// Reads a whole trusted regular file; std::nullopt with `why` set otherwise. The folder and
// the file are each checked on the descriptor they are opened as, so neither can be swapped
// between the check and the read.
std::optional<std::string> read_trusted(const fs::path& path, Unread& why, bool touch) {
  const int folder = open_entry_folder(path.parent_path(), why);
  if (folder < 0) return std::nullopt;
  // O_NONBLOCK: a FIFO planted under an entry's name must not block a get forever.
  const int fd =
      ::openat(folder, path.filename().c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  const int open_error = errno;
  ::close(folder);
  if (fd < 0) {
    // ELOOP: a symbolic link where an entry should be.
    why = open_error == ENOENT  ? Unread::Missing
          : open_error == ELOOP ? Unread::Refused
                                : Unread::Failed;
    return std::nullopt;
  }
  struct stat st {};
  std::optional<std::string> out;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || !trusted(st)) {
    why = Unread::Refused;
  } else if (static_cast<std::uint64_t>(st.st_size) > kMaxEntryBytes) {
    why = Unread::TooLarge;
  } else {
    std::string bytes(static_cast<std::size_t>(st.st_size), '\0');
    std::size_t got = 0;
    while (got < bytes.size()) {
      const ssize_t n = core::posix::read_some(fd, bytes.data() + got, bytes.size() - got);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      got += static_cast<std::size_t>(n);
    }
    bytes.resize(got);                   // shorter than it was: the entry's checksum tells
    if (touch) ::futimens(fd, nullptr);  // "last used" for eviction
    out = std::move(bytes);
  }
  ::close(fd);
  return out;
}

// Two lower-case hex digits: the name of a folder of entries.
bool entry_folder_name(const std::string& name) {
  auto hex = [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); };
  return name.size() == 2 && hex(name[0]) && hex(name[1]);
}

// Removes whatever is at `path` (a file, a link but not its target, a folder and all in it).
bool remove_anything(const fs::path& path) {
  std::error_code error;
  return fs::remove_all(path, error) > 0 && !error;
}

struct FileInfo {
  fs::path path;
  std::uint64_t bytes;
  fs::file_time_type used;
};

std::vector<FileInfo> list(const fs::path& root, const char* suffix) {
  std::vector<FileInfo> out;
  std::error_code error;
  for (fs::recursive_directory_iterator
           it(root, fs::directory_options::skip_permission_denied, error),
       end;
       !error && it != end; it.increment(error)) {
    if (!it->is_regular_file(error) || it->path().extension() != suffix) continue;
    FileInfo info{it->path(), it->file_size(error), it->last_write_time(error)};
    if (!error) out.push_back(std::move(info));
    error.clear();
  }
  return out;
}

}  // namespace

DiskCache::DiskCache(const fs::path& dir, std::uint64_t max_bytes, bool create)
    : dir_(absolute_dir(dir)),
      root_(dir_ / ("v" + std::to_string(kFormatVersion))),
      max_bytes_(max_bytes == 0 ? kDefaultMaxBytes : max_bytes) {
  std::string why;
  std::error_code error;
  if (dir_.empty()) {
    why = kNoFolder;
  } else if (!create && !fs::is_directory(root_, error)) {
    return;  // inspecting only: a folder that does not exist is just not usable
  } else if (prepare_folders(why)) {
    usable_ = true;
    return;
  }
  warn(why + "; caching in memory only");
}

fs::path DiskCache::absolute(const fs::path& dir) {
  return absolute_dir(dir);
}

FolderCheck DiskCache::inspect(const fs::path& dir) {
  const fs::path folder = absolute_dir(dir);
  if (folder.empty()) return {CacheState::Unusable, kNoFolder};
  const fs::path root = folder / ("v" + std::to_string(kFormatVersion));
  return check_folders({folder, root, root / "tmp"});
}

bool DiskCache::prepare_folders(std::string& why) const {
  return prepare_dir(dir_, why) && prepare_dir(root_, why) && prepare_dir(root_ / "tmp", why);
}

fs::path DiskCache::default_dir() {
  // A relative folder would move with the process's current folder (XDG's rule, too: such
  // a value is invalid and ignored).
  for (const char* variable : {"KREG_CACHE_DIR", "XDG_CACHE_HOME", "HOME"}) {
    const auto value = core::env_string(variable);
    if (!value) continue;
    if (fs::path(*value).is_relative()) {
      warn(std::string(variable) + "='" + *value + "' is not an absolute path; ignored");
      continue;
    }
    if (variable == std::string_view("KREG_CACHE_DIR")) return *value;
    if (variable == std::string_view("XDG_CACHE_HOME")) return fs::path(*value) / "kreg";
    return fs::path(*value) / ".cache" / "kreg";
  }
  return {};
}

std::uint64_t DiskCache::default_max_bytes() {
  auto text = core::env_string("KREG_CACHE_MAX_BYTES");
  if (!text) return kDefaultMaxBytes;
  if (auto bytes = core::parse_size(*text)) return *bytes;
  warn("KREG_CACHE_MAX_BYTES='" + *text +
       "' is not a size (digits, then nothing, K, M or G, e.g. 512M); using 1 GiB");
  return kDefaultMaxBytes;
}

fs::path DiskCache::entry_path(std::string_view digest) const {
  return root_ / std::string(digest.substr(0, 2)) / (std::string(digest) + kSuffix);
}

std::optional<std::string> DiskCache::load(std::string_view key) {
  if (!usable_) return std::nullopt;
  try {
    const fs::path path = entry_path(key_digest(key));
    Unread why_not = Unread::Missing;
    auto bytes = read_trusted(path, why_not, true);
    if (!bytes) {
      if (why_not == Unread::Refused && !warned_refused_.exchange(true)) {
        warn("refusing " + path.string() +
             ": it or its folder is a link, not a plain file or folder, or could be changed by "
             "another user");
      } else if (why_not == Unread::TooLarge && !warned_refused_.exchange(true)) {
        warn("refusing " + path.string() + ": larger than any entry can be");
      }
      return std::nullopt;
    }
    std::string why;
    auto entry = decode_entry(*bytes, &why);
    if (entry && entry->key != key) why = "holds another key";
    if (!entry || entry->key != key) {
      // A miss: the caller makes the value again (a compile, a tuning run) and store()
      // replaces the file.
      warn(path.string() + " is unusable (" + why + "); ignored, to be made again");
      return std::nullopt;
    }
    return std::move(entry->payload);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

void DiskCache::store(std::string_view key, std::string_view payload) {
  if (!usable_) return;
  try {
    const std::string digest = key_digest(key);
    const fs::path final_path = entry_path(digest);
    std::string why;
    if (!prepare_dir(final_path.parent_path(), why)) {
      if (!warned_write_.exchange(true)) warn(why + "; not storing entries");
      return;
    }
    const std::string bytes = encode_entry(key, payload);
    if (bytes.size() > kMaxEntryBytes) return;  // no reader would take it
    int error = core::write_atomically(final_path, bytes, root_ / "tmp", 0600);
    // A folder under the entry's name would block the key for good; only this user can have
    // made it, inside a folder only this user can change.
    if (error == EISDIR && remove_anything(final_path)) {
      error = core::write_atomically(final_path, bytes, root_ / "tmp", 0600);
    }
    // A folder is gone: someone removed the cache (rm -rf) while this process ran, before or
    // during the write. Make them again, with the same checks as at start, and retry once.
    if (error == ENOENT && prepare_folders(why) && prepare_dir(final_path.parent_path(), why)) {
      error = core::write_atomically(final_path, bytes, root_ / "tmp", 0600);
    }
    if (error != 0) {
      if (!warned_write_.exchange(true)) {
        warn("cannot write " + final_path.string() + ": " + std::generic_category().message(error) +
             "; caching in memory only");
      }
      return;
    }
    maybe_evict(bytes.size());
  } catch (const std::exception&) {
    // Out of memory or a filesystem error: the compile succeeded, so does the caller.
  }
}

std::vector<std::string> DiskCache::digests() const {
  std::vector<std::string> out;
  if (!usable_) return out;
  for (const FileInfo& f : list(root_, kSuffix)) out.push_back(f.path.stem().string());
  std::sort(out.begin(), out.end());
  return out;
}

std::optional<DecodedEntry> DiskCache::load_entry(std::string_view digest, std::string* why) const {
  auto fail = [&](std::string reason) -> std::optional<DecodedEntry> {
    if (why != nullptr) *why = std::move(reason);
    return std::nullopt;
  };
  if (!usable_) return fail("no usable cache folder");
  if (digest.size() != 32) return fail("not an entry name");
  try {
    Unread why_not = Unread::Missing;
    const std::optional<std::string> bytes = read_trusted(entry_path(digest), why_not, false);
    if (!bytes) {
      return fail(why_not == Unread::Missing ? "not in the cache" : "refused (not safely ours)");
    }
    std::string reason;
    std::optional<DecodedEntry> entry = decode_entry(*bytes, &reason);
    if (!entry) return fail(reason);
    if (key_digest(entry->key) != digest) return fail("holds another key");
    return entry;
  } catch (const std::exception& e) {
    return fail(e.what());
  }
}

void DiskCache::maybe_evict(std::uint64_t added) {
  std::int64_t now = approx_bytes_.load();
  if (now < 0) {
    now = static_cast<std::int64_t>(usage().bytes);
    approx_bytes_.store(now);
  } else {
    now = approx_bytes_.fetch_add(static_cast<std::int64_t>(added)) +
          static_cast<std::int64_t>(added);
  }
  if (static_cast<std::uint64_t>(now) <= max_bytes_) return;
  // One trim at a time per process: the others' stores need not wait for it, nor repeat it.
  std::unique_lock lock(evict_mutex_, std::try_to_lock);
  if (lock.owns_lock()) trim_locked(max_bytes_ - max_bytes_ / 10);
}

DiskCache::Usage DiskCache::usage() const {
  Usage u;
  if (!usable_) return u;
  for (const FileInfo& f : list(root_, kSuffix)) {
    ++u.entries;
    u.bytes += f.bytes;
  }
  return u;
}

std::size_t DiskCache::trim(std::uint64_t target_bytes) {
  if (!usable_) return 0;
  std::lock_guard lock(evict_mutex_);
  return trim_locked(target_bytes);
}

std::size_t DiskCache::trim_locked(std::uint64_t target_bytes) {
  std::error_code error;
  // Temp files older than an hour belong to writers that died.
  const auto stale = fs::file_time_type::clock::now() - std::chrono::hours(1);
  for (const FileInfo& f : list(root_ / "tmp", ".tmp")) {
    if (f.used < stale) fs::remove(f.path, error);
  }
  std::vector<FileInfo> entries = list(root_, kSuffix);
  std::uint64_t total = 0;
  for (const FileInfo& f : entries) total += f.bytes;
  std::sort(entries.begin(), entries.end(),
            [](const FileInfo& a, const FileInfo& b) { return a.used < b.used; });
  std::size_t removed = 0;
  for (const FileInfo& f : entries) {
    if (total <= target_bytes) break;
    // Gone either way: removed here, or by another process trimming at the same time (in
    // which case counting it keeps this process from evicting a second, newer block).
    if (fs::remove(f.path, error)) ++removed;
    if (!error) total -= f.bytes;
  }
  approx_bytes_.store(static_cast<std::int64_t>(total));
  return removed;
}

std::size_t DiskCache::clear() {
  return trim(0);
}

DiskCache::Verify DiskCache::verify(bool remove_bad,
                                    const std::function<void(const DecodedEntry&)>& good) {
  Verify v;
  if (!usable_) return v;
  auto bad = [&](const fs::path& path) {
    ++v.bad;
    if (remove_bad && remove_anything(path)) ++v.removed;
  };
  // Every two-digit folder, and everything in one named like an entry, is judged: a link, a
  // folder, a FIFO or an oversized file in an entry's place is bad like a corrupt entry.
  // Other names are not the cache's and are left alone.
  std::error_code error;
  for (fs::directory_iterator folders(root_, error), end; !error && folders != end;
       folders.increment(error)) {
    const fs::path folder = folders->path();
    if (!entry_folder_name(folder.filename().string())) continue;
    struct stat st {};
    if (::lstat(folder.c_str(), &st) != 0) continue;  // removed since it was listed
    if (!S_ISDIR(st.st_mode) || !trusted(st)) {
      bad(folder);
      continue;
    }
    std::error_code inner;
    for (fs::directory_iterator files(folder, inner); !inner && files != end;
         files.increment(inner)) {
      const fs::path path = files->path();
      if (path.extension() != kSuffix) continue;
      Unread why_not = Unread::Missing;
      auto bytes = read_trusted(path, why_not, false);
      // Removed since it was listed (another process trimmed it): neither good nor bad.
      if (!bytes && why_not == Unread::Missing) continue;
      auto entry = bytes ? decode_entry(*bytes) : std::nullopt;
      const std::string digest = entry ? key_digest(entry->key) : std::string();
      if (entry && path.stem() == digest && folder.filename() == digest.substr(0, 2)) {
        ++v.good;
        if (good) good(*entry);
      } else {
        bad(path);
      }
    }
  }
  return v;
}

}  // namespace kreg::cache
