#pragma once
// The binaries nvcc built into the library at build time (cache/precompiled.hpp). Read-only.

#include "registry/counters.hpp"
#include "registry/tier.hpp"

namespace kreg::registry {

class PrecompiledTier final : public Tier {
 public:
  // `with_constants` false: only requests without constants are looked up
  // (KREG_PRECOMPILED_CONSTANTS=0).
  PrecompiledTier(Counters& counters, bool with_constants)
      : counters_(counters), with_constants_(with_constants) {}

  std::string_view name() const noexcept override { return "precompiled"; }
  std::optional<Found> find(const BuildRequest& request) override;
  void store(const BuildRequest& /*request*/, const Found& /*found*/) noexcept override {}

 private:
  Counters& counters_;
  bool with_constants_;
};

}  // namespace kreg::registry
