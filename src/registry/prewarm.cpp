// Parallel prewarming. Requests are grouped by the binary they need, so each source and
// constant set is compiled by one worker while the others compile different ones; heavy
// sources go first, by their include lines.

#include "compiler/pch.hpp"
#include "core/error_text.hpp"
#include "core/log.hpp"
#include "cuda/capture.hpp"
#include "cuda/kernel_factory.hpp"
#include "cuda/memory.hpp"
#include "registry/registry_impl.hpp"

#include <kreg/error.hpp>

#include <algorithm>
#include <map>
#include <string_view>
#include <thread>
#include <utility>

namespace kreg::registry {

unsigned RegistryImpl::prewarm_threads() const {
  return options_.prewarm_threads != 0 ? options_.prewarm_threads
                                       : std::max(1U, std::thread::hardware_concurrency());
}

core::ThreadPool& RegistryImpl::pool() {
  std::lock_guard lock(pool_mutex_);
  if (!pool_) {
    pool_ = std::make_unique<core::ThreadPool>(prewarm_threads());
  }
  return *pool_;
}

std::vector<std::string> RegistryImpl::prewarm_items(const std::vector<KernelRequest>& requests,
                                                     const ProgressCallback& progress,
                                                     std::size_t& ready) {
  std::mutex mutex;  // guards failures, ready, done and calls to progress
  std::vector<std::string> failures;
  std::size_t done = 0;
  ready = 0;
  // error == nullptr: ready; skipped: unknown name, neither ready nor failed.
  auto finish = [&](std::string_view label, const std::string* error, bool skipped = false) {
    std::lock_guard lock(mutex);
    ++done;
    if (skipped) {
      // Best effort, as lists may name kernels of other builds: skip quietly.
      core::log_write(core::LogLevel::Debug,
                      "prewarm skips unknown kernel '" + std::string(label) + "'");
    } else if (error == nullptr) {
      ++ready;
    } else {
      failures.push_back(std::string(label) + ": " + *error);
      core::log_write(core::LogLevel::Debug,
                      "prewarm of '" + std::string(label) + "' failed: " + *error);
    }
    if (progress) {
      try {
        progress(PrewarmProgress{done, requests.size(), label, !skipped && error == nullptr});
      } catch (...) {
        core::log_write(core::LogLevel::Warn, "a prewarm progress callback threw; ignored");
      }
    }
  };

  std::map<std::string, std::vector<Resolved>> groups;
  for (const KernelRequest& request : requests) {
    try {
      Resolved r = resolve(request.name, request.constants);
      groups[r.binary_key].push_back(std::move(r));
    } catch (const Error& e) {
      const std::string message(e.message());
      finish(request.name, &message, e.code() == ErrorCode::KernelNotFound);
    }
  }

  // Building for another arch than the GPU's (build-cache for a fleet) compiles only.
  const bool load = can_load();
  std::size_t to_build = 0;
  for (const auto& item : groups) to_build += binaries_.find(item.first) ? 0 : 1;
  const bool pooled = workers_.use_for(to_build);
  // Sources that start with the same toolkit #include lines run one after another, and before
  // the others: those are the long compiles, and each worker makes its precompiled header of
  // a prefix once and then uses it for the rest of that prefix (compiler/pch.hpp).
  std::vector<std::pair<std::string_view, const std::vector<Resolved>*>> order;
  order.reserve(groups.size());
  for (const auto& item : groups) {
    order.emplace_back(compiler::pch::leading_includes(item.second.front().source->text),
                       &item.second);
  }
  std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
    if (a.first.empty() != b.first.empty()) return b.first.empty();
    return a.first < b.first;
  });
  std::vector<std::function<void()>> tasks;
  tasks.reserve(groups.size() + 1);
  if (load && !groups.empty()) {
    // Prewarming is the program's load window: the first array allocation's mapping of
    // memory belongs there too, and the loads below make the context anyway. (The registry's
    // own warm-up skips it when the context was not live yet, as when kreg makes it here.)
    tasks.emplace_back([device = options_.device] {
      cuda::relax_capture_mode_on_this_thread();
      cuda::warm_pool(device, false);
    });
  }
  for (const auto& [prefix, members] : order) {
    const std::vector<Resolved>& group = *members;
    tasks.emplace_back([this, &group, &finish, load, pooled] {
      for (const Resolved& r : group) {
        try {
          const CacheEntry& entry = entry_for(r, pooled);
          if (load) cuda::make_resident(this->load(entry), options_.device);
          finish(r.label, nullptr);
        } catch (const std::exception& e) {
          const std::string message = core::message_of(e);
          finish(r.label, &message);
        }
      }
    });
  }
  if (!tasks.empty()) pool().run_all(std::move(tasks));
  return failures;
}

std::size_t RegistryImpl::prewarm(const std::vector<KernelRequest>& requests,
                                  const ProgressCallback& progress) {
  std::size_t ready = 0;
  prewarm_items(requests, progress, ready);
  return ready;
}

std::vector<KernelRequest> RegistryImpl::prewarm_all_requests(std::size_t* skipped) const {
  std::vector<KernelRequest> requests;
  std::lock_guard lock(mutex_);
  for (const auto& [name, source] : sources_.listing()) {
    const std::vector<Constants> sets = source->prewarm_sets();
    if (sets.empty()) {
      core::log_write(core::LogLevel::Debug,
                      "prewarm_all skips source '" + name + "': it needs constants and lists none");
      if (skipped != nullptr) *skipped += source->entries.size();
      continue;
    }
    for (const registry::Entry& entry : source->entries) {
      const std::string reached_by = sources_.entry_name(*source, entry);
      for (const Constants& c : sets) requests.push_back({reached_by, c});
    }
  }
  return requests;
}

PrewarmReport RegistryImpl::prewarm_all(const ProgressCallback& progress) {
  PrewarmReport report;
  const std::vector<KernelRequest> requests = prewarm_all_requests(&report.skipped);
  report.failures = prewarm_items(requests, progress, report.warmed);
  return report;
}

}  // namespace kreg::registry
