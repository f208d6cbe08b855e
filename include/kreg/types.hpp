#pragma once
/// \file
/// Small value types shared by the registry and kernels.

#include <kreg/stats.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace kreg {

/// A launch extent, in blocks (grid) or threads (block).
struct Dim3 {
  unsigned x = 1, y = 1, z = 1;
};

/// A CUDA stream to launch on, given as its native handle (`CUstream` or `cudaStream_t`
/// convert implicitly). The default is the legacy default stream.
struct StreamRef {
  void* native = nullptr;
  constexpr StreamRef() = default;
  constexpr StreamRef(std::nullptr_t) {}                 // NOLINT(google-explicit-constructor)
  constexpr StreamRef(void* handle) : native(handle) {}  // NOLINT(google-explicit-constructor)
};

/// Where a binary came from.
enum class Origin {
  Compiled,     ///< Compiled by NVRTC in this process.
  Disk,         ///< Read from the on-disk cache.
  Precompiled,  ///< Compiled by nvcc at build time and embedded in the library.
  Remote,       ///< Fetched from the remote cache (Redis) and checked.
};

/// The printable name of an origin, e.g. "compiled".
const char* to_string(Origin origin) noexcept;

/// The fleet-wide cache tier: a Redis server that registries on many machines share, asked
/// after the disk cache and before a compile (see docs/cache.md, "The remote cache"). Off
/// unless a URL is given here or in `KREG_REMOTE_CACHE`.
struct RemoteCacheOptions {
  /// `redis://host[:port][/db]` or `unix:///path/to/socket[?db=N]`. Either form may end in
  /// query attributes that set the fields below: `prefix=`, `read_only=1`,
  /// `connect_timeout_ms=`, `timeout_ms=`, `ttl=` (seconds). Empty: `KREG_REMOTE_CACHE`;
  /// empty there too: no remote tier.
  std::string url;
  /// Turns the tier off even when `url` or `KREG_REMOTE_CACHE` names a server.
  bool enabled = true;
  /// Put in front of every Redis key, so that several caches can share one database.
  std::string key_prefix = "kreg:";
  /// Only read: never write compiles (or anything else) to the server.
  bool read_only = false;
  /// How long a connection may take to open.
  std::chrono::milliseconds connect_timeout{100};
  /// How long any one wait on the server (a send, or a reply) may take.
  std::chrono::milliseconds operation_timeout{500};
  /// How long the tier is skipped after the server failed to answer or refused a write.
  std::chrono::milliseconds backoff{30000};
  /// Expiry of written entries; zero: none (the server's eviction policy decides).
  std::chrono::seconds ttl{0};
  /// The shared secret entries are signed with (HMAC-SHA-256). With one, unsigned or badly
  /// signed values are refused. Empty: `KREG_REMOTE_CACHE_SECRET`, else the file below.
  std::string secret;
  /// A file holding the secret (its first line). Empty: `KREG_REMOTE_CACHE_SECRET_FILE`.
  std::filesystem::path secret_file;
};

/// How a registry is set up. Every field has a sensible default.
struct RegistryOptions {
  /// Compile target such as "sm_90". Empty: `KREG_ARCH` if set, else the device's arch.
  std::string arch;
  /// On-disk cache folder. Empty: `KREG_CACHE_DIR`, else `$XDG_CACHE_HOME/kreg` or
  /// `~/.cache/kreg`.
  std::filesystem::path cache_dir;
  /// Keep compiled binaries on disk across processes. `KREG_DISK_CACHE=0` turns it off.
  bool disk_cache = true;
  /// Size bound of the disk cache; 0: `KREG_CACHE_MAX_BYTES`, else 1 GiB.
  std::uint64_t cache_max_bytes = 0;
  /// Take built-in kernels from the set precompiled at build time when it holds machine code
  /// for the target. `KREG_PRECOMPILED=0` turns it off; `KREG_PRECOMPILED_CONSTANTS=0` turns
  /// it off for specialized kernels only.
  bool precompiled = true;
  /// Options added to every NVRTC compile, after kreg's own and before a source's.
  std::vector<std::string> compile_options;
  /// The GPU whose arch is the default target and whose primary context kreg uses when a
  /// launching thread has no current context.
  int device = 0;
  /// Start NVRTC on a background thread just after the registry is created (10 ms after,
  /// unless a compile comes first), so that its one-time start-up is not paid by a later
  /// first compile. A compile that comes first starts NVRTC itself rather than queue
  /// behind the warm-up.
  bool warm_compiler = true;
  /// Threads used by `prewarm*`; 0 means one per hardware thread.
  unsigned prewarm_threads = 0;
  /// Compile worker processes for large prewarms. NVRTC serializes most of a compile within
  /// a process, so a prewarm of many sources compiles them in `kreg-nvrtc-worker` processes,
  /// one per prewarm thread. -1: automatic (on when the worker executable is found);
  /// 0: never; N: at most N. `KREG_COMPILE_PROCESSES` overrides it.
  int compile_processes = -1;
  /// Register kreg's built-in sources. Without them the registry holds only what users
  /// register; ops and arrays are unaffected, as they use registries of their own.
  bool builtins = true;
  /// The remote (Redis) cache tier; off unless a URL is given here or in the environment.
  RemoteCacheOptions remote;
};

/// What `prewarm_all` did.
struct PrewarmReport {
  std::size_t warmed = 0;             ///< Kernels now ready.
  std::size_t skipped = 0;            ///< Kernels that need constants nobody gave.
  std::vector<std::string> failures;  ///< "label: reason", one per kernel that failed.
};

/// One step of a prewarm, reported to the progress callback.
struct PrewarmProgress {
  std::size_t done = 0;   ///< Items finished so far, this one included.
  std::size_t total = 0;  ///< Items in this prewarm.
  std::string_view label;
  bool ok = false;
};

/// Called once per finished item, from worker threads, one call at a time.
using ProgressCallback = std::function<void(const PrewarmProgress&)>;

}  // namespace kreg
