#include "registry/registry_impl.hpp"

#include "cache/disk_cache.hpp"
#include "cache/disk_writer.hpp"
#include "cache/precompiled.hpp"
#include "compiler/cubin.hpp"
#include "compiler/nvrtc_compiler.hpp"
#include "compiler/wire.hpp"
#include "compiler/worker_pool.hpp"
#include "core/embedded.hpp"
#include "core/env.hpp"
#include "core/hash.hpp"
#include "core/log.hpp"
#include "cuda/device.hpp"
#include "cuda/kernel_factory.hpp"
#include "cuda/library.hpp"
#include "registry/key_coverage.hpp"
#include "registry/manifest.hpp"
#include "registry/request.hpp"

#include <kreg/error.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <optional>
#include <set>

namespace kreg::detail {
namespace {

using Clock = std::chrono::steady_clock;

std::uint64_t nanoseconds_since(Clock::time_point start) {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count());
}

// "sm_90", "sm_90a" or "sm_100f": the forms NVRTC accepts for CUBIN output.
bool valid_arch(std::string_view arch) {
  if (arch.size() < 4 || arch.substr(0, 3) != "sm_") return false;
  std::string_view digits = arch.substr(3);
  if (digits.back() == 'a' || digits.back() == 'f') digits.remove_suffix(1);
  return !digits.empty() &&
         std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; });
}

int arch_number(std::string_view arch) {
  int value = 0;
  for (char c : arch.substr(3)) {
    if (c < '0' || c > '9') break;
    value = value * 10 + (c - '0');
  }
  return value;
}

std::string resolve_arch(const RegistryOptions& options) {
  std::string arch = options.arch;
  if (arch.empty()) arch = core::env_string("KREG_ARCH").value_or("");
  if (arch.empty()) return arch;
  if (!valid_arch(arch)) {
    throw Error(ErrorCode::InvalidArgument,
                "kreg: '" + arch + "' is not a target arch (expected e.g. sm_90 or sm_90a)");
  }
  const std::vector<int> supported = compiler::supported_archs();
  if (std::find(supported.begin(), supported.end(), arch_number(arch)) == supported.end()) {
    std::string list;
    for (int a : supported) list += (list.empty() ? "sm_" : ", sm_") + std::to_string(a);
    throw Error(ErrorCode::InvalidArgument, "kreg: NVRTC " + compiler::version() +
                                                " cannot target " + arch + " (it supports " + list +
                                                ")");
  }
  return arch;
}

// A message of a lower layer, to be quoted in one that names the kernel.
std::string without_prefix(std::string_view message) {
  constexpr std::string_view kPrefix = "kreg: ";
  if (message.starts_with(kPrefix)) message.remove_prefix(kPrefix.size());
  return std::string(message);
}

// Compiles a trivial kernel so that NVRTC's one-time start-up is paid off the caller's path.
void warm_compiler(std::string arch) {
  try {
    if (arch.empty()) {
      const std::vector<int> supported = compiler::supported_archs();
      if (supported.empty()) return;
      arch = "sm_" + std::to_string(supported.front());
    }
    compiler::Request request;
    request.program_name = "kreg_warm_up.cu";
    request.source = "extern \"C\" __global__ void kreg_warm_up(int* p) { if (p) *p = 0; }\n";
    request.arch = arch;
    request.options = {"-minimal"};
    const auto start = Clock::now();
    compiler::compile(request);
    core::log_write(
        core::LogLevel::Debug,
        "NVRTC warmed up in " + std::to_string(nanoseconds_since(start) / 1000000) + " ms");
  } catch (...) {
    // Warming is an optimization; any real problem resurfaces on the first compile.
  }
}

}  // namespace

