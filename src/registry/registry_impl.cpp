#include "registry/registry_impl.hpp"

#include "cache/entry.hpp"
#include "compiler/cubin.hpp"
#include "core/binary_parts.hpp"
#include "core/embedded.hpp"
#include "core/env.hpp"
#include "core/hash.hpp"
#include "core/log.hpp"
#include "core/stopwatch.hpp"
#include "cuda/capture.hpp"
#include "cuda/device.hpp"
#include "cuda/kernel_factory.hpp"
#include "cuda/library.hpp"
#include "registry/key_coverage.hpp"
#include "registry/manifest.hpp"
#include "registry/request.hpp"
#include "registry/storage_key.hpp"
#include "registry/target_arch.hpp"

#include <kreg/error.hpp>

#include <algorithm>
#include <filesystem>
#include <set>
#include <system_error>

namespace kreg::registry {
namespace {

RegistryOptions checked(RegistryOptions options) {
  core::log_level();  // KREG_LOG is read once; a bad value is reported now, not at a first log
  options.arch = registry::requested_arch(options);
  return options;
}

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

// Binary::key(): "source|200:b1@sm_90".
std::string binary_key(const Resolved& r, const std::string& arch) {
  return r.source->name + r.label.substr(r.name.size()) + "@" + arch;
}

}  // namespace

RegistryImpl::RegistryImpl(RegistryOptions options)
    : options_(checked(std::move(options))),
      nvtx_(core::env_flag("KREG_NVTX", false)),
      workers_(options_.compile_processes, prewarm_threads()),
      chain_(options_, counters_, workers_, options_.warm_compiler ? &warm_up_ : nullptr) {
  if (options_.builtins) {
    for (const core::EmbeddedFile& file : core::embedded_sources()) {
      auto source = std::make_shared<registry::Source>(registry::parse_source(
          std::filesystem::path(file.name).stem().string(), std::string(file.text), {}));
      source->id = next_source_id_++;
      source->builtin = true;
      sources_.add_builtin(std::move(source));
    }
  }
  if (options_.warm_compiler) warm_up_.start(options_.arch, options_.device);
}

RegistryImpl::~RegistryImpl() = default;

void RegistryImpl::register_source(std::string name, std::string text,
                                   const SourceOptions& options) {
  auto source = std::make_shared<registry::Source>(
      registry::parse_source(std::move(name), std::move(text), options));
  std::lock_guard lock(mutex_);
  const std::shared_ptr<const registry::Source> old = sources_.check_user(*source);
  if (old && same_content(*old, *source)) return;
  source->id = next_source_id_++;
  const std::uint64_t old_id = old ? old->id : 0;
  // Kernels a built-in served under a name this source now takes: a later get must reach
  // this source instead.
  const bool shadows = sources_.shadows_builtin(*source);
  if (old || shadows) {
    table_.erase_if([&](const CacheEntry* e) {
      return (old && e->source_id == old_id) ||
             (shadows && std::any_of(source->entries.begin(), source->entries.end(),
                                     [&](const registry::Entry& x) { return x.name == e->name; }));
    });
  }
  if (old) {
    binaries_.drop_owner(old_id);
    core::log_write(core::LogLevel::Debug, "replaced source '" + source->name + "'");
  }
  sources_.put_user(std::move(source));
  if (old || shadows) forget_winners();  // the candidates' keys changed with the source
}

Resolved RegistryImpl::resolve(std::string_view name, const Constants& constants) const {
  if (name.empty()) throw Error(ErrorCode::InvalidArgument, "an empty kernel name was given");
  Resolved r;
  r.name = std::string(name);
  {
    std::lock_guard lock(mutex_);
    std::string_view entry;
    r.source = sources_.find_entry(name, &entry);
    if (!r.source) {
      throw Error(ErrorCode::KernelNotFound,
                  "no registered source declares kernel '" + r.name + "'");
    }
    r.entry = std::string(entry);
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
      arch = start_device();
    } catch (const Error& e) {
      if (e.code() != ErrorCode::NoDevice) throw;
      throw Error(ErrorCode::NoDevice,
                  std::string(e.message()) +
                      "; set RegistryOptions::arch or KREG_ARCH to compile without a GPU");
    }
  }
  return registry::source_arch(source, std::move(arch));
}

