#include "registry/disk_tier.hpp"

#include "compiler/wire.hpp"
#include "core/log.hpp"
#include "core/stopwatch.hpp"
#include "registry/key_coverage.hpp"
#include "registry/storage_key.hpp"

namespace kreg::registry {

std::unique_ptr<DiskTier> DiskTier::open(const std::filesystem::path& dir, std::uint64_t max_bytes,
                                         Counters& counters) {
  auto cache = std::make_unique<cache::DiskCache>(dir, max_bytes);
  if (!cache->usable()) return nullptr;
  return std::unique_ptr<DiskTier>(new DiskTier(std::move(cache), counters));
}

DiskTier::DiskTier(std::unique_ptr<cache::DiskCache> cache, Counters& counters)
    : cache_(std::move(cache)),
      writer_([cache = cache_.get()](const std::string& key, const std::string& payload) {
        cache->store(key, payload);
      }),
      salt_(storage_salt()),
      counters_(counters) {}

std::optional<Found> DiskTier::find(const BuildRequest& request) {
  // A request that lets NVRTC read files of the caller's choice is never looked up.
  if (!key_can_cover(request.source, request.request)) return std::nullopt;
  const core::Stopwatch watch;
  std::optional<std::string> payload = cache_->load(disk_key(request));
  if (!payload) return std::nullopt;
  std::optional<Found> found = decode_found(*payload, request, Origin::Disk);
  if (!found) return std::nullopt;
  const std::uint64_t ns = watch.nanoseconds();
  counters_.add(Counter::DiskHits);
  counters_.add(Counter::DiskNs, ns);
  found->ms = static_cast<double>(ns) / 1e6;
  return found;
}

void DiskTier::store(const BuildRequest& request, const Found& found) noexcept {
  try {
    if (!key_can_cover(request.source, request.request)) return;
    // A compile that read a file the key does not hold could change under the same key.
    if (const std::string why = uncovered_read(request.request, found.result); !why.empty()) {
      core::log_write(core::LogLevel::Info, "not storing '" + request.key + "' on disk: " + why);
      return;
    }
    writer_.submit(disk_key(request), encode_found(found));
  } catch (...) {
    // Out of memory while building the key or payload: the binary is simply not stored.
  }
}

}  // namespace kreg::registry
