#include <kreg/binary.hpp>

#include "core/binary_parts.hpp"

namespace kreg {

const char* to_string(Origin origin) noexcept {
  switch (origin) {
    case Origin::Compiled: return "compiled";
    case Origin::Disk: return "disk";
    case Origin::Precompiled: return "precompiled";
    case Origin::Remote: return "remote";
  }
  return "unknown";
}

Binary::Binary(core::BinaryParts parts)
    : source_name_(std::move(parts.source_name)),
      key_(std::move(parts.key)),
      arch_(std::move(parts.arch)),
      origin_(parts.origin),
      owned_image_(std::move(parts.image)),
      lasting_image_(parts.lasting_image),
      symbols_(std::move(parts.symbols)),
      log_(std::move(parts.log)),
      ms_(parts.ms) {}

std::string_view Binary::symbol(std::string_view name) const noexcept {
  for (const Symbol& s : symbols_) {
    if (s.name == name) return s.symbol;
  }
  return {};
}

}  // namespace kreg