RegistryImpl::RegistryImpl(RegistryOptions options) : options_(std::move(options)) {
  core::log_level();  // KREG_LOG is read once; a bad value is reported now, not at a first log
  options_.arch = resolve_arch(options_);
  nvtx_ = core::env_flag("KREG_NVTX", false);
  if (options_.disk_cache && core::env_flag("KREG_DISK_CACHE", true)) {
    auto disk = std::make_unique<cache::DiskCache>(
        options_.cache_dir.empty() ? cache::DiskCache::default_dir() : options_.cache_dir,
        options_.cache_max_bytes != 0 ? options_.cache_max_bytes
                                      : cache::DiskCache::default_max_bytes());
    if (disk->usable()) {
      disk_ = std::move(disk);
      disk_writer_ = std::make_unique<cache::DiskWriter>(*disk_);
    }
    // The toolkit's folder too: a source that fails with -minimal is compiled again with
    // it on the include path, which its first request (the key) does not show.
    disk_salt_ =
        "kreg disk key 3; " + compiler::identity() + "; " + compiler::toolkit_include_dir() + "\n";
  }
  precompiled_ = options_.precompiled && core::env_flag("KREG_PRECOMPILED", true);
  precompiled_constants_ = core::env_flag("KREG_PRECOMPILED_CONSTANTS", true);
  for (const EmbeddedFile& file : embedded_sources()) {
    register_source(std::filesystem::path(file.name).stem().string(), std::string(file.text), {});
  }
  if (options_.warm_compiler) {
    warm_thread_ = std::jthread([this, arch = options_.arch](const std::stop_token& stop) {
      // NVRTC compiles one program at a time, so a compile asked for right after the
      // registry was made would only wait behind the warm-up and pay for both: such a
      // compile starts NVRTC itself. A program that compiles later finds it warm.
      constexpr std::chrono::milliseconds kGrace{10};
      {
        std::unique_lock lock(warm_mutex_);
        if (warm_wake_.wait_for(lock, stop, kGrace, [this] { return compile_requested_; })) return;
      }
      if (!stop.stop_requested()) warm_compiler(arch);
    });
  }
}

RegistryImpl::~RegistryImpl() = default;

namespace {

// Registering a source again with the same text, entries and options changes nothing, so
// it keeps what was built from it (a custom kernel re-registers its source per object).
bool same_content(const registry::Source& a, const registry::Source& b) {
  if (a.text != b.text || a.options != b.options || a.entries.size() != b.entries.size()) {
    return false;
  }
  for (std::size_t i = 0; i < a.entries.size(); ++i) {
    if (a.entries[i].name != b.entries[i].name ||
        a.entries[i].expression != b.entries[i].expression) {
      return false;
    }
  }
  return true;
}

}  // namespace

void RegistryImpl::register_source(std::string name, std::string text,
                                   const SourceOptions& options) {
  auto source = std::make_shared<registry::Source>(
      registry::parse_source(std::move(name), std::move(text), options));
  std::lock_guard lock(mutex_);
  auto old = sources_.find(source->name);
  for (const registry::Entry& entry : source->entries) {
    auto owner = entries_by_name_.find(entry.name);
    if (owner != entries_by_name_.end() && owner->second->name != source->name) {
      throw Error(ErrorCode::InvalidArgument,
                  "kreg: source '" + source->name + "' declares entry '" + entry.name +
                      "', which source '" + owner->second->name + "' already declares");
    }
  }
  if (old != sources_.end() && same_content(*old->second, *source)) return;
  source->id = next_source_id_++;
  if (old != sources_.end()) {
    const std::uint64_t old_id = old->second->id;
    for (const registry::Entry& entry : old->second->entries) entries_by_name_.erase(entry.name);
    table_.erase_if([&](const CacheEntry* e) { return e->source_id == old_id; });
    binaries_.drop_owner(old_id);
    core::log_write(core::LogLevel::Debug, "replaced source '" + source->name + "'");
  }
  for (const registry::Entry& entry : source->entries) entries_by_name_[entry.name] = source;
  sources_[source->name] = std::move(source);
}

