#pragma once
// The binaries nvcc built into the library at build time (cache/precompiled.hpp). Read-only.

#include "registry/counters.hpp"
#include "registry/tier.hpp"

namespace kreg::registry {

class PrecompiledTier final : public Tier {
 public:
  // `with_constants` false: only requests without constants are looked up
  // (KREG_PRECOMPILED_CONSTANTS=0).
  explicit PrecompiledTier(bool with_constants) : with_constants_(with_constants) {}

  std::string_view name() const noexcept override { return "precompiled"; }
  std::optional<Timing> timing() const noexcept override {
    return Timing{Counter::PrecompiledHits, Counter::PrecompiledNs, false};
  }
  std::optional<Found> find(const BuildRequest& request) override;
  void store(const BuildRequest& /*request*/, const Found& /*found*/) noexcept override {}

 private:
  bool with_constants_;
};

}  // namespace kreg::registry
