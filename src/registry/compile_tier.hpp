#pragma once
// NVRTC, the last tier: it always answers, with a binary or with the compile error. It
// compiles in a worker process when the request allows it and workers run, else in-process.

#include "registry/compile_workers.hpp"
#include "registry/compiler_warm_up.hpp"
#include "registry/counters.hpp"
#include "registry/tier.hpp"

namespace kreg::registry {

class CompileTier final : public Tier {
 public:
  // `warm_up` may be null (RegistryOptions::warm_compiler off).
  CompileTier(Counters& counters, CompileWorkers& workers, CompilerWarmUp* warm_up)
      : counters_(counters), workers_(workers), warm_up_(warm_up) {}

  std::string_view name() const noexcept override { return "compile"; }
  // Throws CompileError (naming the kernel and key, with the log) when the source does not
  // compile, or the error NVRTC itself raised. Failed builds are never offered to store.
  std::optional<Found> find(const BuildRequest& request) override;
  void store(const BuildRequest& /*request*/, const Found& /*found*/) noexcept override {}

 private:
  Counters& counters_;
  CompileWorkers& workers_;
  CompilerWarmUp* warm_up_;
};

}  // namespace kreg::registry
