#include "registry/disk_tier.hpp"

#include "registry/storage_key.hpp"

namespace kreg::registry {

std::unique_ptr<DiskTier> DiskTier::open(const std::filesystem::path& dir,
                                         std::uint64_t max_bytes) {
  auto cache = std::make_unique<cache::DiskCache>(dir, max_bytes);
  if (!cache->usable()) return nullptr;
  return std::unique_ptr<DiskTier>(new DiskTier(std::move(cache)));
}

DiskTier::DiskTier(std::unique_ptr<cache::DiskCache> cache)
    : cache_(std::move(cache)),
      writer_([cache = cache_.get()](const std::string& key, const std::string& payload) {
        cache->store(key, payload);
      }),
      salt_(storage_salt()) {}

std::optional<Found> DiskTier::find(const BuildRequest& request) {
  std::optional<std::string> payload = cache_->load(disk_key(request));
  if (!payload) return std::nullopt;
  return decode_found(*payload, request, Origin::Disk);
}

void DiskTier::store(const BuildRequest& request, const Found& found) noexcept {
  try {
    writer_.submit(disk_key(request), encode_found(found));
  } catch (...) {
    // Out of memory while building the key or payload: the binary is simply not stored.
  }
}

void DiskTier::store_record(const std::string& key, const std::string& payload) noexcept {
  try {
    writer_.submit(key, payload);
  } catch (...) {
    // Out of memory: the record is simply not stored.
  }
}

}  // namespace kreg::registry
