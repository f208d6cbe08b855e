#include <kreg/registry.hpp>

#include "core/hash.hpp"
#include "core/label.hpp"  // LookupKey
#include "registry/manifest.hpp"
#include "registry/registry_impl.hpp"

namespace kreg {

Registry::Registry(RegistryOptions options)
    : impl_(std::make_unique<registry::RegistryImpl>(std::move(options))) {}

Registry::~Registry() = default;

void Registry::register_source(std::string name, std::string text, const SourceOptions& options) {
  impl_->register_source(std::move(name), std::move(text), options);
}

const Kernel& Registry::get(std::string_view name) {
  const std::string_view key = core::LookupKey::of_name(name);
  if (const Kernel* kernel = impl_->find(key, core::hash64(key))) return *kernel;
  static const Constants none;
  return impl_->get_slow(name, none);
}

const Kernel& Registry::get(std::string_view name, const Constants& constants) {
  core::LookupKey builder;
  const std::string_view key = builder.build(name, constants);
  if (const Kernel* kernel = impl_->find(key, core::hash64(key))) return *kernel;
  return impl_->get_slow(name, constants);
}

const Binary& Registry::compile(std::string_view name, const Constants& constants) {
  return impl_->compile(name, constants);
}

std::size_t Registry::prewarm(const std::vector<std::string>& names,
                              const ProgressCallback& progress) {
  std::vector<KernelRequest> requests;
  requests.reserve(names.size());
  for (const std::string& name : names) requests.push_back({name, {}});
  return impl_->prewarm(requests, progress);
}

std::size_t Registry::prewarm(std::initializer_list<const char*> names,
                              const ProgressCallback& progress) {
  return prewarm(std::vector<std::string>(names.begin(), names.end()), progress);
}

std::size_t Registry::prewarm(const std::vector<KernelRequest>& requests,
                              const ProgressCallback& progress) {
  return impl_->prewarm(requests, progress);
}

void Registry::write_manifest(const std::filesystem::path& path) const {
  impl_->write_manifest(path);
}

std::size_t Registry::prewarm_manifest(const std::filesystem::path& path,
                                       const ProgressCallback& progress) {
  const auto [kernels, lookups] = registry::read_manifest_and_lookups(path);
  const std::size_t ready = impl_->prewarm(kernels, progress);
  impl_->warm_lookups(lookups);
  return ready;
}

std::vector<KernelRequest> read_manifest(const std::filesystem::path& path) {
  return registry::read_manifest(path);
}

PrewarmReport Registry::prewarm_all(const ProgressCallback& progress) {
  return impl_->prewarm_all(progress);
}

std::vector<KernelRequest> Registry::prewarm_all_requests() const {
  return impl_->prewarm_all_requests();
}

bool Registry::is_cached(std::string_view name, const Constants& constants) const {
  return impl_->is_cached(name, constants);
}

std::size_t Registry::cached_count() const {
  return impl_->cached_count();
}
std::size_t Registry::source_count() const {
  return impl_->source_count();
}
Stats Registry::stats() const {
  return impl_->stats();
}
std::vector<std::string> Registry::source_names() const {
  return impl_->source_names();
}
std::vector<std::string> Registry::entry_names(std::string_view source) const {
  return impl_->entry_names(source);
}
SourceInfo Registry::source_info(std::string_view source) const {
  return impl_->source_info(source);
}
std::string Registry::arch() const {
  return impl_->arch();
}
std::filesystem::path Registry::cache_dir() const {
  return impl_->cache_dir();
}

void Registry::flush_disk_cache() {
  impl_->flush_disk_cache();
}

std::vector<std::string> Registry::entry_digests(const std::vector<KernelRequest>& requests) {
  return impl_->entry_digests(requests);
}

TuneResult Registry::tune(std::string_view name, const TuneSpace& space, std::string_view bucket,
                          const TuneRun& run, const TuneOptions& options) {
  return impl_->tune(name, space, bucket, run, options);
}

std::optional<Constants> Registry::tuned(std::string_view name, const TuneSpace& space,
                                         std::string_view bucket) {
  return impl_->tuned(name, space, bucket);
}

}  // namespace kreg
