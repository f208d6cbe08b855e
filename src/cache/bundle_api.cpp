#include <kreg/bundle.hpp>
#include <kreg/error.hpp>

#include "cache/bundle_file.hpp"
#include "cache/disk_cache.hpp"
#include "cache/entry.hpp"
#include "cache/remote_config.hpp"
#include "cache/signed_value.hpp"

namespace kreg {
namespace {

cache::DiskCache open_cache(const std::filesystem::path& dir, bool create) {
  return {dir.empty() ? cache::DiskCache::default_dir() : dir,
          cache::DiskCache::default_max_bytes(), create};
}

void require_usable(const cache::DiskCache& disk) {
  if (!disk.usable()) {
    throw Error(ErrorCode::InvalidArgument, "no usable cache folder at " +
                                                disk.dir().string() +
                                                " (missing, or not safely this user's)");
  }
}

}  // namespace

BundleReport export_bundle(const std::filesystem::path& file, const std::filesystem::path& dir,
                           const std::vector<std::string>& digests, const BundleOptions& options) {
  const std::string secret = cache::fleet_secret(options.secret, options.secret_file);
  cache::DiskCache disk = open_cache(dir, false);
  require_usable(disk);
  BundleReport report;
  cache::BundleWriter writer(file);
  for (const std::string& digest : digests.empty() ? disk.digests() : digests) {
    std::string why;
    const std::optional<cache::DecodedEntry> entry = disk.load_entry(digest, &why);
    if (!entry) {
      ++(why == "not in the cache" ? report.missing : report.refused);
      report.problems.push_back(digest + ": ");
      report.problems.back() += why;
      continue;
    }
    writer.add(cache::seal_value(cache::encode_entry(entry->key, entry->payload), secret));
    ++report.entries;
  }
  writer.commit();
  return report;
}

BundleReport import_bundle(const std::filesystem::path& file, const std::filesystem::path& dir,
                           const BundleOptions& options) {
  const std::string secret = cache::fleet_secret(options.secret, options.secret_file);
  cache::BundleReader reader(file);
  cache::DiskCache disk = open_cache(dir, true);
  require_usable(disk);
  BundleReport report;
  std::string why;
  for (std::size_t index = 0;; ++index) {
    const std::optional<std::string> value = reader.next(why);
    if (!value) break;
    const std::optional<std::string_view> inner = cache::open_value(*value, secret, &why);
    std::optional<cache::DecodedEntry> entry;
    if (inner) entry = cache::decode_entry(*inner, &why);
    if (!entry) {
      ++report.refused;
      report.problems.push_back("entry " + std::to_string(index) + ": " + why);
      continue;
    }
    disk.store(entry->key, entry->payload);
    ++report.entries;
  }
  if (!why.empty()) {  // cut short: what was read is imported, the rest is reported
    ++report.refused;
    report.problems.push_back(why);
  }
  return report;
}

}  // namespace kreg
