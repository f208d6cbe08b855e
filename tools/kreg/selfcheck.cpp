#include "commands.hpp"
#include "table.hpp"

#include <nlohmann/json.hpp>

#include <unistd.h>

#include <chrono>
#include <iostream>
#include <mutex>

namespace kreg::cli {

std::vector<KernelRequest> builtin_requests(const Registry& reg) {
  std::vector<KernelRequest> requests;
  for (const std::string& name : reg.source_names()) {
    const SourceInfo info = reg.source_info(name);
    bool plain = true;
    for (const ConstantInfo& c : info.constants) plain = plain && c.has_default;
    for (const std::string& entry : info.entries) {
      if (plain) requests.push_back({entry, {}});
      for (const Constants& c : info.specializations) requests.push_back({entry, c});
    }
  }
  return requests;
}

int selfcheck_with(const RegistryOptions& registry_options, const SelfCheckOptions& options,
                   const std::string& note);

int selfcheck(const SelfCheckOptions& options) {
  RegistryOptions registry_options;
  registry_options.arch = options.arch;
  registry_options.prewarm_threads = options.jobs;
  RegistryOptions probe_options = registry_options;
  probe_options.warm_compiler = false;
  const Registry probe(probe_options);

  std::string arch = probe.arch();
  if (arch.empty()) {
    // No GPU and no target given: still prove that every built-in compiles, for Hopper.
    registry_options.arch = "sm_90";
    return selfcheck_with(registry_options, options, "no GPU and no --arch: compiling for sm_90");
  }
  return selfcheck_with(registry_options, options, "");
}

int selfcheck_with(const RegistryOptions& registry_options, const SelfCheckOptions& options,
                   const std::string& note) {
  Registry reg(registry_options);
  const std::string arch = reg.arch();

  const std::vector<KernelRequest> requests = builtin_requests(reg);
  std::mutex mutex;
  const auto start = std::chrono::steady_clock::now();
  const std::size_t ready = reg.prewarm(requests, [&](const PrewarmProgress& p) {
    if (options.json || isatty(STDERR_FILENO) == 0) return;
    std::lock_guard lock(mutex);
    std::cerr << "\r[" << p.done << "/" << p.total << "] " << (p.ok ? "ok  " : "FAIL") << " "
              << p.label << std::string(20, ' ') << std::flush;
  });
  const double wall_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (!options.json && isatty(STDERR_FILENO) != 0)
    std::cerr << "\r" << std::string(80, ' ') << "\r";

  nlohmann::json json;
  json["kreg"] = version();
  json["nvrtc"] = nvrtc_version();
  json["arch"] = arch;
  if (!note.empty()) json["note"] = note;
  Table table({"kernel", "origin", "ms", "bytes", "registers"});
  bool ok = ready == requests.size();
  for (const KernelRequest& request : requests) {
    const std::string label = kernel_label(request.name, request.constants);
    nlohmann::json row{{"kernel", label}};
    try {
      const Binary& binary = reg.compile(request.name, request.constants);
      std::string registers = "-";
      if (reg.is_cached(request.name, request.constants)) {
        try {
          registers =
              std::to_string(reg.get(request.name, request.constants).attributes().registers);
        } catch (const Error&) {
          // No GPU: the kernel is compiled but not loaded.
        }
      }
      table.add({label, to_string(binary.origin()), fixed(binary.milliseconds(), 1),
                 std::to_string(binary.size()), registers});
      row["origin"] = to_string(binary.origin());
      row["ms"] = binary.milliseconds();
      row["bytes"] = binary.size();
    } catch (const Error& e) {
      ok = false;
      table.add({label, "FAILED", "-", "-", "-"});
      row["error"] = e.what();
    }
    json["kernels"].push_back(row);
  }
  const Stats stats = reg.stats();
  json["prewarm_ms"] = wall_ms;
  json["compiles"] = stats.compiles;
  json["compile_ms"] = stats.compile_ms;

  std::vector<GpuCheck> checks;
  std::string why;
  const bool gpu = !reg.source_names().empty() && [&] {
    try {
      reg.get(requests.front().name, requests.front().constants);
      return true;
    } catch (const Error& e) {
      why = e.what();
      return false;
    }
  }();
  if (gpu) {
    checks = run_gpu_checks(reg);
    for (const GpuCheck& c : checks) {
      ok = ok && c.ok;
      json["gpu_checks"].push_back({{"kernel", c.label}, {"ok", c.ok}, {"detail", c.detail}});
    }
  } else {
    json["gpu_checks"] = nullptr;
    json["gpu_skipped"] = why;
  }
  json["ok"] = ok;

  if (options.json) {
    std::cout << json.dump(2) << "\n";
    return ok ? 0 : 1;
  }
  std::cout << "kreg " << version() << ", NVRTC " << nvrtc_version() << ", target " << arch << "\n";
  if (!note.empty()) std::cout << note << "\n";
  std::cout << "\n";
  table.print(std::cout);
  std::cout << "\n"
            << ready << " of " << requests.size() << " kernels ready; " << stats.compiles
            << " compiles, " << fixed(stats.compile_ms, 1) << " ms of compiling in "
            << fixed(wall_ms, 1) << " ms wall time\n";
  if (gpu) {
    Table results({"kernel", "GPU check", "detail"});
    for (const GpuCheck& c : checks) results.add({c.label, c.ok ? "ok" : "FAILED", c.detail});
    std::cout << "\n";
    results.print(std::cout);
  } else {
    std::cout << "\nGPU checks skipped: " << why << "\n";
  }
  std::cout << (ok ? "\nselfcheck passed\n" : "\nselfcheck FAILED\n");
  return ok ? 0 : 1;
}

}  // namespace kreg::cli
