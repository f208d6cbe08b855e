#pragma once
// Leveled logging to stderr. The level comes from KREG_LOG (debug, info, warn, error, off)
// and is read once; the default is warn, so a working process prints nothing.

#include <string_view>

namespace kreg::core {

enum class LogLevel { Debug = 0, Info = 1, Warn = 2, Error = 3, Off = 4 };

LogLevel log_level() noexcept;
inline bool log_enabled(LogLevel level) noexcept {
  return level >= log_level();
}
// Writes one line "kreg [level] message". Never throws.
void log_write(LogLevel level, std::string_view message) noexcept;

}  // namespace kreg::core