Resolved RegistryImpl::resolve(std::string_view name, const Constants& constants) const {
  if (name.empty()) throw Error(ErrorCode::InvalidArgument, "kreg: an empty kernel name was given");
  Resolved r;
  r.name = std::string(name);
  {
    std::lock_guard lock(mutex_);
    auto it = entries_by_name_.find(r.name);
    if (it == entries_by_name_.end()) {
      throw Error(ErrorCode::KernelNotFound,
                  "kreg: no registered source declares kernel '" + r.name + "'");
    }
    r.source = it->second;
  }
  r.values = core::sorted_constants(constants);
  r.label = core::format_label(name, r.values);
  registry::check_constants(*r.source, r.values, r.label);
  core::LookupKey lookup;
  r.lookup_key = std::string(lookup.build(name, constants));
  const std::string constants_text = r.label.substr(r.name.size());  // "" or "|200:b1|..."
  r.binary_key = std::to_string(r.source->id) + constants_text;
  return r;
}

std::string RegistryImpl::target_arch(const registry::Source& source) {
  std::string arch = options_.arch;
  if (arch.empty()) {
    try {
      launch_context();
    } catch (const Error& e) {
      if (e.code() != ErrorCode::NoDevice) throw;
      throw Error(ErrorCode::NoDevice,
                  std::string(e.what()) +
                      "; set RegistryOptions::arch or KREG_ARCH to compile without a GPU");
    }
    std::lock_guard lock(device_mutex_);
    arch = device_arch_;
  }
  return registry::source_arch(source, std::move(arch));
}

std::shared_ptr<const Binary> RegistryImpl::build(const Resolved& r, bool pooled) {
  const registry::Source& source = *r.source;
  const std::string arch = target_arch(source);
  const std::string key = source.name + r.label.substr(r.name.size()) + "@" + arch;
  std::string storage;
  const compiler::Request request =
      registry::make_request(source, r.values, arch, options_.compile_options, storage);

  // The whole request (source, every kreg header's text, options, constants header, arch,
  // name expressions) is what shapes the binary: the precompiled set is keyed by it, and the
  // disk cache by it and NVRTC's identity (see disk_salt_).
  const std::string request_text = compiler::encode(request);
  auto reuse = [&](std::optional<std::string> payload, Origin origin,
                   Clock::time_point start) -> std::shared_ptr<const Binary> {
    if (!payload) return nullptr;
    auto cached = compiler::decode_result(*payload);
    if (!cached || !cached->ok || cached->image.empty() ||
        cached->lowered_names.size() != request.name_expressions.size()) {
      return nullptr;
    }
    const std::uint64_t ns = nanoseconds_since(start);
    auto& hits = origin == Origin::Disk ? disk_hits_ : precompiled_hits_;
    auto& time = origin == Origin::Disk ? disk_ns_ : precompiled_ns_;
    hits.fetch_add(1, std::memory_order_relaxed);
    time.fetch_add(ns, std::memory_order_relaxed);
    return make_binary(r, key, arch, origin, std::move(*cached), static_cast<double>(ns) / 1e6);
  };
  if (precompiled_ && (r.values.empty() || precompiled_constants_)) {
    const auto start = Clock::now();
    if (auto hit = reuse(cache::find_precompiled(request_text), Origin::Precompiled, start))
      return hit;
  }
  // The key holds the text of kreg's headers but not of files NVRTC reads from disk (see
  // key_coverage.hpp): a request that could read others is never looked up, and a compile
  // that did read one is not stored.
  const bool disk_ok = disk_ && registry::key_can_cover(source, request);
  const std::string disk_key = disk_ok ? disk_salt_ + request_text : std::string();
  if (disk_ok) {
    const auto start = Clock::now();
    if (auto hit = reuse(disk_->load(disk_key), Origin::Disk, start)) return hit;
  }

  compiler::WorkerPool* workers = nullptr;
  if (pooled) {
    std::lock_guard lock(pool_mutex_);
    workers = workers_.get();
  }
  auto run = [&](const compiler::Request& attempt) {
    std::optional<compiler::Result> remote;
    if (workers != nullptr) remote = workers->compile(attempt);
    if (remote) worker_compiles_.fetch_add(remote->ok ? 1 : 0, std::memory_order_relaxed);
    return remote ? std::move(*remote) : compiler::compile(attempt);
  };
  if (options_.warm_compiler) {
    {
      const std::lock_guard lock(warm_mutex_);
      compile_requested_ = true;
    }
    warm_wake_.notify_all();
  }
  compiler::Result result;
  try {
    result = registry::compile_with_fallback(request, run);
  } catch (const Error& e) {
    // NVRTC itself failed (out of memory, say): the cause alone would not say which kernel.
    failures_.fetch_add(1, std::memory_order_relaxed);
    throw Error(e.code(), "kreg: compiling '" + r.label + "' (source '" + source.name + "', key '" +
                              key + "') failed: " + without_prefix(e.what()));
  } catch (...) {
    failures_.fetch_add(1, std::memory_order_relaxed);
    throw;
  }
  if (!result.ok) {
    failures_.fetch_add(1, std::memory_order_relaxed);
    throw Error(ErrorCode::CompileError, "kreg: compiling '" + r.label + "' (source '" +
                                             source.name + "', key '" + key + "') failed:\n" +
                                             result.log);
  }
  compiles_.fetch_add(1, std::memory_order_relaxed);
  compile_ns_.fetch_add(static_cast<std::uint64_t>(result.milliseconds * 1e6),
                        std::memory_order_relaxed);
  core::log_write(core::LogLevel::Debug,
                  "compiled '" + key + "' in " + std::to_string(result.milliseconds) + " ms");
  if (disk_ok) {
    // Written in the background: the caller has its binary without waiting for the disk.
    if (const std::string why = registry::uncovered_read(request, result); why.empty()) {
      disk_writer_->submit(disk_key, compiler::encode(result));
    } else {
      core::log_write(core::LogLevel::Info, "not storing '" + key + "' on disk: " + why);
    }
  }
  const double ms = result.milliseconds;
  return make_binary(r, key, arch, Origin::Compiled, std::move(result), ms);
}

