#pragma once
// Compiled binaries on disk, shared by every process of the user. Content-addressed: an
// entry's name is the XXH3-128 of its full key, and the entry holds the key itself and a
// checksum (see entry.hpp), so a reader never trusts a name, a size or a partial write.
//
// Layout: <dir>/v<format>/<first two hex digits>/<32 hex digits>.kbin, and temp files in
// <dir>/v<format>/tmp/. Writes go to a temp file, are fsync'ed and renamed into place, so an
// entry appears whole or not at all, even with many processes writing at once.
//
// Safety: the folder is created 0700; a folder or an entry owned by another user, or
// writable by group or others, is refused (a cubin is executable code). Nothing here ever
// throws or fails a compile: every problem is a miss, logged at warn level.

#include "cache/entry.hpp"
#include "cache/folder_check.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kreg::cache {

class DiskCache {
 public:
  static constexpr std::uint64_t kDefaultMaxBytes = std::uint64_t{1} << 30;

  // `max_bytes` 0 means kDefaultMaxBytes. The folder is created (0700) if missing, unless
  // `create` is false (for tools that only inspect a cache).
  DiskCache(const std::filesystem::path& dir, std::uint64_t max_bytes, bool create = true);

  // KREG_CACHE_DIR, else $XDG_CACHE_HOME/kreg, else ~/.cache/kreg; empty if none is known.
  static std::filesystem::path default_dir();
  // KREG_CACHE_MAX_BYTES, else kDefaultMaxBytes.
  static std::uint64_t default_max_bytes();

  // What a DiskCache for `dir` would find, told without creating or changing anything.
  static FolderCheck inspect(const std::filesystem::path& dir);
  // `dir` as a DiskCache keeps it: absolute and normal, so that a change of the current
  // folder does not move the cache.
  static std::filesystem::path absolute(const std::filesystem::path& dir);

  const std::filesystem::path& dir() const noexcept { return dir_; }
  // False when the folder could not be made or was refused: then every call is a no-op.
  bool usable() const noexcept { return usable_; }

  // The payload stored under `key`, or std::nullopt. A hit bumps the entry's modification
  // time, which eviction uses as "last used" (mounts with noatime would never age it).
  std::optional<std::string> load(std::string_view key);
  // Publishes the payload atomically; may evict least recently used entries after.
  void store(std::string_view key, std::string_view payload);

  // The digests (file names) of every entry, for tools that move entries elsewhere.
  std::vector<std::string> digests() const;
  // The entry named `digest`, if it is trusted, decodes and is named after its own key;
  // `why` says why not. Does not count as a use.
  std::optional<DecodedEntry> load_entry(std::string_view digest, std::string* why = nullptr) const;

  struct Usage {
    std::uint64_t entries = 0;
    std::uint64_t bytes = 0;
  };
  Usage usage() const;
  // Removes least recently used entries until at most `target_bytes` remain, and temp files
  // older than an hour (left by crashed writers). Returns the entries removed.
  std::size_t trim(std::uint64_t target_bytes);
  std::size_t clear();
  struct Verify {
    std::size_t good = 0;
    std::size_t bad = 0;      // unreadable, corrupt, misnamed or refused
    std::size_t removed = 0;  // of the bad ones, with remove_bad
  };
  // Reads every entry; `remove_bad` deletes the bad ones; `good` (if set) sees each good one.
  Verify verify(bool remove_bad, const std::function<void(const DecodedEntry&)>& good = {});

 private:
  // Creates the cache's folders if missing and checks each can be trusted; `why` says why not.
  bool prepare_folders(std::string& why) const;
  std::filesystem::path entry_path(std::string_view digest) const;
  void maybe_evict(std::uint64_t added);
  std::size_t trim_locked(std::uint64_t target_bytes);

  std::filesystem::path dir_;   // the user's folder
  std::filesystem::path root_;  // dir_/v<format>
  std::uint64_t max_bytes_;
  bool usable_ = false;
  std::atomic<std::int64_t> approx_bytes_{-1};  // unknown until first counted
  std::mutex evict_mutex_;
  std::atomic<bool> warned_write_{false};
  std::atomic<bool> warned_refused_{false};
};

}  // namespace kreg::cache
