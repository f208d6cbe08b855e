#pragma once
/// \file
/// The fleet-wide cache on Redis, from outside a registry: check it, and move entries between
/// it and a disk cache (see docs/cache.md, "The remote cache"). Registries use it on their
/// own when `RegistryOptions::remote` or `KREG_REMOTE_CACHE` names a server.

#include <kreg/types.hpp>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace kreg {

struct RemoteCacheStatus {
  bool configured = false;  ///< a URL is set (in the options or `KREG_REMOTE_CACHE`)
  std::string url;
  std::string key_prefix;
  bool read_only = false;
  bool signed_entries = false;  ///< a secret is set: entries are signed, unsigned ones refused
  bool reachable = false;
  std::string error;  ///< why it is not reachable
  double ping_ms = 0;
  std::string server_version;
  std::uint64_t used_memory = 0;  ///< bytes
  std::uint64_t max_memory = 0;   ///< bytes; 0: no bound
  std::string eviction_policy;
  std::uint64_t keys = 0;  ///< keys under the prefix (counted only with `count_keys`)
};

/// Connects (ignoring any back-off), pings and reads the server's figures. Never throws for
/// an unreachable server; throws `InvalidArgument` for a malformed URL.
RemoteCacheStatus remote_cache_status(const RemoteCacheOptions& options = {},
                                      bool count_keys = false);

/// What a push or a pull did, entry by entry.
struct TransferReport {
  std::size_t transferred = 0;
  std::size_t missing = 0;   ///< not at the source
  std::size_t rejected = 0;  ///< at the source, but corrupt, foreign or not signed as required
  std::size_t failed = 0;    ///< the server did not answer or refused the write
  std::vector<std::string> problems;  ///< "digest: reason", one per entry not transferred
};

/// Sends entries of the disk cache at `dir` (empty: the default folder) to the server: every
/// entry, or those named by `digests` (`Registry::entry_digests`). Signed when a secret is set.
TransferReport remote_cache_push(const RemoteCacheOptions& options,
                                 const std::filesystem::path& dir = {},
                                 const std::vector<std::string>& digests = {});

/// Fetches the entries named by `digests` from the server into the disk cache at `dir`, each
/// checked as a registry checks a remote hit.
TransferReport remote_cache_pull(const RemoteCacheOptions& options,
                                 const std::vector<std::string>& digests,
                                 const std::filesystem::path& dir = {});

}  // namespace kreg
