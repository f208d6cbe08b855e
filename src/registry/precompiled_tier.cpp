#include "registry/precompiled_tier.hpp"

#include "cache/precompiled.hpp"
#include "core/stopwatch.hpp"

namespace kreg::registry {

std::optional<Found> PrecompiledTier::find(const BuildRequest& request) {
  if (!request.values.empty() && !with_constants_) return std::nullopt;
  const core::Stopwatch watch;
  // Keyed by the whole request, so anything that differs from the build-time compile misses.
  const std::optional<std::string_view> payload = cache::find_precompiled(request.key_text);
  if (!payload) return std::nullopt;
  std::optional<Found> found = decode_found(*payload, request, Origin::Precompiled, true);
  if (!found) return std::nullopt;
  const std::uint64_t ns = watch.nanoseconds();
  counters_.add(Counter::PrecompiledHits);
  counters_.add(Counter::PrecompiledNs, ns);
  found->ms = static_cast<double>(ns) / 1e6;
  return found;
}

}  // namespace kreg::registry
