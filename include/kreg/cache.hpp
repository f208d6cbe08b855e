#pragma once
/// \file
/// Maintenance of the on-disk cache that registries share (see docs/cache.md).

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string_view>

namespace kreg {

/// The cache folder a default registry uses: `KREG_CACHE_DIR`, else
/// `$XDG_CACHE_HOME/kreg`, else `~/.cache/kreg`.
std::filesystem::path default_cache_dir();

struct CacheUsage {
  std::filesystem::path dir;
  bool usable = false;  ///< false if the folder cannot be made, or is not safely ours
  std::uint64_t entries = 0;
  std::uint64_t bytes = 0;
  std::uint64_t max_bytes = 0;  ///< the bound eviction keeps (`KREG_CACHE_MAX_BYTES`)
};

struct CacheVerify {
  std::size_t good = 0;
  std::size_t bad = 0;      ///< unreadable, corrupt, misnamed or not safely ours
  std::size_t removed = 0;  ///< of the bad ones, those `remove_bad` deleted
};

/// Each takes the folder (empty: the default one), never creates it, and never throws for a
/// missing or unusable folder: it reports `usable = false` or zero counts.
CacheUsage cache_usage(const std::filesystem::path& dir = {});
/// Removes every entry; returns how many.
std::size_t cache_clear(const std::filesystem::path& dir = {});
/// Evicts least recently used entries down to `target_bytes` (default: the bound) and sweeps
/// temp files left by crashed writers; returns the entries removed.
std::size_t cache_trim(const std::filesystem::path& dir = {}, std::uint64_t target_bytes = 0);
/// Reads every entry, and judges whatever stands in an entry's place (a folder, a link, a
/// FIFO, a file larger than any entry); with `remove_bad`, deletes the bad ones.
CacheVerify cache_verify(const std::filesystem::path& dir = {}, bool remove_bad = false);

/// A size as `KREG_CACHE_MAX_BYTES` takes it: decimal digits, then nothing, `K`, `M` or `G`
/// (or `KiB`, `MiB`, `GiB`), e.g. `512M`. std::nullopt for anything else: zero, a sign,
/// spaces, another unit, or more than 64 bits.
std::optional<std::uint64_t> parse_size(std::string_view text);

}  // namespace kreg
