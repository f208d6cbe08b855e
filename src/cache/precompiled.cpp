#include "cache/precompiled.hpp"

#include "cache/entry.hpp"

#include <kreg/version.hpp>

#include <algorithm>
#include <set>

namespace kreg::cache {

std::optional<std::string_view> find_precompiled(std::string_view key_text) {
  const auto entries = precompiled_entries();
  if (entries.empty()) return std::nullopt;
  const std::string digest = key_digest(key_text);
  // The table is sorted by digest at build time.
  auto it = std::lower_bound(
      entries.begin(), entries.end(), digest,
      [](const PrecompiledEntry& e, const std::string& d) { return e.digest < d; });
  if (it == entries.end() || it->digest != digest) return std::nullopt;
  return it->payload;
}

}  // namespace kreg::cache

namespace kreg {

std::vector<std::string> precompiled_archs() {
  std::set<std::string_view> archs;
  for (const auto& e : cache::precompiled_entries()) archs.insert(e.arch);
  return {archs.begin(), archs.end()};
}

}  // namespace kreg
