#include "core/log.hpp"

#include "core/env.hpp"

#include <cstdio>
#include <mutex>
#include <string>

namespace kreg::core {
namespace {

LogLevel parse_level() {
  auto value = env_string("KREG_LOG");
  if (!value) return LogLevel::Warn;
  if (*value == "debug") return LogLevel::Debug;
  if (*value == "info") return LogLevel::Info;
  if (*value == "warn" || *value == "warning") return LogLevel::Warn;
  if (*value == "error") return LogLevel::Error;
  if (*value == "off" || *value == "none") return LogLevel::Off;
  // Once per process, as the level is read once; not through log_write, which needs the level.
  const std::string line = "kreg [warn] KREG_LOG='" + *value +
                           "' is not a level (debug, info, warn, error or off); using warn\n";
  std::fwrite(line.data(), 1, line.size(), stderr);
  return LogLevel::Warn;
}

const char* level_name(LogLevel level) {
  switch (level) {
    case LogLevel::Debug: return "debug";
    case LogLevel::Info: return "info";
    case LogLevel::Warn: return "warn";
    case LogLevel::Error: return "error";
    case LogLevel::Off: break;
  }
  return "off";
}

}  // namespace

LogLevel log_level() noexcept {
  static const LogLevel level = parse_level();
  return level;
}

void log_write(LogLevel level, std::string_view message) noexcept {
  if (!log_enabled(level)) return;
  try {
    std::string line = "kreg [";
    line += level_name(level);
    line += "] ";
    line += message;
    line += '\n';
    // One fwrite per line so that lines from different threads do not interleave.
    std::fwrite(line.data(), 1, line.size(), stderr);
  } catch (...) {
    // Logging must never take the process down; a lost line is the lesser harm.
  }
}

}  // namespace kreg::core
