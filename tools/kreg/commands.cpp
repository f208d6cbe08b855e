// kreg doctor, prewarm, cache and build-cache.
#include "commands.hpp"
#include "table.hpp"

#include <nlohmann/json.hpp>

#include <iostream>
#include <optional>

namespace kreg::cli {
namespace {

std::string bytes_text(std::uint64_t bytes) {
  if (bytes >= (1ULL << 30)) return fixed(static_cast<double>(bytes) / (1ULL << 30), 2) + " GiB";
  if (bytes >= (1ULL << 20)) return fixed(static_cast<double>(bytes) / (1ULL << 20), 1) + " MiB";
  return fixed(static_cast<double>(bytes) / 1024.0, 1) + " KiB";
}

nlohmann::json usage_json(const CacheUsage& u) {
  return {{"dir", u.dir.string()},   {"usable", u.usable},   {"state", to_string(u.state)},
          {"note", u.note},          {"entries", u.entries}, {"bytes", u.bytes},
          {"max_bytes", u.max_bytes}};
}

// The folder, and what a registry will find there unless it is ready.
std::string cache_text(const CacheUsage& u) {
  switch (u.state) {
    case CacheState::Ready: break;
    case CacheState::WillBeCreated: return u.dir.string() + " (" + u.note + ")";
    case CacheState::ReadOnly: return u.dir.string() + " (read-only: " + u.note + ")";
    case CacheState::Unusable: return u.dir.string() + " (unusable: " + u.note + ")";
  }
  return u.dir.string();
}

// kreg cache tuning: the folder's tuning records, a table or a JSON array.
int cache_tuning_list(const std::filesystem::path& dir, bool json) {
  const std::vector<TuningEntry> records = cache_tuning(dir);
  if (json) {
    nlohmann::json out = nlohmann::json::array();
    for (const TuningEntry& r : records) {
      nlohmann::json item = {
          {"label", r.label}, {"gpu", r.gpu}, {"bucket", r.bucket}, {"ok", r.ok}};
      if (r.ok) {
        item["ms"] = r.ms;
        item["repeats"] = r.repeats;
      } else {
        item["why"] = r.why;
      }
      out.push_back(std::move(item));
    }
    std::cout << out.dump(2) << "\n";
    return 0;
  }
  if (records.empty()) {
    std::cout << "no tuning records\n";
    return 0;
  }
  Table table({"gpu", "bucket", "candidate", "time"});
  for (const TuningEntry& r : records) {
    // The first line of a failure: a compile log's rest would break the table.
    const std::string why = r.why.substr(0, r.why.find('\n'));
    table.add(
        {r.gpu, r.bucket, r.label, r.ok ? fixed(r.ms * 1000.0, 2) + " us" : "failed: " + why});
  }
  table.print(std::cout);
  return 0;
}

}  // namespace

int doctor(const CommonOptions& options) {
  nlohmann::json json;
  json["kreg"] = version();
  json["nvrtc"] = nvrtc_version();
  json["nvrtc_archs"] = supported_archs();
  std::string why;
  const std::string driver = driver_version(&why);
  json["driver"] = driver.empty() ? nlohmann::json(nullptr) : nlohmann::json(driver);
  if (driver.empty()) json["driver_missing"] = why;
  json["devices"] = devices();
  RegistryOptions registry_options;
  registry_options.warm_compiler = false;
  registry_options.disk_cache = false;
  registry_options.remote.enabled = false;  // its state is reported below, never fatal here
  registry_options.arch = options.arch;
  json["target_arch"] = Registry(registry_options).arch();
  const CacheUsage usage = cache_usage(options.cache_dir);
  json["cache"] = usage_json(usage);
  json["precompiled_archs"] = precompiled_archs();
  RemoteCacheStatus remote;
  try {
    remote = remote_cache_status();
  } catch (const Error& e) {
    remote.configured = true;
    remote.error = e.message();
  }
  json["remote_cache"] = remote.configured ? remote_status_json(remote) : nlohmann::json(nullptr);
  if (options.json) {
    std::cout << json.dump(2) << "\n";
    return 0;
  }
  std::cout << "kreg          " << version() << "\n"
            << "NVRTC         " << nvrtc_version() << " (" << supported_archs().front() << " to "
            << supported_archs().back() << ")\n"
            << "driver        " << (driver.empty() ? "none: " + why : driver) << "\n";
  for (const std::string& device : devices()) std::cout << "device        " << device << "\n";
  std::cout << "target arch   "
            << (json["target_arch"].get<std::string>().empty()
                    ? "none (no GPU; use --arch)"
                    : json["target_arch"].get<std::string>())
            << "\n"
            << "cache         " << cache_text(usage) << "\n"
            << "cache usage   " << usage.entries << " entries, " << bytes_text(usage.bytes)
            << " of " << bytes_text(usage.max_bytes) << "\n"
            << "precompiled   " <<
      [] {
        std::string archs;
        for (const std::string& a : precompiled_archs()) archs += (archs.empty() ? "" : ", ") + a;
        return archs.empty() ? std::string("none in this build") : archs;
      }() << "\n"
            << "remote cache  "
            << (remote.configured ? remote_status_line(remote) : "none (set KREG_REMOTE_CACHE)")
            << "\n";
  return 0;
}

int prewarm(const PrewarmOptions& options) {
  RegistryOptions registry_options;
  registry_options.arch = options.common.arch;
  registry_options.cache_dir = options.common.cache_dir;
  registry_options.prewarm_threads = options.jobs;
  Registry reg(registry_options);
  if (reg.arch().empty()) {
    std::cerr << "kreg prewarm: no GPU; give a target with --arch\n";
    return 2;
  }
  if (!options.all && options.names.empty() && options.manifest.empty()) {
    std::cerr << "kreg prewarm: nothing to prewarm: name kernels (name or name|200:b1), or give "
                 "--all or --manifest\n";
    return 2;
  }
  std::vector<KernelRequest> requests;
  if (options.all) requests = reg.prewarm_all_requests();
  for (const std::string& name : options.names) {
    const auto bar = name.find('|');
    requests.push_back({name.substr(0, bar), bar == std::string::npos
                                                 ? Constants{}
                                                 : parse_constants(name.substr(bar + 1))});
  }
  if (!options.manifest.empty()) {
    for (KernelRequest& r : read_manifest(options.manifest)) requests.push_back(std::move(r));
  }
  const std::size_t ready = reg.prewarm(requests, progress_printer(options.common.json));
  reg.flush_disk_cache();  // the report counts the entries on disk
  clear_progress(options.common.json);
  nlohmann::json out;
  const int status = report_kernels(reg, requests, ready, options.common.json, out);
  if (options.common.json) std::cout << out.dump(2) << "\n";
  return status;
}

int cache(const CacheOptions& options) {
  const std::string& action = options.words.front();
  if (action == "export") return cache_export(options);
  if (action == "import") return cache_import(options);
  if (action == "remote") return cache_remote(options);
  if (action != "stats" && action != "clear" && action != "trim" && action != "verify" &&
      action != "tuning") {
    std::cerr << "kreg cache: unknown action '" << action
              << "' (stats, clear, trim, verify, tuning, export, import or remote)\n";
    return 2;
  }
  if (options.words.size() > 1) {
    std::cerr << "kreg cache " << action << ": unexpected '" << options.words[1] << "'\n";
    return 2;
  }
  const auto& dir = options.common.cache_dir;
  std::uint64_t target_bytes = 0;  // the bound
  if (!options.target_bytes.empty()) {
    const std::optional<std::uint64_t> parsed = parse_size(options.target_bytes);
    if (!parsed || action != "trim") {
      std::cerr << "kreg cache: --target-bytes "
                << (parsed ? "applies to trim only"
                           : "'" + options.target_bytes +
                                 "' is not a size (digits, then nothing, K, M or G, e.g. 512M)")
                << "\n";
      return 2;
    }
    target_bytes = *parsed;
  }
  const CacheUsage before = cache_usage(dir);
  if (action == "tuning" && before.usable) return cache_tuning_list(dir, options.common.json);
  nlohmann::json json;
  if (!before.usable) {
    json = usage_json(before);
    json["error"] = "unusable cache folder: " + before.note;
  } else if (action == "stats") {
    json = usage_json(before);
    const RemoteCacheStatus remote = remote_cache_status(remote_options(options.remote));
    if (remote.configured) json["remote"] = remote_status_json(remote);
  } else if (action == "clear") {
    json["removed"] = cache_clear(dir);
  } else if (action == "trim") {
    json["removed"] = cache_trim(dir, target_bytes);
    json["after"] = usage_json(cache_usage(dir));
  } else if (action == "verify") {
    const CacheVerify v = cache_verify(dir, options.remove_bad);
    json = {{"good", v.good}, {"bad", v.bad}, {"removed", v.removed}};
  }
  if (options.common.json) {
    std::cout << json.dump(2) << "\n";
  } else {
    for (const auto& [key, value] : json.items()) std::cout << key << ": " << value.dump() << "\n";
  }
  if (!before.usable) return 1;
  if (action == "verify") {
    // Bad entries left behind are a failure; removed ones are not.
    return json["bad"].get<std::size_t>() > json["removed"].get<std::size_t>() ? 1 : 0;
  }
  return 0;
}

int build_cache(const BuildCacheOptions& options) {
  if (options.out.empty() && options.bundle.empty()) {
    std::cerr << "kreg build-cache: give --out FOLDER, --bundle FILE, or both\n";
    return 2;
  }
  // A bundle alone is built in a temporary folder, removed after.
  const TemporaryFolder scratch(options.out.empty() ? "kreg-build-cache-" : "");
  const std::filesystem::path out = options.out.empty() ? scratch.path() : options.out;
  RegistryOptions registry_options;
  registry_options.arch = options.common.arch;
  registry_options.cache_dir = out;
  // The folder holds exactly what this build made: nothing comes from, or goes to, a remote.
  registry_options.remote.enabled = false;
  registry_options.prewarm_threads = options.jobs;
  // Everything goes into the folder, so that it serves builds without this precompiled set.
  registry_options.precompiled = false;
  Registry reg(registry_options);
  if (reg.cache_dir().empty()) {
    // KREG_DISK_CACHE=0, or a folder that cannot be made or is not safely ours: building
    // into memory only would ship nothing.
    std::cerr << "kreg build-cache: cannot use " << out.string()
              << " as a cache folder (see the warning above, or unset KREG_DISK_CACHE=0)\n";
    return 1;
  }
  std::vector<KernelRequest> requests = reg.prewarm_all_requests();
  std::vector<KernelRequest> listed;
  if (!options.manifest.empty()) listed = read_manifest(options.manifest);
  // Each kernel of `list` that was not built, with why: the compile's error, or an unknown name.
  std::vector<std::pair<std::string, std::string>> failures;
  const auto note_failures = [&](const std::vector<KernelRequest>& list) {
    for (const KernelRequest& r : list) {
      if (reg.is_cached(r.name, r.constants)) continue;
      try {
        reg.compile(r.name, r.constants);
      } catch (const Error& e) {
        failures.emplace_back(kernel_label(r.name, r.constants), e.message());
      }
    }
  };
  // The manifest's kernels first: a folder that cannot serve the manifest is not worth the
  // built-ins' minutes of compiling, so a kernel it cannot build (a misspelt name, say) is
  // reported at once and the built-ins are skipped.
  const std::size_t from_manifest = reg.prewarm(listed);
  note_failures(listed);
  const bool builtins = failures.empty();
  std::size_t ready = 0;
  if (builtins) {
    ready = reg.prewarm(requests, progress_printer(options.common.json));
    note_failures(requests);
  }
  reg.flush_disk_cache();  // the report counts the entries on disk
  clear_progress(options.common.json);
  const Stats stats = reg.stats();
  const CacheUsage usage = cache_usage(out);
  // A folder that lacks what was asked is not bundled.
  const bool bundled = !options.bundle.empty() && builtins;
  BundleReport bundle;
  if (bundled) bundle = export_bundle(options.bundle, out);
  nlohmann::json json{{"arch", reg.arch()},
                      {"builtin_ready", ready},
                      {"builtin_total", requests.size()},
                      {"builtins_skipped", !builtins},
                      {"manifest_ready", from_manifest},
                      {"manifest_total", listed.size()},
                      {"stats", stats_json(stats)},
                      {"cache", usage_json(usage)}};
  if (bundled) {
    json["bundle"] = {{"file", options.bundle.string()}, {"entries", bundle.entries}};
  }
  json["failures"] = nlohmann::json::array();
  for (const auto& [label, reason] : failures) {
    json["failures"].push_back({{"kernel", label}, {"error", reason}});
  }
  if (options.common.json) {
    std::cout << json.dump(2) << "\n";
  } else {
    print_failures(failures);
    if (!failures.empty()) std::cout << "\n";
    if (!builtins) {
      std::cout << "built " << from_manifest << "/" << listed.size()
                << " kernels from the manifest and stopped: the built-ins were not built"
                << (options.bundle.empty() ? "" : ", nor the bundle") << "\n";
      return 1;
    }
    std::cout << "built " << ready << "/" << requests.size() << " built-in kernels";
    if (!options.manifest.empty()) std::cout << " and " << from_manifest << " from the manifest";
    std::cout << " for " << reg.arch() << " into " << usage.dir.string() << " (" << stats.compiles
              << " compiles, " << usage.entries << " entries, " << bytes_text(usage.bytes) << ")\n";
    if (!options.bundle.empty()) {
      std::cout << "wrote " << bundle.entries << " entries to the bundle "
                << options.bundle.string() << "\n";
    }
  }
  return ready == requests.size() && from_manifest == listed.size() ? 0 : 1;
}

nlohmann::json stats_json(const Stats& stats) {
  nlohmann::json out = nlohmann::json::object();
  for (const StatsField& field : stats_fields()) {
    if (field.count != nullptr) {
      out[std::string(field.name)] = stats.*field.count;
    } else {
      out[std::string(field.name)] = stats.*field.ms;
    }
  }
  return out;
}

int list(bool json) {
  RegistryOptions list_options{.disk_cache = false, .warm_compiler = false};
  list_options.remote.enabled = false;
  Registry reg(list_options);
  nlohmann::json out = nlohmann::json::array();
  for (const std::string& name : reg.source_names()) {
    const SourceInfo info = reg.source_info(name);
    nlohmann::json source{{"source", name}, {"entries", info.entries}};
    source["constants"] = nlohmann::json::array();
    for (const ConstantInfo& c : info.constants) {
      source["constants"].push_back({{"index", c.index},
                                     {"type", c.is_bool ? "bool" : "int"},
                                     {"name", c.name},
                                     {"required", !c.has_default}});
    }
    source["specializations"] = nlohmann::json::array();
    for (const Constants& c : info.specializations)
      source["specializations"].push_back(constants_key(c));
    out.push_back(source);
    if (json) continue;
    std::cout << name << "\n";
    for (const auto& entry : info.entries) std::cout << "  entry " << entry << "\n";
    for (const auto& c : info.constants) {
      std::cout << "  constant " << c.index << " " << (c.is_bool ? "bool " : "int ") << c.name
                << (c.has_default ? " (has default)" : " (required)") << "\n";
    }
    for (const auto& s : info.specializations) {
      std::cout << "  specialization " << constants_key(s) << "\n";
    }
  }
  if (json) std::cout << out.dump(2) << "\n";
  return 0;
}

}  // namespace kreg::cli
