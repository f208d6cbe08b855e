#include <kreg/error.hpp>
#include <kreg/remote_cache.hpp>

#include "cache/disk_cache.hpp"
#include "cache/remote_cache.hpp"
#include "cache/remote_config.hpp"

#include <charconv>

namespace kreg {
namespace {

cache::RemoteConfig configured(const RemoteCacheOptions& options) {
  std::optional<cache::RemoteConfig> config = cache::remote_config(options);
  if (!config) {
    throw Error(ErrorCode::InvalidArgument,
                "no remote cache is configured (set KREG_REMOTE_CACHE, e.g. "
                "redis://127.0.0.1:6379, or RemoteCacheOptions::url)");
  }
  return std::move(*config);
}

cache::DiskCache open_cache(const std::filesystem::path& dir, bool create) {
  return {dir.empty() ? cache::DiskCache::default_dir() : dir,
          cache::DiskCache::default_max_bytes(), create};
}

// "name:value" from INFO's text, or "".
std::string info_field(const std::string& info, std::string_view name) {
  const std::string needle = "\n" + std::string(name) + ":";
  const std::size_t at = ("\n" + info).find(needle);
  if (at == std::string::npos) return {};
  const std::size_t start = at + needle.size() - 1;
  const std::size_t end = info.find_first_of("\r\n", start);
  return info.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

std::uint64_t to_u64(const std::string& text) {
  std::uint64_t value = 0;
  std::from_chars(text.data(), text.data() + text.size(), value);
  return value;
}

void count(TransferReport& report, cache::RemoteCache::Outcome outcome, const std::string& digest,
           const std::string& why) {
  switch (outcome) {
    case cache::RemoteCache::Outcome::Hit: ++report.transferred; return;
    case cache::RemoteCache::Outcome::Miss: ++report.missing; break;
    case cache::RemoteCache::Outcome::Rejected: ++report.rejected; break;
    default: ++report.failed; break;
  }
  report.problems.push_back(digest + ": ");
  report.problems.back() += why;
}

}  // namespace

RemoteCacheStatus remote_cache_status(const RemoteCacheOptions& options, bool count_keys) {
  RemoteCacheStatus status;
  std::optional<cache::RemoteConfig> config = cache::remote_config(options);
  if (!config) return status;
  status.configured = true;
  status.url = config->url;
  status.key_prefix = config->key_prefix;
  status.read_only = config->read_only;
  status.signed_entries = !config->secret.empty();
  cache::RemoteCache remote(std::move(*config));
  const std::optional<double> ms = remote.ping(status.error);
  if (!ms) return status;
  status.reachable = true;
  status.ping_ms = *ms;
  const cache::RedisReply info = remote.query({"INFO"});
  status.server_version = info_field(info.text, "redis_version");
  status.used_memory = to_u64(info_field(info.text, "used_memory"));
  status.max_memory = to_u64(info_field(info.text, "maxmemory"));
  status.eviction_policy = info_field(info.text, "maxmemory_policy");
  if (count_keys) {
    std::string cursor = "0";
    const std::string pattern = remote.config().key_prefix + "*";
    do {
      const cache::RedisReply page =
          remote.query({"SCAN", cursor, "MATCH", pattern, "COUNT", "1000"});
      if (page.status != cache::RedisReply::Status::Array || page.items.empty()) break;
      cursor = page.items.front();
      status.keys += page.items.size() - 1;
    } while (cursor != "0");
  }
  return status;
}

TransferReport remote_cache_push(const RemoteCacheOptions& options,
                                 const std::filesystem::path& dir,
                                 const std::vector<std::string>& digests) {
  cache::RemoteConfig config = configured(options);
  if (config.read_only) {
    throw Error(ErrorCode::InvalidArgument,
                "the remote cache " + config.url + " is configured read-only");
  }
  cache::DiskCache disk = open_cache(dir, false);
  if (!disk.usable()) {
    throw Error(ErrorCode::InvalidArgument,
                "no usable cache folder at " + disk.dir().string());
  }
  cache::RemoteCache remote(std::move(config));
  TransferReport report;
  for (const std::string& digest : digests.empty() ? disk.digests() : digests) {
    std::string why;
    const std::optional<cache::DecodedEntry> entry = disk.load_entry(digest, &why);
    if (!entry) {
      count(report,
            why == "not in the cache" ? cache::RemoteCache::Outcome::Miss
                                      : cache::RemoteCache::Outcome::Rejected,
            digest, why);
      continue;
    }
    const cache::RemoteCache::Outcome outcome = remote.store(entry->key, entry->payload);
    count(
        report, outcome, digest,
        outcome == cache::RemoteCache::Outcome::Skipped ? "skipped after a failure" : "not stored");
  }
  return report;
}

TransferReport remote_cache_pull(const RemoteCacheOptions& options,
                                 const std::vector<std::string>& digests,
                                 const std::filesystem::path& dir) {
  cache::RemoteCache remote(configured(options));
  cache::DiskCache disk = open_cache(dir, true);
  if (!disk.usable()) {
    throw Error(ErrorCode::InvalidArgument,
                "no usable cache folder at " + disk.dir().string());
  }
  TransferReport report;
  for (const std::string& digest : digests) {
    cache::DecodedEntry entry;
    const cache::RemoteCache::Loaded loaded = remote.load_digest(digest, entry);
    if (loaded.outcome == cache::RemoteCache::Outcome::Hit) disk.store(entry.key, entry.payload);
    count(report, loaded.outcome, digest,
          loaded.outcome == cache::RemoteCache::Outcome::Miss      ? "not on the server"
          : loaded.outcome == cache::RemoteCache::Outcome::Skipped ? "skipped after a failure"
                                                                   : loaded.why);
  }
  return report;
}

}  // namespace kreg
