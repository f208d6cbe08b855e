#pragma once
// Reading kreg's environment variables in one place, so their spelling and parsing rules
// are uniform: a flag is off for "0", "false", "off" or "no" (any case), on otherwise.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace kreg::core {

std::optional<std::string> env_string(const char* name);
bool env_flag(const char* name, bool fallback);

// A size: decimal digits, then nothing or K, M, G (KiB, MiB, GiB). std::nullopt for
// anything else, zero and overflow included: no sign, no spaces, no other unit.
std::optional<std::uint64_t> parse_size(std::string_view text);

}  // namespace kreg::core
