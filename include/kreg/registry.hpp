#pragma once
/// \file
/// The kernel registry: sources in, launchable kernels out.

#include <kreg/binary.hpp>
#include <kreg/constants.hpp>
#include <kreg/kernel.hpp>
#include <kreg/tune.hpp>
#include <kreg/types.hpp>

#include <cstddef>
#include <filesystem>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kreg {

namespace registry {
class RegistryImpl;
}  // namespace registry

/// The prefix that reaches a built-in entry or source whatever users registered:
/// `get("kreg::add_f32")` is always the built-in `add_f32` (see `Registry`).
inline constexpr std::string_view kBuiltinPrefix = "kreg::";

/// How a source is compiled, beyond what its text says.
struct SourceOptions {
  /// Entry names beyond those the text declares. Each is "name" for an `extern "C"`
  /// kernel, or "name=expression" for a template instantiation such as
  /// "fill_f32=fill<float>".
  std::vector<std::string> entries;
  /// NVRTC options for this source only, e.g. "-use_fast_math" or "-maxrregcount=64".
  std::vector<std::string> compile_options;
};

/// A constant a source declares.
struct ConstantInfo {
  int index = 0;
  bool is_bool = false;  ///< bool, else int
  std::string name;
  bool has_default = false;  ///< declared with KREG_CONSTANT_DEFAULT
};

/// What kreg read from a registered source.
struct SourceInfo {
  std::string name;
  std::vector<std::string> entries;        ///< entry names, in declaration order
  std::vector<ConstantInfo> constants;     ///< sorted by index
  std::vector<Constants> specializations;  ///< from `// kreg:specialization` lines
  std::vector<std::string> options;        ///< NVRTC options of this source
  bool arch_specific = false;
};

/// A constant-specialized request: an entry name and the constants to build it with.
struct KernelRequest {
  std::string name;
  Constants constants;
};

/// A thread-safe registry of CUDA C++ kernel sources that compiles each (source, constant
/// set) once, with NVRTC, when it is first needed, and caches the result.
///
/// A source's entry names are its `extern "C" __global__` functions, plus those it lists in
/// `// kreg:entry name=expression` lines or in `SourceOptions::entries`. A source may also
/// carry `// kreg:options ...` (NVRTC options), `// kreg:specialization 200:b1|300:i4`
/// (constant sets worth prewarming) and `// kreg:arch-specific` (compile for the "a"
/// variant of the arch, e.g. sm_90a). All entries of a source share one compile.
///
/// Built-in sources (kreg's own kernels) and users' sources have separate names. A user's
/// source may declare an entry a built-in declares (`add_f32`, say), or take a built-in
/// source's name: `get("add_f32")` then returns the user's kernel, and the built-in stays
/// reachable as `get("kreg::add_f32")` (`kBuiltinPrefix`). A name no user's source declares
/// reaches the built-in both ways. `source_names`, `entry_names`, `source_info` and
/// `prewarm_all_requests` spell a shadowed built-in with the prefix, so every name they give
/// reaches what they describe. Names starting with the prefix are reserved for built-ins.
///
/// Lookups that hit take no exclusive lock and allocate nothing. Concurrent misses on one
/// kernel compile once; misses on different sources compile in parallel.
class Registry {
 public:
  /// A registry with kreg's built-in sources registered (unless `RegistryOptions::builtins`
  /// is false). Nothing is compiled yet.
  explicit Registry(RegistryOptions options = {});
  ~Registry();
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  /// Adds a source, or replaces the source of the same name. Replacing drops every cached
  /// kernel and binary built from the old text (references already handed out stay valid).
  /// Registering the same text, entries and options again changes nothing.
  /// Throws `InvalidArgument` for an empty name or one starting with `kBuiltinPrefix`, a
  /// source without entries, a malformed constant declaration, or an entry name that another
  /// user's source already declares (a built-in's is allowed: see above).
  void register_source(std::string name, std::string text, const SourceOptions& options = {});

  /// The kernel for an entry name, compiled and loaded on first use.
  /// Throws `KernelNotFound`, `CompileError`, `LoadError`, `InvalidArgument` (an index the
  /// source does not declare, or an index given twice) or `NoDevice`.
  const Kernel& get(std::string_view name);
  const Kernel& get(std::string_view name, const Constants& constants);

  /// Compiles (or finds) the binary that holds `name`, without loading it. Needs no GPU
  /// when the registry has an explicit arch.
  const Binary& compile(std::string_view name, const Constants& constants = {});

