#include "core/env.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>

namespace kreg::core {

std::optional<std::string> env_string(const char* name) {
  const char* value = std::getenv(name);  // NOLINT(concurrency-mt-unsafe): read-only use
  if (value == nullptr || *value == '\0') return std::nullopt;
  return std::string(value);
}

bool env_flag(const char* name, bool fallback) {
  auto value = env_string(name);
  if (!value) return fallback;
  std::string lower = *value;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return !(lower == "0" || lower == "false" || lower == "off" || lower == "no");
}

}  // namespace kreg::core
