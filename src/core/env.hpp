#pragma once
// Reading kreg's environment variables in one place, so their spelling and parsing rules
// are uniform: a flag is off for "0", "false", "off" or "no" (any case), on otherwise.

#include <optional>
#include <string>

namespace kreg::core {

std::optional<std::string> env_string(const char* name);
bool env_flag(const char* name, bool fallback);

}  // namespace kreg::core
