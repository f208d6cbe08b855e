#pragma once
/// \file
/// Maintenance of the on-disk cache that registries share (see docs/cache.md).

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kreg {

/// The cache folder a default registry uses: `KREG_CACHE_DIR`, else
/// `$XDG_CACHE_HOME/kreg`, else `~/.cache/kreg`.
std::filesystem::path default_cache_dir();

/// What a registry will find in a cache folder.
enum class CacheState {
  Ready,          ///< kreg's folders are there, and this user can read and write them
  WillBeCreated,  ///< not there yet (the folder, or kreg's folders in it); they can be made
  ReadOnly,       ///< there, but no file can be added: entries are loaded, none are stored
  Unusable,       ///< a registry caches in memory only: see `CacheUsage::note`
};

/// The printable name of a state, e.g. "will_be_created".
const char* to_string(CacheState state) noexcept;

struct CacheUsage {
  std::filesystem::path dir;
  bool usable = false;  ///< false if the folder cannot be made, or is not safely ours
  CacheState state = CacheState::Unusable;
  /// Empty when Ready; else what will be created, why nothing is stored, or why the folder
  /// is unusable (a link, a file or a FIFO in its place, another owner, writable by others,
  /// permissions, a read-only file system), naming the path at fault.
  std::string note;
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
/// missing or unusable folder: it reports its state and zero counts.
CacheUsage cache_usage(const std::filesystem::path& dir = {});
/// Removes every entry; returns how many.
std::size_t cache_clear(const std::filesystem::path& dir = {});
/// Evicts least recently used entries down to `target_bytes` (default: the bound) and sweeps
/// temp files left by crashed writers; returns the entries removed.
std::size_t cache_trim(const std::filesystem::path& dir = {}, std::uint64_t target_bytes = 0);
/// Reads every entry, and judges whatever stands in an entry's place (a folder, a link, a
/// FIFO, a file larger than any entry); with `remove_bad`, deletes the bad ones.
CacheVerify cache_verify(const std::filesystem::path& dir = {}, bool remove_bad = false);

/// One tuning record of a cache folder (see `Registry::tune` and docs/tuning.md): a
/// candidate's time on one GPU for one bucket of problem shapes.
struct TuningEntry {
  std::string label;   ///< the candidate, e.g. "matmul_skinny_bf16|302:i16"
  std::string gpu;     ///< "<name>/<multiprocessors>sm"
  std::string bucket;  ///< the shape bucket it was timed for
  bool ok = false;     ///< compiled, ran and passed the check
  double ms = 0;       ///< its median time when ok
  int repeats = 0;     ///< timed launches behind the median
  std::string why;     ///< when not ok
};

/// The tuning records of a cache folder, ordered by GPU, bucket and label. Reads every entry
/// (binaries too), so it takes as long as `cache_verify`; bad entries are skipped.
std::vector<TuningEntry> cache_tuning(const std::filesystem::path& dir = {});

/// A size as `KREG_CACHE_MAX_BYTES` takes it: decimal digits, then nothing, `K`, `M` or `G`
/// (or `KiB`, `MiB`, `GiB`), e.g. `512M`. std::nullopt for anything else: zero, a sign,
/// spaces, another unit, or more than 64 bits.
std::optional<std::uint64_t> parse_size(std::string_view text);

}  // namespace kreg
