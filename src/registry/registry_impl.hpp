#pragma once
// The registry's state. The hit path reads a lock-free table; everything else takes
// `mutex_` briefly and never compiles or loads while holding it.

#include <kreg/registry.hpp>

#include "cache/tuning_record.hpp"
#include "core/published_table.hpp"
#include "core/thread_pool.hpp"
#include "registry/binary_cache.hpp"
#include "registry/build_chain.hpp"
#include "registry/compile_workers.hpp"
#include "registry/compiler_warm_up.hpp"
#include "registry/counters.hpp"
#include "registry/manifest.hpp"
#include "registry/source.hpp"
#include "registry/source_set.hpp"
#include "registry/tier.hpp"

#include <atomic>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kreg::cuda {
class Device;
}

namespace kreg::registry {

// One (entry, constant set): its binary, and its loaded kernel once there is one.
struct CacheEntry {
  std::string lookup_key;  // core::LookupKey of (name, constants)
  // Set once, by load(); the table hands out const entries, hence mutable. Next to the key,
  // so that a hit reads one cache line of the entry.
  mutable std::atomic<const Kernel*> kernel{nullptr};
  std::string label;  // (name, constants) as text: "name|200:b1"
  std::string name;   // as requested: "add_f32" or "kreg::add_f32"
  std::string entry;  // the entry's own name in its source: "add_f32"
  std::uint64_t source_id = 0;
  std::shared_ptr<registry::BinarySlot> slot;
  mutable std::mutex load_mutex;

  std::string_view key() const noexcept { return lookup_key; }
};

// A request resolved against the current sources.
struct Resolved {
  std::shared_ptr<const registry::Source> source;
  std::vector<core::ConstantValue> values;
  std::string name;   // as requested
  std::string entry;  // the entry's own name in its source
  std::string label;
  std::string lookup_key;  // core::LookupKey
  std::string binary_key;  // "<source id>|<constants key>"
};

// Members are grouped by purpose, not packed by size: there is one per registry.
class RegistryImpl {  // NOLINT(clang-analyzer-optin.performance.Padding)
 public:
  explicit RegistryImpl(RegistryOptions options);
  ~RegistryImpl();

  void register_source(std::string name, std::string text, const SourceOptions& options);

  // The hit path: no lock, no allocation.
  const Kernel* find(std::string_view key, std::uint64_t hash) const noexcept {
    const CacheEntry* entry = table_.find(key, hash);
    if (entry == nullptr) return nullptr;
    const Kernel* kernel = entry->kernel.load(std::memory_order_acquire);
    if (kernel != nullptr) counters_.add(registry::Counter::MemoryHits);
    return kernel;
  }
  const Kernel& get_slow(std::string_view name, const Constants& constants);
  const Binary& compile(std::string_view name, const Constants& constants);

  std::size_t prewarm(const std::vector<KernelRequest>& requests, const ProgressCallback& progress);
  PrewarmReport prewarm_all(const ProgressCallback& progress);
  // What prewarm_all warms; adds the entries of sources it must skip to `skipped`.
  std::vector<KernelRequest> prewarm_all_requests(std::size_t* skipped = nullptr) const;

  bool is_cached(std::string_view name, const Constants& constants) const;
  std::size_t cached_count() const;
  std::size_t source_count() const;
  Stats stats() const;
  std::vector<std::string> source_names() const;
  std::vector<std::string> entry_names(std::string_view source) const;
  SourceInfo source_info(std::string_view name) const;
  void write_manifest(const std::filesystem::path& path) const;
  std::string arch();
  std::filesystem::path cache_dir() const;
  void flush_disk_cache();
  std::vector<std::string> entry_digests(const std::vector<KernelRequest>& requests);
  // Whether kernels built for the target can load on this registry's GPU (there is one, and
  // the target is its arch): prewarm loads only then.
  bool can_load();

  TuneResult tune(std::string_view name, const TuneSpace& space, std::string_view bucket,
                  const TuneRun& run, const TuneOptions& options);
  std::optional<Constants> tuned(std::string_view name, const TuneSpace& space,
                                 std::string_view bucket);
  // Asks `tuned` each lookup a manifest lists, so that a later ask is answered from memory;
  // one that fails (a kernel this registry lacks) is skipped.
  void warm_lookups(const std::vector<TunedLookup>& lookups);

