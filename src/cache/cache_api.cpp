#include <kreg/cache.hpp>

#include "cache/disk_cache.hpp"
#include "cache/tuning_record.hpp"
#include "core/env.hpp"

#include <algorithm>
#include <tuple>

namespace kreg {
namespace {

cache::DiskCache open(const std::filesystem::path& dir) {
  return {dir.empty() ? cache::DiskCache::default_dir() : dir,
          cache::DiskCache::default_max_bytes(), false};
}

}  // namespace

std::filesystem::path default_cache_dir() {
  return cache::DiskCache::default_dir();
}

const char* to_string(CacheState state) noexcept {
  switch (state) {
    case CacheState::Ready: return "ready";
    case CacheState::WillBeCreated: return "will_be_created";
    case CacheState::ReadOnly: return "read_only";
    case CacheState::Unusable: return "unusable";
  }
  return "unknown";
}

CacheUsage cache_usage(const std::filesystem::path& dir) {
  const std::uint64_t max_bytes = cache::DiskCache::default_max_bytes();
  const std::filesystem::path folder = dir.empty() ? cache::DiskCache::default_dir() : dir;
  const cache::FolderCheck check = cache::DiskCache::inspect(folder);
  CacheUsage out;
  out.dir = cache::DiskCache::absolute(folder);
  out.usable = check.state != CacheState::Unusable;
  out.state = check.state;
  out.note = check.note;
  out.max_bytes = max_bytes;
  // Only a folder that is there is opened: inspecting must not create one.
  if (check.state == CacheState::Ready || check.state == CacheState::ReadOnly) {
    cache::DiskCache disk(folder, max_bytes, false);
    const auto usage = disk.usage();
    out.entries = usage.entries;
    out.bytes = usage.bytes;
  }
  return out;
}

std::optional<std::uint64_t> parse_size(std::string_view text) {
  return core::parse_size(text);
}

std::size_t cache_clear(const std::filesystem::path& dir) {
  return open(dir).clear();
}

std::size_t cache_trim(const std::filesystem::path& dir, std::uint64_t target_bytes) {
  return open(dir).trim(target_bytes != 0 ? target_bytes : cache::DiskCache::default_max_bytes());
}

CacheVerify cache_verify(const std::filesystem::path& dir, bool remove_bad) {
  const auto v = open(dir).verify(remove_bad);
  return {v.good, v.bad, v.removed};
}

std::vector<TuningEntry> cache_tuning(const std::filesystem::path& dir) {
  std::vector<TuningEntry> out;
  open(dir).verify(false, [&](const cache::DecodedEntry& entry) {
    const std::optional<cache::TuningKey> key = cache::parse_tuning_key(entry.key);
    if (!key) return;
    const std::optional<cache::TuningRecord> record = cache::decode_tuning(entry.payload);
    if (!record) return;
    out.push_back({record->label, key->gpu, key->bucket, record->ok, record->ms, record->repeats,
                   record->why});
  });
  std::sort(out.begin(), out.end(), [](const TuningEntry& a, const TuningEntry& b) {
    return std::tie(a.gpu, a.bucket, a.label) < std::tie(b.gpu, b.bucket, b.label);
  });
  return out;
}

}  // namespace kreg