registry::BuildRequest RegistryImpl::build_request(const Resolved& r, bool pooled) {
  std::string arch = target_arch(*r.source);
  std::string key = binary_key(r, arch);
  return {*r.source, r.values, r.label, std::move(key), std::move(arch), options_.compile_options,
          pooled};
}

std::shared_ptr<const Binary> RegistryImpl::build(const Resolved& r, bool pooled) {
  const registry::BuildRequest request = build_request(r, pooled);
  return make_binary(r, request, chain_.build(request));
}

std::shared_ptr<const Binary> RegistryImpl::make_binary(const Resolved& r,
                                                        const registry::BuildRequest& request,
                                                        registry::Found found) {
  compiler::Result& result = found.result;
  // Only entries the image defines: one the text declares inside `#if 0`, say, has no
  // symbol, and asking for it fails (see binary_for).
  const std::span<const char> image =
      found.lasting_image.empty() ? std::span<const char>(result.image) : found.lasting_image;
  const std::vector<std::string> defined = compiler::defined_functions(image);
  std::vector<Binary::Symbol> symbols;
  std::size_t lowered = 0;
  for (const registry::Entry& entry : r.source->entries) {
    std::string symbol = entry.expression.empty() ? entry.name : result.lowered_names.at(lowered++);
    if (std::binary_search(defined.begin(), defined.end(), symbol)) {
      symbols.push_back({entry.name, std::move(symbol)});
    }
  }
  auto binary = std::make_shared<const Binary>(core::BinaryParts{
      r.source->name, request.key, request.arch, found.origin, std::move(result.image),
      found.lasting_image, std::move(symbols), std::move(result.log), found.ms});
  std::lock_guard lock(mutex_);
  all_binaries_.push_back(binary);
  return binary;
}

