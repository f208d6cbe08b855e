#pragma once
// Quoting one error's message inside another's.

#include <string>
#include <string_view>

namespace kreg::core {

// A lower layer's message without its "kreg: " prefix, to be quoted in one that names the
// kernel (which carries the prefix itself).
inline std::string without_prefix(std::string_view message) {
  constexpr std::string_view kPrefix = "kreg: ";
  if (message.starts_with(kPrefix)) message.remove_prefix(kPrefix.size());
  return std::string(message);
}

}  // namespace kreg::core
