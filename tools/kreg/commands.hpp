#pragma once
// The kreg command-line tool's commands. Each returns the process exit code.

#include <kreg/kreg.hpp>

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace kreg::cli {

struct CommonOptions {
  std::string arch;                 // --arch; empty: the GPU's
  std::filesystem::path cache_dir;  // --cache-dir; empty: the default
  bool json = false;                // --json
};

struct SelfCheckOptions {
  CommonOptions common;
  unsigned jobs = 0;
};

struct PrewarmOptions {
  CommonOptions common;
  bool all = false;
  std::vector<std::string> names;  // "name" or "name|200:b1|300:i4"
  std::filesystem::path manifest;
  unsigned jobs = 0;
};

struct CacheOptions {
  CommonOptions common;
  // stats, clear, trim, verify; export; import FILE; remote stats|ping|push|pull
  std::vector<std::string> words;
  std::string target_bytes;  // trim: a size as KREG_CACHE_MAX_BYTES takes it; "" the bound
  bool remove_bad = false;
  std::filesystem::path out;       // export: the bundle to write
  std::filesystem::path manifest;  // export, push, pull: only what it lists
  bool all = false;                // push: every entry of the disk cache
  bool count_keys = false;         // remote stats: count the keys under the prefix
  std::string remote;              // the remote cache's URL; "": KREG_REMOTE_CACHE
};

struct TuneCommandOptions {
  std::filesystem::path file;  // a JSON array of shapes (docs/tuning.md)
  int warmup = 3;
  int repeats = 20;
  bool json = false;
};

struct BuildCacheOptions {
  CommonOptions common;
  std::filesystem::path out;
  std::filesystem::path manifest;
  std::filesystem::path bundle;  // also (or only, without --out) write a bundle of it
  unsigned jobs = 0;
};

int selfcheck(const SelfCheckOptions& options);
int doctor(const CommonOptions& options);
int prewarm(const PrewarmOptions& options);
int cache(const CacheOptions& options);
// kreg cache export / import / remote (fleet_commands.cpp).
int cache_export(const CacheOptions& options);
int cache_import(const CacheOptions& options);
int cache_remote(const CacheOptions& options);
// RemoteCacheOptions with `url` (empty: KREG_REMOTE_CACHE).
RemoteCacheOptions remote_options(const std::string& url);

// A folder of its own under the temp folder, removed with all in it by the destructor;
// none when `prefix` is empty.
class TemporaryFolder {
 public:
  explicit TemporaryFolder(const std::string& prefix);
  ~TemporaryFolder();
  TemporaryFolder(const TemporaryFolder&) = delete;
  TemporaryFolder& operator=(const TemporaryFolder&) = delete;
  const std::filesystem::path& path() const noexcept { return path_; }

 private:
  std::filesystem::path path_;
};

// Every counter of `stats`, by the names of stats_fields().
nlohmann::json stats_json(const Stats& stats);

// The remote cache's status as doctor shows it: JSON, and one line of text.
nlohmann::json remote_status_json(const RemoteCacheStatus& status);
std::string remote_status_line(const RemoteCacheStatus& status);
int build_cache(const BuildCacheOptions& options);
// kreg tune (tune_command.cpp).
int tune(const TuneCommandOptions& options);
int list(bool json);

// A progress bar on stderr when it is a terminal and the output is not JSON.
ProgressCallback progress_printer(bool json);
void clear_progress(bool json);

// The report of kernel, origin, milliseconds, size and registers for `requests`, after a
// prewarm that made `ready` of them ready, with the reason of each failure. In text mode it
// is printed (a table, then the failures); in JSON mode it goes to `out` for the caller to
// print as part of one document. Returns 0 if all are ready.
int report_kernels(Registry& reg, const std::vector<KernelRequest>& requests, std::size_t ready,
                   bool json, nlohmann::json& out);

// Prints "failures:" and each "label: reason", continuation lines indented.
void print_failures(const std::vector<std::pair<std::string, std::string>>& failures);

struct GpuCheck {
  std::string label;
  bool ok = false;
  std::string detail;
};

// Runs `check` (which sets whether it passed and returns the detail), turning an exception
// into a failed check with its message.
GpuCheck run_check(std::string label, const std::function<std::string(bool&)>& check);

// Launches each built-in on random data and compares with a float64 reference.
std::vector<GpuCheck> run_gpu_checks(Registry& reg);

// Runs one case of every op family (kreg::ops, on the current GPU) against float64
// references.
std::vector<GpuCheck> run_op_checks();

}  // namespace kreg::cli