std::shared_ptr<registry::BinarySlot> RegistryImpl::binary_for(const Resolved& r, bool pooled) {
  std::shared_ptr<registry::BinarySlot> slot =
      binaries_.get_or_build(r.binary_key, r.source->id, [&] { return build(r, pooled); });
  const Binary& binary = *slot->binary;
  if (binary.symbol(r.entry).empty()) {
    counters_.add(registry::Counter::Failures);
    throw Error(ErrorCode::CompileError,
                "compiling '" + r.label + "' (source '" + r.source->name + "', key '" +
                    binary.key() + "') gave an image without kernel '" + r.entry +
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
  entry->entry = r.entry;
  entry->source_id = r.source->id;
  entry->slot = std::move(slot);
  // A source replaced, or a built-in's name taken, while this compiled: serve the caller,
  // but cache nothing.
  if (current(r.name, r.source->id)) table_.insert(entry.get(), hash);
  all_entries_.push_back(std::move(entry));
  return *all_entries_.back();
}

bool RegistryImpl::current(std::string_view name, std::uint64_t id) const {
  const std::shared_ptr<const registry::Source> source = sources_.find_entry(name);
  return source && source->id == id;
}

namespace {

std::shared_ptr<const cuda::LaunchContext> make_launch_context(int ordinal, bool nvtx) {
  return cuda::KernelFactory::make_context(std::make_shared<const cuda::Device>(ordinal), nvtx);
}

// On start_device's own thread, which must not disturb a capture another thread runs.
std::shared_ptr<const cuda::LaunchContext> make_launch_context_beside(int ordinal, bool nvtx) {
  cuda::relax_capture_mode_on_this_thread();
  return make_launch_context(ordinal, nvtx);
}

}  // namespace

const std::shared_ptr<const cuda::LaunchContext>& RegistryImpl::launch_context() {
  std::lock_guard lock(device_mutex_);
  if (!launch_ && pending_launch_.valid()) {
    try {
      launch_ = pending_launch_.get();
    } catch (const Error&) {
      // Made again below, on this thread, so that the error is this call's own.
    }
  }
  if (!launch_) {
    if (device_arch_.empty()) device_arch_ = cuda::device_info(options_.device).arch();
    launch_ = make_launch_context(options_.device, nvtx_);
  }
  return launch_;
}

std::string RegistryImpl::start_device() {
  std::lock_guard lock(device_mutex_);
  if (device_arch_.empty()) {
    device_arch_ = cuda::device_info(options_.device).arch();  // cuInit; NoDevice without one
    if (!launch_ && !pending_launch_.valid()) {
      try {
        pending_launch_ =
            std::async(std::launch::async, make_launch_context_beside, options_.device, nvtx_);
      } catch (const std::system_error&) {
        // No thread to spare: launch_context() makes the context itself.
      }
    }
  }
  return device_arch_;
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
  std::shared_ptr<const cuda::LaunchContext> context = launch_context();
  registry::BinarySlot& slot = *entry.slot;
  const Binary& binary = *slot.binary;
  std::shared_ptr<const cuda::Library> library;
  try {
    {
      std::lock_guard slot_lock(slot.load_mutex);
      if (!slot.library) {
        const core::Stopwatch watch;
        try {
          slot.library = std::make_shared<const cuda::Library>(binary.image(), binary.key());
        } catch (const Error& e) {
          throw Error(e.code(), "kernel '" + entry.label + "': " + std::string(e.message()));
        }
        counters_.add(registry::Counter::Loads);
        counters_.add(registry::Counter::LoadNs, watch.nanoseconds());
      }
      library = slot.library;
    }
    const std::string_view symbol = binary.symbol(entry.entry);
    auto kernel = cuda::KernelFactory::make(entry.name, entry.label, slot.binary,
                                            std::move(library), symbol, std::move(context));
    std::lock_guard lock(mutex_);
    all_kernels_.push_back(std::move(kernel));
    entry.kernel.store(all_kernels_.back().get(), std::memory_order_release);
    return *all_kernels_.back();
  } catch (...) {
    counters_.add(registry::Counter::Failures);
    // Not ready, so not cached: is_cached and cached_count must not count it. The binary
    // stays cached; the next get builds a new entry and tries the load again.
    std::lock_guard lock(mutex_);
    table_.erase_if([&](const CacheEntry* e) { return e == &entry; });
    throw;
  }
}

const Kernel& RegistryImpl::get_slow(std::string_view name, const Constants& constants) {
  Resolved r = resolve(name, constants);
  // A miss compiles or loads, and a module load may be illegal in a capture: refuse it
  // before any driver call, while the capture is still valid.
  if (void* stream = cuda::launch_stream(); stream != nullptr) {
    cuda::refuse_during_capture(
        stream, "kernel '" + r.label + "' is not ready, and a get would compile or load it");
  }
  start_device();  // no GPU: fail before spending a compile on it
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
  return counters_.stats();
}

std::vector<std::string> RegistryImpl::source_names() const {
  std::lock_guard lock(mutex_);
  std::vector<std::string> names;
  for (auto& [name, source] : sources_.listing()) names.push_back(std::move(name));
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
  std::vector<TunedLookup> lookups;
  {
    std::lock_guard lock(records_mutex_);
    for (const auto& [key, lookup] : asked_) lookups.push_back(lookup);
  }
  registry::write_manifest(path, served, lookups);
}

SourceInfo RegistryImpl::source_info(std::string_view name) const {
  std::shared_ptr<const registry::Source> source;
  SourceInfo info;
  {
    std::lock_guard lock(mutex_);
    source = sources_.find_source(name);
    if (!source) {
      throw Error(ErrorCode::KernelNotFound, "no source named '" + std::string(name) + "'");
    }
    info.name = sources_.listed_name(*source);
    for (const registry::Entry& entry : source->entries) {
      info.entries.push_back(sources_.entry_name(*source, entry));
    }
  }
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
  return chain_.cache_dir();
}

void RegistryImpl::flush_disk_cache() {
  chain_.flush();
}

std::vector<std::string> RegistryImpl::entry_digests(const std::vector<KernelRequest>& requests) {
  const std::string salt = registry::storage_salt();
  std::vector<std::string> out;
  out.reserve(requests.size());
  for (const KernelRequest& k : requests) {
    const Resolved r = resolve(k.name, k.constants);
    const registry::BuildRequest request = build_request(r, false);
    out.push_back(registry::key_can_cover(*r.source, request.request)
                      ? cache::key_digest(registry::storage_key(salt, request))
                      : std::string());
  }
  return out;
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

}  // namespace kreg::registry