std::shared_ptr<const Binary> RegistryImpl::make_binary(const Resolved& r, const std::string& key,
                                                        const std::string& arch, Origin origin,
                                                        compiler::Result result, double ms) {
  // Only entries the image defines: one the text declares inside `#if 0`, say, has no
  // symbol, and asking for it fails (see binary_for).
  const std::vector<std::string> defined = compiler::defined_functions(result.image);
  std::vector<Binary::Symbol> symbols;
  std::size_t lowered = 0;
  for (const registry::Entry& entry : r.source->entries) {
    std::string symbol = entry.expression.empty() ? entry.name : result.lowered_names.at(lowered++);
    if (std::binary_search(defined.begin(), defined.end(), symbol)) {
      symbols.push_back({entry.name, std::move(symbol)});
    }
  }
  auto binary =
      std::make_shared<const Binary>(r.source->name, key, arch, origin, std::move(result.image),
                                     std::move(symbols), std::move(result.log), ms);
  std::lock_guard lock(mutex_);
  all_binaries_.push_back(binary);
  return binary;
}

std::shared_ptr<registry::BinarySlot> RegistryImpl::binary_for(const Resolved& r, bool pooled) {
  std::shared_ptr<registry::BinarySlot> slot =
      binaries_.get_or_build(r.binary_key, r.source->id, [&] { return build(r, pooled); });
  const Binary& binary = *slot->binary;
  if (binary.symbol(r.name).empty()) {
    failures_.fetch_add(1, std::memory_order_relaxed);
    throw Error(ErrorCode::CompileError,
                "kreg: compiling '" + r.label + "' (source '" + r.source->name + "', key '" +
                    binary.key() + "') gave an image without kernel '" + r.name +
                    "': the source declares it, but NVRTC never compiled it (is it inside an "
                    "#if that is false, or written by a macro that expands to something else?)");
  }
  return slot;
}

