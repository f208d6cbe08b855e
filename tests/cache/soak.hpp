#pragma once
// The soak: threads of one registry mix get (compile without a GPU), source replacement,
// prewarm, disk flushes and fresh registries on one cache folder for a set time, and check
// every binary they are handed against the source text that was current for the call.
// Run by the soak test in its own process and in worker processes, beside a process that
// clears, trims, verifies and removes the same folder.
//
// Each source text is one of kVariants versions of a source; a version shows in the binary
// without a GPU: in the lowered name of its entry (a template argument) and in a tag its
// data holds ("SOAK<source>V<variant>C<constant>!"), so a stale or mixed-up binary is seen.

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace kreg {
class Binary;
}

namespace kreg::test {

inline constexpr int kSoakSources = 4;
inline constexpr int kSoakVariants = 5;

// The text of version `variant` of soak source `source`.
std::string soak_source(int source, int variant);

struct SoakOptions {
  std::filesystem::path dir;
  double seconds = 10;
  unsigned threads = 4;
  std::uint64_t seed = 1;
};

struct SoakCounts {
  std::uint64_t gets = 0;          // get with a GPU, compile without; each result checked
  std::uint64_t replacements = 0;  // register_source with a new text for a name
  std::uint64_t prewarms = 0;      // prewarm calls
  std::uint64_t prewarmed = 0;     // kernels they reported ready
  std::uint64_t fresh = 0;         // new registries on the folder, each result checked
  std::uint64_t flushes = 0;
  std::uint64_t reads = 0;      // is_cached, cached_count, stats
  std::uint64_t unchecked = 0;  // results whose window of current texts held every variant
  std::uint64_t compiles = 0;   // of the shared registry, from its stats
  std::uint64_t disk_hits = 0;
  std::uint64_t errors = 0;
  std::vector<std::string> first_errors;
};

struct SoakResult {
  double seconds = 0;
  unsigned threads = 0;
  bool gpu = false;
  SoakCounts counts;
  std::string summary() const;  // one line
};

SoakResult run_soak(const SoakOptions& options);

// Why `binary` is not version `variant` of soak source `source` (no constants) for `arch`;
// empty if it is.
std::string check_soak_binary(const Binary& binary, const std::string& arch, int source,
                              int variant);

struct ChurnCounts {
  std::uint64_t clears = 0;
  std::uint64_t trims = 0;
  std::uint64_t verifies = 0;
  std::uint64_t removals = 0;  // of the whole folder
  std::uint64_t entries_removed = 0;
  std::uint64_t bad_entries = 0;  // found by verify: must stay 0
  std::string summary() const;
};

// Clears, trims, verifies and removes `dir` at random moments for `seconds`.
ChurnCounts run_churn(const std::filesystem::path& dir, double seconds, std::uint64_t seed);

}  // namespace kreg::test
