#include <kreg/binary.hpp>

namespace kreg {

const char* to_string(Origin origin) noexcept {
  switch (origin) {
    case Origin::Compiled: return "compiled";
    case Origin::Disk: return "disk";
    case Origin::Precompiled: return "precompiled";
  }
  return "unknown";
}

Binary::Binary(std::string source_name, std::string key, std::string arch, Origin origin,
               std::vector<char> image, std::vector<Symbol> symbols, std::string log, double ms)
    : source_name_(std::move(source_name)),
      key_(std::move(key)),
      arch_(std::move(arch)),
      origin_(origin),
      image_(std::move(image)),
      symbols_(std::move(symbols)),
      log_(std::move(log)),
      ms_(ms) {}

std::string_view Binary::symbol(std::string_view name) const noexcept {
  for (const Symbol& s : symbols_) {
    if (s.name == name) return s.symbol;
  }
  return {};
}

}  // namespace kreg