const CacheEntry& RegistryImpl::entry_for(const Resolved& r, bool pooled) {
  std::shared_ptr<registry::BinarySlot> slot = binary_for(r, pooled);
  const std::uint64_t hash = core::hash64(r.lookup_key);
  std::lock_guard lock(mutex_);
  if (const CacheEntry* existing = table_.find(r.lookup_key, hash)) return *existing;
  auto entry = std::make_unique<CacheEntry>();
  entry->lookup_key = r.lookup_key;
  entry->label = r.label;
  entry->name = r.name;
  entry->source_id = r.source->id;
  entry->slot = std::move(slot);
  // A source replaced while this compiled: serve the caller, but cache nothing.
  auto current = sources_.find(r.source->name);
  if (current != sources_.end() && current->second->id == r.source->id) {
    table_.insert(entry.get(), hash);
  }
  all_entries_.push_back(std::move(entry));
  return *all_entries_.back();
}

const std::shared_ptr<const LaunchContext>& RegistryImpl::launch_context() {
  std::lock_guard lock(device_mutex_);
  if (!launch_) {
    auto device = std::make_shared<const cuda::Device>(options_.device);
    device_arch_ = device->info().arch();
    launch_ = KernelFactory::make_context(device, nvtx_);
    device_ = std::move(device);
  }
  return launch_;
}

bool RegistryImpl::device_present() {
  try {
    launch_context();
    return true;
  } catch (const Error&) {
    return false;
  }
}

const Kernel& RegistryImpl::load(const CacheEntry& entry) {
  if (const Kernel* kernel = entry.kernel.load(std::memory_order_acquire)) return *kernel;
  std::lock_guard entry_lock(entry.load_mutex);
  if (const Kernel* kernel = entry.kernel.load(std::memory_order_acquire)) return *kernel;
  std::shared_ptr<const LaunchContext> context = launch_context();
  registry::BinarySlot& slot = *entry.slot;
  const Binary& binary = *slot.binary;
  std::shared_ptr<const cuda::Library> library;
  try {
    {
      std::lock_guard slot_lock(slot.load_mutex);
      if (!slot.library) {
        const auto start = Clock::now();
        try {
          slot.library = std::make_shared<const cuda::Library>(binary.image(), binary.key());
        } catch (const Error& e) {
          throw Error(e.code(), "kreg: kernel '" + entry.label + "': " + without_prefix(e.what()));
        }
        loads_.fetch_add(1, std::memory_order_relaxed);
        load_ns_.fetch_add(nanoseconds_since(start), std::memory_order_relaxed);
      }
      library = slot.library;
    }
    const std::string_view symbol = binary.symbol(entry.name);
    auto kernel = KernelFactory::make(entry.name, entry.label, slot.binary, std::move(library),
                                      symbol, std::move(context));
    std::lock_guard lock(mutex_);
    all_kernels_.push_back(std::move(kernel));
    entry.kernel.store(all_kernels_.back().get(), std::memory_order_release);
    return *all_kernels_.back();
  } catch (...) {
    failures_.fetch_add(1, std::memory_order_relaxed);
    // Not ready, so not cached: is_cached and cached_count must not count it. The binary
    // stays cached; the next get builds a new entry and tries the load again.
    std::lock_guard lock(mutex_);
    table_.erase_if([&](const CacheEntry* e) { return e == &entry; });
    throw;
  }
}

const Kernel& RegistryImpl::get_slow(std::string_view name, const Constants& constants) {
  Resolved r = resolve(name, constants);
  launch_context();  // no GPU: fail before spending a compile on it
  return load(entry_for(r));
}

const Binary& RegistryImpl::compile(std::string_view name, const Constants& constants) {
  return *binary_for(resolve(name, constants))->binary;
}

bool RegistryImpl::is_cached(std::string_view name, const Constants& constants) const {
  core::LookupKey builder;
  const std::string_view key = builder.build(name, constants);
  return table_.find(key, core::hash64(key)) != nullptr;
}