 private:
  Resolved resolve(std::string_view name, const Constants& constants) const;
  // `pooled`: compile in a worker process when the registry has started them.
  std::shared_ptr<registry::BinarySlot> binary_for(const Resolved& request, bool pooled = false);
  std::shared_ptr<const Binary> build(const Resolved& request, bool pooled);
  std::shared_ptr<const Binary> make_binary(const Resolved& r,
                                            const registry::BuildRequest& request,
                                            registry::Found found);
  const CacheEntry& entry_for(const Resolved& request, bool pooled = false);
  // The build request for `r` on this registry's target (NoDevice without one).
  BuildRequest build_request(const Resolved& r, bool pooled);
  // Whether `name` still reaches the source `id` (not replaced or shadowed since). Under
  // mutex_.
  bool current(std::string_view name, std::uint64_t id) const;
  const Kernel& load(const CacheEntry& entry);
  bool device_present();
  const std::shared_ptr<const cuda::LaunchContext>& launch_context();
  // The GPU's arch, starting the driver if it has not started; the primary context, which
  // takes most of a cold start (about 0.1 s on an H200), is then made on a thread of its own
  // while the caller compiles or reads the disk, and launch_context() waits for it.
  std::string start_device();
  std::string target_arch(const registry::Source& source);
  // Returns "label: reason" for each request that failed; counts the ready ones.
  std::vector<std::string> prewarm_items(const std::vector<KernelRequest>& requests,
                                         const ProgressCallback& progress, std::size_t& ready);
  core::ThreadPool& pool();
  unsigned prewarm_threads() const;

  // A tuning candidate: its constants and label, and the key its record is kept under
  // (persistent: in the disk and remote caches too, else in this registry only).
  struct Tuned {
    Constants constants;
    std::string label;
    std::string record_key;
    bool persistent = false;
  };
  std::vector<Tuned> tuning_entries(std::string_view name, const TuneSpace& space,
                                    std::string_view bucket);
  // "name/multiprocessors" of the registry's GPU, or "no-gpu".
  std::string gpu_identity() const;
  std::optional<cache::TuningRecord> find_record(const Tuned& t);
  // Keeps a record in memory, and in the caches when `lasting` (a result the next run would
  // see again: a time, a compile failure, a refused check).
  void keep_record(const Tuned& t, const cache::TuningRecord& record, bool lasting);
  // Forgets the winners `tuned` found: a tuning run or a replaced source may change them.
  void forget_winners();

  RegistryOptions options_;
  bool nvtx_ = false;
  // Declared before the chain, whose tiers count, compile in the workers and wake the warm-up.
  mutable registry::Counters counters_;  // the hit path counts from a const member
  registry::CompileWorkers workers_;
  registry::CompilerWarmUp warm_up_;  // started only with RegistryOptions::warm_compiler
  registry::BuildChain chain_;

  mutable std::mutex mutex_;  // guards everything below it, except the table's readers
  registry::SourceSet sources_;
  std::uint64_t next_source_id_ = 1;
  core::PublishedTable<CacheEntry> table_;
  // Every entry and kernel ever made, so that references handed out never dangle.
  std::vector<std::unique_ptr<CacheEntry>> all_entries_;
  std::vector<std::unique_ptr<Kernel>> all_kernels_;
  std::vector<std::shared_ptr<const Binary>> all_binaries_;

  registry::BinaryCache binaries_;

  std::mutex device_mutex_;
  std::shared_ptr<const cuda::LaunchContext> launch_;
  std::string device_arch_;
  std::future<std::shared_ptr<const cuda::LaunchContext>> pending_launch_;  // start_device's

  std::mutex pool_mutex_;
  std::unique_ptr<core::ThreadPool> pool_;  // after workers_ and chain_, which its tasks use

  mutable std::once_flag gpu_identity_once_;
  mutable std::string gpu_identity_;  // gpu_identity(), once asked
  mutable std::mutex records_mutex_;
  std::map<std::string, cache::TuningRecord> records_;  // tuning records seen or made, by key
  // What `tuned` answered, by kernel, bucket and candidates: the built-in ops ask on every
  // call, and a record lookup costs a storage key per candidate.
  std::map<std::string, std::optional<Constants>, std::less<>> winners_;
  // The questions `tuned` was asked whose space has no rule, by the same key: a manifest lists
  // them (forget_winners leaves them).
  std::map<std::string, TunedLookup, std::less<>> asked_;
};

}  // namespace kreg::registry