  /// Makes the named kernels ready in parallel and returns how many are. Unknown names are
  /// skipped; failures are logged at debug level. Without a GPU, or for another arch than the
  /// GPU's, kernels are compiled but not loaded. A prewarm that loads also maps the first
  /// memory of kreg's array pool on the GPU, so the first allocation after it is a plain one.
  std::size_t prewarm(const std::vector<std::string>& names, const ProgressCallback& progress = {});
  /// `prewarm({"a", "b"})`: without this overload a two-name list would also read as an
  /// iterator pair for the request form.
  std::size_t prewarm(std::initializer_list<const char*> names,
                      const ProgressCallback& progress = {});
  std::size_t prewarm(const std::vector<KernelRequest>& requests,
                      const ProgressCallback& progress = {});
  /// Writes the (name, constants) set this registry has served, as JSON, so that another
  /// process can prewarm it with `prewarm_manifest`; and the `tuned` questions it was asked
  /// (the built-in ops ask one per shape bucket), so that the other process reads their
  /// records while it loads rather than at its first call. Throws `InvalidArgument` if the
  /// file cannot be written.
  void write_manifest(const std::filesystem::path& path) const;
  /// Prewarms every kernel a manifest lists, in parallel, then asks the `tuned` questions it
  /// lists (answered from the caches and remembered); returns how many kernels are ready.
  /// Names this registry does not know are skipped. Throws `InvalidArgument` for an
  /// unreadable or malformed manifest.
  std::size_t prewarm_manifest(const std::filesystem::path& path,
                               const ProgressCallback& progress = {});
  /// Prewarms every entry of every source: without constants where the source allows it,
  /// and with each listed specialization. Sources that need constants and list no
  /// specialization are skipped.
  PrewarmReport prewarm_all(const ProgressCallback& progress = {});
  /// The requests `prewarm_all` would make, in source order.
  std::vector<KernelRequest> prewarm_all_requests() const;

  /// Whether `get(name, constants)` would be served without compiling.
  bool is_cached(std::string_view name, const Constants& constants = {}) const;
  /// Ready kernels, counting each (entry, constant set) once.
  std::size_t cached_count() const;
  std::size_t source_count() const;
  Stats stats() const;

  /// The names of the registered sources, sorted.
  std::vector<std::string> source_names() const;
  /// The entry names a source declares, in declaration order. Throws `KernelNotFound`.
  std::vector<std::string> entry_names(std::string_view source) const;
  /// Everything kreg read from a source. Throws `KernelNotFound`.
  SourceInfo source_info(std::string_view source) const;
  /// The compile target: options, `KREG_ARCH`, or the device's; empty if none is known.
  std::string arch() const;
  /// The disk cache folder in use; empty when the disk cache is off or unusable.
  std::filesystem::path cache_dir() const;
  /// Waits until every binary compiled so far is in the disk cache, and in the remote cache
  /// when there is one. Compiles hand their binary back at once and write it in the
  /// background; another process sees it once written. Destroying the registry also waits.
  void flush_disk_cache();
  /// The names (32 hex digits) the disk and remote caches keep each request's binary under,
  /// for exporting or pushing only what a manifest lists; "" for a request whose binary is
  /// never cached outside the process (its compile may read files its key cannot hold).
  /// Compiles nothing. Throws as `compile` does for an unknown name or a bad constant set,
  /// and `NoDevice` when there is no target arch.
  std::vector<std::string> entry_digests(const std::vector<KernelRequest>& requests);

  /// Finds which candidate of `space` runs `name` fastest on this registry's GPU, for the
  /// problem shapes that `bucket` stands for (the caller's own words, such as
  /// "m16_n4096_k4096"). The candidates compile in parallel; then each, in the space's order,
  /// is launched by `run` `options.warmup` times, checked with `options.check`, and timed
  /// over `options.repeats` launches with CUDA events on the current stream (median).
  ///
  /// Each candidate's time is a record of the caches: in memory, on disk and in the remote
  /// cache (signed there like binaries, and carried by bundles), under the candidate's own key
  /// (its binary's storage key: source, headers, options, constants, arch, NVRTC), the GPU's
  /// name and multiprocessor count, and the bucket. A later call, in this process or another
  /// sharing a cache, times only the candidates it finds no record for: none after a first
  /// run, a new one added to the space, all of them after the source changes. A candidate
  /// that does not compile or fails the check is recorded as such and cannot win; one whose
  /// launch fails is left out of this call only. `TuneResult::timed` says how many were
  /// timed.
  ///
  /// Throws `InvalidArgument` for a bad space (see `TuneSpace::candidates`), an empty
  /// bucket, a constant index the source does not declare, or no `run` without a timer;
  /// `KernelNotFound`; `NoDevice` (the GPU timer needs a GPU; a `TuneOptions::timer` and an
  /// explicit arch do not); and `CompileError` when no candidate is ok.
  TuneResult tune(std::string_view name, const TuneSpace& space, std::string_view bucket,
                  const TuneRun& run, const TuneOptions& options = {});
  /// The winner of `space` for `bucket` from the records alone: std::nullopt when a
  /// candidate has none (nothing is compiled, launched or timed), or when none is ok. For
  /// ops that use a tuned specialization where there is one and a default otherwise: the
  /// answer is remembered, so a second call for the same candidates and bucket reads no
  /// record, until this registry tunes again or a source is replaced. Records another
  /// process stores later are seen by a new registry, not by this one's remembered answer.
  std::optional<Constants> tuned(std::string_view name, const TuneSpace& space,
                                 std::string_view bucket);

 private:
  std::unique_ptr<registry::RegistryImpl> impl_;
};

/// The registry kreg itself builds through on GPU `device`: arrays, ops and custom kernels
/// compile and cache their kernels in it. There is one per arch, shared by every GPU of that
/// arch, so a kernel compiles once however many GPUs run it. Created on first use with
/// default options (the arch set to the GPU's, the cache folder from the environment) and
/// kept until the process exits. Its `stats()` count what those kernels cost. Throws
/// `InvalidArgument` for a negative ordinal or one of 64 and above.
Registry& device_registry(int device = 0);

/// The requests a manifest lists (see `Registry::write_manifest`). Throws `InvalidArgument`
/// for an unreadable or malformed manifest.
std::vector<KernelRequest> read_manifest(const std::filesystem::path& path);

}  // namespace kreg