std::size_t RegistryImpl::cached_count() const {
  std::lock_guard lock(mutex_);
  return table_.size();
}

std::size_t RegistryImpl::source_count() const {
  std::lock_guard lock(mutex_);
  return sources_.size();
}

Stats RegistryImpl::stats() const {
  Stats s;
  s.memory_hits = memory_hits_.total();
  s.compiles = compiles_.load(std::memory_order_relaxed);
  s.disk_hits = disk_hits_.load(std::memory_order_relaxed);
  s.precompiled_hits = precompiled_hits_.load(std::memory_order_relaxed);
  s.precompiled_ms = static_cast<double>(precompiled_ns_.load(std::memory_order_relaxed)) / 1e6;
  s.disk_ms = static_cast<double>(disk_ns_.load(std::memory_order_relaxed)) / 1e6;
  s.worker_compiles = worker_compiles_.load(std::memory_order_relaxed);
  s.failures = failures_.load(std::memory_order_relaxed);
  s.loads = loads_.load(std::memory_order_relaxed);
  s.compile_ms = static_cast<double>(compile_ns_.load(std::memory_order_relaxed)) / 1e6;
  s.load_ms = static_cast<double>(load_ns_.load(std::memory_order_relaxed)) / 1e6;
  return s;
}

std::vector<std::string> RegistryImpl::source_names() const {
  std::lock_guard lock(mutex_);
  std::vector<std::string> names;
  for (const auto& [name, source] : sources_) names.push_back(name);
  return names;
}

std::vector<std::string> RegistryImpl::entry_names(std::string_view source) const {
  return source_info(source).entries;
}

void RegistryImpl::write_manifest(const std::filesystem::path& path) const {
  std::vector<KernelRequest> served;
  {
    std::lock_guard lock(mutex_);
    std::set<std::string_view> seen;
    for (const auto& entry : all_entries_) {
      if (!seen.insert(entry->label).second) continue;
      const std::string_view constants = std::string_view(entry->label).substr(entry->name.size());
      served.push_back(
          {entry->name, parse_constants(constants.empty() ? constants : constants.substr(1))});
    }
  }
  registry::write_manifest(path, served);
}

SourceInfo RegistryImpl::source_info(std::string_view name) const {
  std::shared_ptr<const registry::Source> source;
  {
    std::lock_guard lock(mutex_);
    auto it = sources_.find(name);
    if (it == sources_.end()) {
      throw Error(ErrorCode::KernelNotFound, "kreg: no source named '" + std::string(name) + "'");
    }
    source = it->second;
  }
  SourceInfo info;
  info.name = source->name;
  for (const registry::Entry& entry : source->entries) info.entries.push_back(entry.name);
  for (const registry::ConstantDecl& decl : source->constants) {
    info.constants.push_back(
        {decl.index, decl.type == registry::ConstantType::Bool, decl.name, decl.has_default});
  }
  info.specializations = source->specializations;
  info.options = source->options;
  info.arch_specific = source->arch_specific;
  return info;
}

std::filesystem::path RegistryImpl::cache_dir() const {
  return disk_ ? disk_->dir() : std::filesystem::path();
}

void RegistryImpl::flush_disk_cache() {
  if (disk_writer_) disk_writer_->flush();
}

bool RegistryImpl::can_load() {
  if (!device_present()) return false;
  if (options_.arch.empty()) return true;
  std::lock_guard lock(device_mutex_);
  // sm_90a and sm_90f load where sm_90 does.
  std::string target = options_.arch;
  while (!target.empty() && (target.back() == 'a' || target.back() == 'f')) target.pop_back();
  return target == device_arch_;
}

std::string RegistryImpl::arch() {
  if (!options_.arch.empty()) return options_.arch;
  if (!device_present()) return {};
  std::lock_guard lock(device_mutex_);
  return device_arch_;
}

}  // namespace kreg::detail
