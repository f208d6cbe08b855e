#include "core/env.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
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

std::optional<std::uint64_t> parse_size(std::string_view text) {
  std::uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end == text.data() || value == 0) return std::nullopt;
  const std::string_view unit(end, static_cast<std::size_t>(text.data() + text.size() - end));
  std::uint64_t scale = 0;
  if (unit.empty()) scale = 1;
  if (unit == "K" || unit == "KiB") scale = std::uint64_t{1} << 10;
  if (unit == "M" || unit == "MiB") scale = std::uint64_t{1} << 20;
  if (unit == "G" || unit == "GiB") scale = std::uint64_t{1} << 30;
  if (scale == 0 || value > UINT64_MAX / scale) return std::nullopt;
  return value * scale;
}

}  // namespace kreg::core
