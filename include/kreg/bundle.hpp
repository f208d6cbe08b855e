#pragma once
/// \file
/// Cache bundles: one file holding disk-cache entries, to bake into a container image or
/// carry to a volume (see docs/cache.md, "Bundles"). Each entry keeps its full key and
/// checksum, and is signed when a secret is set, so a damaged or forged entry is refused on
/// import without costing the others.

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

namespace kreg {

struct BundleOptions {
  /// Signs entries on export; on import, refuses entries not signed with it. Empty:
  /// `KREG_REMOTE_CACHE_SECRET`, else the file below, else no signatures.
  std::string secret;
  /// A file holding the secret (its first line). Empty: `KREG_REMOTE_CACHE_SECRET_FILE`.
  std::filesystem::path secret_file;
};

struct BundleReport {
  std::size_t entries = 0;            ///< written (export) or added to the cache (import)
  std::size_t refused = 0;            ///< damaged, foreign, or not signed as required
  std::size_t missing = 0;            ///< export: named, but not in the cache
  std::vector<std::string> problems;  ///< one line per entry refused or missing
};

/// Writes the entries of the disk cache at `dir` (empty: the default folder) into `file`,
/// atomically: every entry, or those named by `digests` (`Registry::entry_digests`).
/// Throws `kreg::Error` if the file cannot be written or the folder is not a usable cache.
BundleReport export_bundle(const std::filesystem::path& file, const std::filesystem::path& dir = {},
                           const std::vector<std::string>& digests = {},
                           const BundleOptions& options = {});

/// Checks each entry of `file` and adds the good ones to the disk cache at `dir` (empty: the
/// default folder, created if missing). Throws `kreg::Error` if the file is not a bundle or the
/// folder is not a usable cache; a bad entry is counted and skipped, never fatal.
BundleReport import_bundle(const std::filesystem::path& file, const std::filesystem::path& dir = {},
                           const BundleOptions& options = {});

}  // namespace kreg
