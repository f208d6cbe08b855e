#pragma once
/// \file
/// A registry's counters (`Registry::stats()`), and the table of their fields that the CLI's
/// JSON, the Python `Stats` and anything else that lists them read, so that a new counter is
/// added in one place.

#include <cstdint>
#include <span>
#include <string_view>

namespace kreg {

/// Counters since the registry was created.
struct Stats {
  std::uint64_t memory_hits = 0;       ///< `get` calls served from memory.
  std::uint64_t disk_hits = 0;         ///< Binaries read from the disk cache.
  std::uint64_t precompiled_hits = 0;  ///< Binaries taken from the embedded precompiled set.
  std::uint64_t compiles = 0;          ///< Successful NVRTC compiles.
  std::uint64_t worker_compiles = 0;   ///< Of those, compiled in worker processes.
  /// Of those, compiles that made a precompiled header of their leading #include lines, and
  /// compiles that used one (docs/registry.md, "Precompiled headers").
  std::uint64_t pch_creations = 0;
  std::uint64_t pch_uses = 0;
  std::uint64_t failures = 0;         ///< Failed compiles and loads.
  std::uint64_t loads = 0;            ///< Binaries loaded into the driver.
  double compile_ms = 0;              ///< Wall time spent in successful compiles.
  double disk_ms = 0;                 ///< Wall time spent reading disk-cache hits.
  double precompiled_ms = 0;          ///< Wall time spent taking precompiled binaries.
  double load_ms = 0;                 ///< Wall time spent loading binaries.
  std::uint64_t remote_hits = 0;      ///< Binaries fetched from the remote cache.
  std::uint64_t remote_misses = 0;    ///< Remote lookups that found no usable value.
  std::uint64_t remote_rejected = 0;  ///< Of those, values refused: corrupt, foreign or unsigned.
  std::uint64_t remote_errors = 0;    ///< Remote reads and writes that failed or timed out.
  double remote_ms = 0;               ///< Wall time spent on remote lookups, hits or not.
};

/// One field of `Stats`: its name (as in the struct, in JSON and in Python) and the member
/// it is, a count or a time in milliseconds (exactly one of the two is set).
struct StatsField {
  std::string_view name;
  std::uint64_t Stats::*count = nullptr;
  double Stats::*ms = nullptr;

  /// The field's value in `s`, as a double.
  double value(const Stats& s) const noexcept {
    return count != nullptr ? static_cast<double>(s.*count) : s.*ms;
  }
};

/// Every field of `Stats`, in declaration order.
std::span<const StatsField> stats_fields() noexcept;

}  // namespace kreg
