#include "registry/precompiled_tier.hpp"

#include "cache/precompiled.hpp"

namespace kreg::registry {

std::optional<Found> PrecompiledTier::find(const BuildRequest& request) {
  if (!request.values.empty() && !with_constants_) return std::nullopt;
  // Keyed by the whole request, so anything that differs from the build-time compile misses.
  const std::optional<std::string_view> payload = cache::find_precompiled(request.key_text);
  if (!payload) return std::nullopt;
  return decode_found(*payload, request, Origin::Precompiled, true);
}

}  // namespace kreg::registry
