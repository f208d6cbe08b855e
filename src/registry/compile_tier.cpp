#include "registry/compile_tier.hpp"

#include "compiler/worker_pool.hpp"
#include "core/log.hpp"
#include "registry/request.hpp"

#include <kreg/error.hpp>

namespace kreg::registry {
namespace {

std::string what_failed(const BuildRequest& r) {
  return "compiling '" + std::string(r.label) + "' (source '" + r.source.name + "', key '" + r.key +
         "') failed";
}

}  // namespace

std::optional<Found> CompileTier::find(const BuildRequest& r) {
  compiler::WorkerPool* workers = r.pooled ? workers_.pool() : nullptr;
  auto run = [&](const compiler::Request& attempt) {
    std::optional<compiler::Result> remote;
    if (workers != nullptr) remote = workers->compile(attempt);
    if (remote && remote->ok) counters_.add(Counter::WorkerCompiles);
    return remote ? std::move(*remote) : compiler::compile(attempt);
  };
  if (warm_up_ != nullptr) warm_up_->compile_requested();
  compiler::Result result;
  try {
    result = compile_with_fallback(r.request, run);
  } catch (const Error& e) {
    // NVRTC itself failed (out of memory, say): the cause alone would not say which kernel.
    counters_.add(Counter::Failures);
    throw Error(e.code(), what_failed(r) + ": " + std::string(e.message()));
  } catch (...) {
    counters_.add(Counter::Failures);
    throw;
  }
  if (!result.ok) {
    counters_.add(Counter::Failures);
    throw Error(what_failed(r) + ":\n" + result.log,
                CompileFailure{r.source.name, std::string(r.label), r.key, result.log,
                               std::string(r.source.text)});
  }
  counters_.add(Counter::Compiles);
  if (result.pch_created) counters_.add(Counter::PchCreations);
  if (result.pch_used) counters_.add(Counter::PchUses);
  counters_.add(Counter::CompileNs, static_cast<std::uint64_t>(result.milliseconds * 1e6));
  core::log_write(core::LogLevel::Debug,
                  "compiled '" + r.key + "' in " + std::to_string(result.milliseconds) + " ms");
  const double ms = result.milliseconds;
  return Found{std::move(result), Origin::Compiled, ms, {}};
}

}  // namespace kreg::registry
