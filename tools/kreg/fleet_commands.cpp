// kreg cache export, import and remote: moving entries between machines.
#include "commands.hpp"
#include "table.hpp"

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <iostream>

namespace kreg::cli {
namespace {

// The digests of what `manifest` lists, for the target of `common`; requests whose
// binaries are never cached outside a process are left out, with a note.
std::vector<std::string> manifest_digests(const CommonOptions& common,
                                          const std::filesystem::path& manifest) {
  RegistryOptions options;
  options.arch = common.arch;
  options.disk_cache = false;
  options.warm_compiler = false;
  options.remote.enabled = false;
  Registry reg(options);
  if (reg.arch().empty()) {
    throw Error(ErrorCode::NoDevice,
                "a manifest's keys depend on the target: give --arch (no GPU to ask)");
  }
  const std::vector<KernelRequest> requests = read_manifest(manifest);
  std::vector<std::string> digests;
  const std::vector<std::string> all = reg.entry_digests(requests);
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (all[i].empty()) {
      std::cerr << "note: " << kernel_label(requests[i].name, requests[i].constants)
                << " is never cached outside a process (it may read files its key cannot "
                   "hold)\n";
      continue;
    }
    digests.push_back(all[i]);
  }
  return digests;
}

void print_problems(const std::vector<std::string>& problems) {
  for (const std::string& p : problems) std::cerr << "  " << p << "\n";
}

int print_transfer(const char* what, const TransferReport& r, bool json) {
  if (json) {
    std::cout << nlohmann::json{{"transferred", r.transferred},
                                {"missing", r.missing},
                                {"rejected", r.rejected},
                                {"failed", r.failed},
                                {"problems", r.problems}}
                     .dump(2)
              << "\n";
  } else {
    print_problems(r.problems);
    std::cout << what << " " << r.transferred << " entries (" << r.missing << " missing, "
              << r.rejected << " refused, " << r.failed << " failed)\n";
  }
  return r.rejected + r.failed == 0 ? 0 : 1;
}

int print_bundle(const char* what, const std::filesystem::path& file, const BundleReport& r,
                 bool json) {
  if (json) {
    std::cout << nlohmann::json{{"file", file.string()},
                                {"entries", r.entries},
                                {"refused", r.refused},
                                {"missing", r.missing},
                                {"problems", r.problems}}
                     .dump(2)
              << "\n";
  } else {
    print_problems(r.problems);
    std::cout << what << " " << r.entries << " entries (" << r.refused << " refused, " << r.missing
              << " missing): " << file.string() << "\n";
  }
  return r.refused == 0 && r.missing == 0 ? 0 : 1;
}

}  // namespace

RemoteCacheOptions remote_options(const std::string& url) {
  RemoteCacheOptions options;
  options.url = url;
  return options;
}

TemporaryFolder::TemporaryFolder(const std::string& prefix) {
  if (prefix.empty()) return;
  std::string pattern = (std::filesystem::temp_directory_path() / (prefix + "XXXXXX")).string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    throw Error(ErrorCode::InvalidArgument, "cannot create a temporary folder " + pattern);
  }
  path_ = pattern;
}

TemporaryFolder::~TemporaryFolder() {
  std::error_code error;
  if (!path_.empty()) std::filesystem::remove_all(path_, error);
}

nlohmann::json remote_status_json(const RemoteCacheStatus& s) {
  nlohmann::json out{{"url", s.url},
                     {"key_prefix", s.key_prefix},
                     {"read_only", s.read_only},
                     {"signed", s.signed_entries},
                     {"reachable", s.reachable}};
  if (!s.reachable) {
    out["error"] = s.error;
    return out;
  }
  out["ping_ms"] = s.ping_ms;
  out["server_version"] = s.server_version;
  out["used_memory"] = s.used_memory;
  out["max_memory"] = s.max_memory;
  out["eviction_policy"] = s.eviction_policy;
  return out;
}

std::string remote_status_line(const RemoteCacheStatus& s) {
  if (s.url.empty()) return "misconfigured: " + s.error;
  std::string line =
      s.url + (s.signed_entries ? ", signed" : ", unsigned") + (s.read_only ? ", read-only" : "");
  if (!s.reachable) return line + ": unreachable (" + s.error + ")";
  return line + ": Redis " + s.server_version + ", ping " + fixed(s.ping_ms, 2) + " ms";
}

int cache_export(const CacheOptions& options) {
  if (options.out.empty() || options.words.size() != 1) {
    std::cerr << "kreg cache export: usage: kreg cache export --out FILE [--manifest M]\n";
    return 2;
  }
  std::vector<std::string> digests;
  if (!options.manifest.empty()) {
    digests = manifest_digests(options.common, options.manifest);
    if (digests.empty()) {
      std::cerr << "kreg cache export: the manifest names nothing that can be cached\n";
      return 1;
    }
  }
  const BundleReport r = export_bundle(options.out, options.common.cache_dir, digests);
  return print_bundle("exported", options.out, r, options.common.json);
}

int cache_import(const CacheOptions& options) {
  if (options.words.size() != 2) {
    std::cerr << "kreg cache import: usage: kreg cache import FILE [--cache-dir DIR]\n";
    return 2;
  }
  const std::filesystem::path file = options.words[1];
  const BundleReport r = import_bundle(file, options.common.cache_dir);
  return print_bundle("imported", file, r, options.common.json);
}

int cache_remote(const CacheOptions& options) {
  const std::string action = options.words.size() > 1 ? options.words[1] : "";
  const RemoteCacheOptions remote = remote_options(options.remote);
  const bool json = options.common.json;
  if (options.words.size() > 2 ||
      (action != "stats" && action != "ping" && action != "push" && action != "pull")) {
    std::cerr << "kreg cache remote: usage: kreg cache remote stats | ping | push [--all | "
                 "--manifest M] | pull --manifest M\n";
    return 2;
  }
  if (action == "stats" || action == "ping") {
    const RemoteCacheStatus s =
        remote_cache_status(remote, action == "stats" && options.count_keys);
    if (!s.configured) {
      std::cerr << "kreg cache remote: no remote cache (set KREG_REMOTE_CACHE or give --remote)\n";
      return 2;
    }
    nlohmann::json out = remote_status_json(s);
    if (options.count_keys) out["keys"] = s.keys;
    if (json) {
      std::cout << out.dump(2) << "\n";
    } else if (action == "ping") {
      std::cout << remote_status_line(s) << "\n";
    } else {
      for (const auto& [key, value] : out.items()) std::cout << key << ": " << value.dump() << "\n";
    }
    return s.reachable ? 0 : 1;
  }
  if (action == "push") {
    if (options.all == !options.manifest.empty()) {
      std::cerr << "kreg cache remote push: give --all or --manifest M (one of them)\n";
      return 2;
    }
    std::vector<std::string> digests;
    if (!options.all) digests = manifest_digests(options.common, options.manifest);
    if (!options.all && digests.empty()) {
      std::cerr << "kreg cache remote push: the manifest names nothing that can be cached\n";
      return 1;
    }
    return print_transfer("pushed", remote_cache_push(remote, options.common.cache_dir, digests),
                          json);
  }
  if (options.manifest.empty()) {
    std::cerr << "kreg cache remote pull: give --manifest M\n";
    return 2;
  }
  const std::vector<std::string> digests = manifest_digests(options.common, options.manifest);
  return print_transfer("pulled", remote_cache_pull(remote, digests, options.common.cache_dir),
                        json);
}

}  // namespace kreg::cli
