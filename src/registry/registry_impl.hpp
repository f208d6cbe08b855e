#pragma once
// The registry's state. The hit path reads a lock-free table; everything else takes
// `mutex_` briefly and never compiles or loads while holding it.

#include <kreg/registry.hpp>

#include "compiler/nvrtc_compiler.hpp"
#include "core/published_table.hpp"
#include "core/sharded_counter.hpp"
#include "core/thread_pool.hpp"
#include "registry/binary_cache.hpp"
#include "registry/source.hpp"

#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

namespace kreg::cuda {
class Device;
}
namespace kreg::compiler {
class WorkerPool;
}
namespace kreg::cache {
class DiskCache;
class DiskWriter;
}  // namespace kreg::cache

namespace kreg::detail {

// One (entry, constant set): its binary, and its loaded kernel once there is one.
struct CacheEntry {
  std::string lookup_key;  // core::LookupKey of (name, constants)
  std::string label;       // the same, as text: "name|200:b1"
  std::string name;
  std::uint64_t source_id = 0;
  std::shared_ptr<registry::BinarySlot> slot;
  // Set once, by load(); the table hands out const entries, hence mutable.
  mutable std::atomic<const Kernel*> kernel{nullptr};
  mutable std::mutex load_mutex;

  std::string_view key() const noexcept { return lookup_key; }
};

// A request resolved against the current sources.
struct Resolved {
  std::shared_ptr<const registry::Source> source;
  std::vector<core::ConstantValue> values;
  std::string name;
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
    if (kernel != nullptr) memory_hits_.add();
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
  // Whether kernels built for the target can load on this registry's GPU (there is one, and
  // the target is its arch): prewarm loads only then.
  bool can_load();

 private:
  Resolved resolve(std::string_view name, const Constants& constants) const;
  // `pooled`: compile in a worker process when the registry has started them.
  std::shared_ptr<registry::BinarySlot> binary_for(const Resolved& request, bool pooled = false);
  std::shared_ptr<const Binary> build(const Resolved& request, bool pooled);
  std::shared_ptr<const Binary> make_binary(const Resolved& request, const std::string& key,
                                            const std::string& arch, Origin origin,
                                            compiler::Result result, double ms);
  const CacheEntry& entry_for(const Resolved& request, bool pooled = false);
  // Starts the worker processes if this prewarm is large enough to pay for them.
  bool use_workers(std::size_t binaries);
  const Kernel& load(const CacheEntry& entry);
  bool device_present();
  const std::shared_ptr<const LaunchContext>& launch_context();
  std::string target_arch(const registry::Source& source);
  // Returns "label: reason" for each request that failed; counts the ready ones.
  std::vector<std::string> prewarm_items(const std::vector<KernelRequest>& requests,
                                         const ProgressCallback& progress, std::size_t& ready);
  core::ThreadPool& pool();
  std::size_t compile_processes() const;

  RegistryOptions options_;
  bool nvtx_ = false;
  std::unique_ptr<cache::DiskCache> disk_;          // null when off or unusable
  std::unique_ptr<cache::DiskWriter> disk_writer_;  // with disk_; destroyed first, draining
  std::string disk_salt_;                           // NVRTC identity: part of every disk key
  bool precompiled_ = true;            // RegistryOptions::precompiled, KREG_PRECOMPILED
  bool precompiled_constants_ = true;  // KREG_PRECOMPILED_CONSTANTS

  mutable std::mutex mutex_;  // guards everything below it, except the table's readers
  std::map<std::string, std::shared_ptr<const registry::Source>, std::less<>> sources_;
  std::unordered_map<std::string, std::shared_ptr<const registry::Source>> entries_by_name_;
  std::uint64_t next_source_id_ = 1;
  core::PublishedTable<CacheEntry> table_;
  // Every entry and kernel ever made, so that references handed out never dangle.
  std::vector<std::unique_ptr<CacheEntry>> all_entries_;
  std::vector<std::unique_ptr<Kernel>> all_kernels_;
  std::vector<std::shared_ptr<const Binary>> all_binaries_;

  registry::BinaryCache binaries_;

  std::mutex device_mutex_;
  std::shared_ptr<const cuda::Device> device_;
  std::shared_ptr<const LaunchContext> launch_;
  std::string device_arch_;

  std::mutex pool_mutex_;
  std::unique_ptr<compiler::WorkerPool> workers_;  // declared first: outlives pool_'s tasks
  std::unique_ptr<core::ThreadPool> pool_;

  mutable core::ShardedCounter memory_hits_;
  std::atomic<std::uint64_t> compiles_{0};
  std::atomic<std::uint64_t> disk_hits_{0};
  std::atomic<std::uint64_t> disk_ns_{0};
  std::atomic<std::uint64_t> precompiled_hits_{0};
  std::atomic<std::uint64_t> precompiled_ns_{0};
  std::atomic<std::uint64_t> worker_compiles_{0};
  std::atomic<std::uint64_t> failures_{0};
  std::atomic<std::uint64_t> loads_{0};
  std::atomic<std::uint64_t> compile_ns_{0};
  std::atomic<std::uint64_t> load_ns_{0};

  // The warm-up waits briefly for a first compile, which would otherwise queue behind it.
  std::mutex warm_mutex_;
  std::condition_variable_any warm_wake_;
  bool compile_requested_ = false;  // guarded by warm_mutex_
  std::jthread warm_thread_;        // last: joined first on destruction
};

}  // namespace kreg::detail
