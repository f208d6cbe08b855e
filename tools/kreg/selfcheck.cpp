#include "commands.hpp"
#include "table.hpp"

#include <unistd.h>
#include <nlohmann/json.hpp>

#include <iostream>
#include <memory>
#include <mutex>

namespace kreg::cli {

ProgressCallback progress_printer(bool json) {
  if (json || isatty(STDERR_FILENO) == 0) return {};
  auto mutex = std::make_shared<std::mutex>();
  return [mutex](const PrewarmProgress& p) {
    std::lock_guard lock(*mutex);
    std::cerr << "\r[" << p.done << "/" << p.total << "] " << (p.ok ? "ok  " : "FAIL") << " "
              << p.label << std::string(20, ' ') << std::flush;
  };
}

void clear_progress(bool json) {
  if (!json && isatty(STDERR_FILENO) != 0) std::cerr << "\r" << std::string(100, ' ') << "\r";
}

void print_failures(const std::vector<std::pair<std::string, std::string>>& failures) {
  if (failures.empty()) return;
  std::cout << "\nfailures:\n";
  for (const auto& [label, reason] : failures) {
    std::string text = reason;
    for (std::size_t at = text.find('\n'); at != std::string::npos; at = text.find('\n', at + 5)) {
      text.replace(at, 1, "\n    ");
    }
    std::cout << "  " << label << ": " << text << "\n";
  }
}

int report_kernels(Registry& reg, const std::vector<KernelRequest>& requests, std::size_t ready,
                   bool json, nlohmann::json& out) {
  Table table({"kernel", "origin", "ms", "bytes", "registers"});
  std::vector<std::pair<std::string, std::string>> failures;
  bool ok = ready == requests.size();
  out["kernels"] = nlohmann::json::array();
  for (const KernelRequest& request : requests) {
    const std::string label = kernel_label(request.name, request.constants);
    nlohmann::json row{{"kernel", label}};
    try {
      const Binary& binary = reg.compile(request.name, request.constants);
      std::string registers = "-";
      try {
        if (reg.is_cached(request.name, request.constants) && !reg.arch().empty()) {
          registers =
              std::to_string(reg.get(request.name, request.constants).attributes().registers);
        }
      } catch (const Error&) {
        // No GPU: the kernel is compiled but not loaded.
      }
      table.add({label, to_string(binary.origin()), fixed(binary.milliseconds(), 2),
                 std::to_string(binary.size()), registers});
      row["origin"] = to_string(binary.origin());
      row["ms"] = binary.milliseconds();
      row["bytes"] = binary.size();
    } catch (const Error& e) {
      ok = false;
      table.add({label, "FAILED", "-", "-", "-"});
      row["error"] = e.message();
      failures.emplace_back(label, e.message());
    }
    out["kernels"].push_back(row);
  }
  const Stats stats = reg.stats();
  out["ready"] = ready;
  out["total"] = requests.size();
  out["stats"] = stats_json(stats);
  if (!json) {
    table.print(std::cout);
    print_failures(failures);
    std::cout << "\n"
              << ready << " of " << requests.size() << " kernels ready: " << stats.compiles
              << " compiled (" << fixed(stats.compile_ms, 1) << " ms), " << stats.disk_hits
              << " from disk (" << fixed(stats.disk_ms, 1) << " ms), " << stats.precompiled_hits
              << " precompiled (" << fixed(stats.precompiled_ms, 2) << " ms)\n";
    if (stats.pch_creations + stats.pch_uses > 0) {
      std::cout << "precompiled headers: " << stats.pch_creations << " made, used by "
                << stats.pch_uses << " compiles\n";
    }
    if (stats.remote_hits + stats.remote_misses + stats.remote_errors > 0) {
      std::cout << "remote cache: " << stats.remote_hits << " hits, " << stats.remote_misses
                << " misses (" << stats.remote_rejected << " values refused), "
                << stats.remote_errors << " errors, " << fixed(stats.remote_ms, 1) << " ms\n";
    }
  }
  return ok ? 0 : 1;
}

namespace {

int selfcheck_with(const RegistryOptions& registry_options, const SelfCheckOptions& options,
                   const std::string& note) {
  Registry reg(registry_options);
  const std::vector<KernelRequest> requests = reg.prewarm_all_requests();
  const bool json = options.common.json;
  const std::size_t ready = reg.prewarm(requests, progress_printer(json));
  clear_progress(json);
  if (!json) {
    std::cout << "kreg " << version() << ", NVRTC " << nvrtc_version() << ", target " << reg.arch()
              << "\n";
    if (!note.empty()) std::cout << note << "\n";
    std::cout << "\n";
  }
  nlohmann::json out;
  int status = report_kernels(reg, requests, ready, json, out);

  std::string why;
  bool gpu = true;
  try {
    reg.get(requests.front().name, requests.front().constants);
  } catch (const Error& e) {
    gpu = false;
    why = e.message();
  }
  nlohmann::json checks = nlohmann::json::array();
  if (gpu) {
    Table results({"kernel", "GPU check", "detail"});
    std::vector<GpuCheck> all = run_gpu_checks(reg);
    for (GpuCheck& c : run_op_checks()) all.push_back(std::move(c));
    for (const GpuCheck& c : all) {
      if (!c.ok) status = 1;
      results.add({c.label, c.ok ? "ok" : "FAILED", c.detail});
      checks.push_back({{"kernel", c.label}, {"ok", c.ok}, {"detail", c.detail}});
    }
    if (!json) {
      std::cout << "\n";
      results.print(std::cout);
    }
  }
  if (json) {
    out["arch"] = reg.arch();
    out["ok"] = status == 0;
    out["gpu_checks"] = checks;
    if (!gpu) out["gpu_skipped"] = why;
    if (!note.empty()) out["note"] = note;
    std::cout << out.dump(2) << "\n";
  } else {
    if (!gpu) std::cout << "\nGPU checks skipped: " << why << "\n";
    std::cout << (status == 0 ? "\nselfcheck passed\n" : "\nselfcheck FAILED\n");
  }
  return status;
}

}  // namespace

int selfcheck(const SelfCheckOptions& options) {
  RegistryOptions registry_options;
  registry_options.arch = options.common.arch;
  registry_options.cache_dir = options.common.cache_dir;
  registry_options.prewarm_threads = options.jobs;
  RegistryOptions probe = registry_options;
  probe.warm_compiler = false;
  probe.disk_cache = false;
  if (Registry(probe).arch().empty()) {
    // No GPU and no target given: still prove that every built-in compiles, for Hopper.
    registry_options.arch = "sm_90";
    return selfcheck_with(registry_options, options, "no GPU and no --arch: compiling for sm_90");
  }
  return selfcheck_with(registry_options, options, "");
}

}  // namespace kreg::cli
