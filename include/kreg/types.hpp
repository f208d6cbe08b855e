#pragma once
/// \file
/// Small value types shared by the registry and kernels.

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
};

/// The printable name of an origin, e.g. "compiled".
const char* to_string(Origin origin) noexcept;

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
};

/// Counters since the registry was created.
struct Stats {
  std::uint64_t memory_hits = 0;       ///< `get` calls served from memory.
  std::uint64_t disk_hits = 0;         ///< Binaries read from the disk cache.
  std::uint64_t precompiled_hits = 0;  ///< Binaries taken from the embedded precompiled set.
  std::uint64_t compiles = 0;          ///< Successful NVRTC compiles.
  std::uint64_t worker_compiles = 0;   ///< Of those, compiled in worker processes.
  std::uint64_t failures = 0;          ///< Failed compiles and loads.
  std::uint64_t loads = 0;             ///< Binaries loaded into the driver.
  double compile_ms = 0;               ///< Wall time spent in successful compiles.
  double disk_ms = 0;                  ///< Wall time spent reading disk-cache hits.
  double precompiled_ms = 0;           ///< Wall time spent taking precompiled binaries.
  double load_ms = 0;                  ///< Wall time spent loading binaries.
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
