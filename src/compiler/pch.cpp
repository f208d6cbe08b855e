#include "compiler/pch.hpp"

#include "core/env.hpp"
#include "core/log.hpp"

#include <nvrtc.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <unordered_map>

namespace kreg::compiler::pch {
namespace {

namespace fs = std::filesystem;

struct State {
  std::mutex mutex;
  std::unordered_map<std::string, int> compiles;  // by prefix text
  bool at_first_compile = false;
  // The files each PCH this process created was made from, by the PCH's path.
  std::unordered_map<std::string, std::vector<std::string>> made_from;
};

State& state() {
  static State instance;
  return instance;
}

// The process's own folder for PCH files: NVRTC writes one per prefix, and a folder shared
// with other processes would only offer files that cannot be used here.
class Folder {
 public:
  Folder() {
    std::error_code error;
    std::string pattern = (fs::temp_directory_path(error) / "kreg-pch-XXXXXX").string();
    if (error) pattern = "/tmp/kreg-pch-XXXXXX";
    if (::mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~Folder() {
    if (path_.empty()) return;
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  Folder(const Folder&) = delete;
  Folder& operator=(const Folder&) = delete;
  const std::string& path() const noexcept { return path_; }

 private:
  std::string path_;
};

const Folder& folder() {
  static const Folder instance;
  return instance;
}

std::string_view trim_left(std::string_view line) {
  while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
  return line;
}

// "#  include" -> "include ..."; nullopt unless the line is a directive.
std::optional<std::string_view> directive(std::string_view line) {
  line = trim_left(line);
  if (line.empty() || line.front() != '#') return std::nullopt;
  line.remove_prefix(1);
  return trim_left(line);
}

bool includes_kreg_header(std::string_view rest) {
  rest = trim_left(rest.substr(std::string_view("include").size()));
  return rest.starts_with("<kreg/") || rest.starts_with("\"kreg/");
}

}  // namespace

std::string_view leading_includes(std::string_view source) {
  std::size_t end = 0;
  bool other_header = false;
  while (end < source.size()) {
    const std::size_t newline = source.find('\n', end);
    if (newline == std::string_view::npos) break;  // a last line without '\n' is code
    const std::string_view line = source.substr(end, newline - end);
    const std::string_view text = trim_left(line);
    if (text.empty() || text == "\r" || (text.starts_with("//") && !text.ends_with('\\'))) {
      end = newline + 1;
      continue;
    }
    // A directive continued on the next line, or a comment or raw string that may run on,
    // would be cut by the text kreg puts after the prefix: the prefix ends before it.
    std::string_view body = line;
    if (body.ends_with('\r')) body.remove_suffix(1);
    if (body.ends_with('\\') || body.find("/*") != std::string_view::npos ||
        body.find("R\"") != std::string_view::npos) {
      break;
    }
    const std::optional<std::string_view> d = directive(line);
    if (!d) break;
    if (d->starts_with("include")) {
      other_header = other_header || !includes_kreg_header(*d);
    } else if (!d->starts_with("define")) {
      break;
    }
    end = newline + 1;
  }
  return other_header ? source.substr(0, end) : std::string_view{};
}

bool should_use(std::string_view prefix) {
  if (prefix.empty() || !core::env_flag("KREG_PCH", true)) return false;
  State& s = state();
  const std::lock_guard lock(s.mutex);
  return s.compiles[std::string(prefix)]++ > 0 || s.at_first_compile;
}

void make_at_first_compile() noexcept {
  State& s = state();
  const std::lock_guard lock(s.mutex);
  s.at_first_compile = true;
}

std::vector<std::string> options() {
  const std::string& dir = folder().path();
  if (dir.empty()) return {};
  // NVRTC warns that the #line after the prefix ends the PCH there: that is where kreg puts
  // it, so the warning says nothing to the user.
  return {"-pch", "--pch-dir=" + dir, "--pch-messages=true", "-diag-suppress=20283"};
}

Outcome take_messages(std::string& log, std::string_view program,
                      const std::optional<std::vector<std::string>>& files) {
  Outcome outcome;
  const std::string lead = "\"" + std::string(program) + "\": ";
  std::string kept;
  kept.reserve(log.size());
  std::size_t at = 0;
  while (at < log.size()) {
    std::size_t end = log.find('\n', at);
    const std::size_t next = end == std::string::npos ? log.size() : end + 1;
    if (end == std::string::npos) end = log.size();
    const std::string_view line(log.data() + at, end - at);
    if (!line.starts_with(lead) || line.find("precompiled header") == std::string_view::npos) {
      kept.append(log, at, next - at);
      at = next;
      continue;
    }
    // `"prog": creating precompiled header file "PATH"`, or `using ...`.
    const std::size_t open = line.find('"', lead.size());
    const std::size_t close = open == std::string_view::npos ? open : line.rfind('"');
    const std::string path = close != std::string_view::npos && close > open
                                 ? std::string(line.substr(open + 1, close - open - 1))
                                 : std::string();
    State& s = state();
    const std::lock_guard lock(s.mutex);
    if (line.find(": creating precompiled header") != std::string_view::npos) {
      outcome.created = true;
      if (files && !path.empty()) s.made_from[path] = *files;
    } else if (line.find(": using precompiled header") != std::string_view::npos) {
      outcome.used = true;
      if (auto found = s.made_from.find(path); found != s.made_from.end()) {
        outcome.pch_files = found->second;
      }
    }
    at = next;
  }
  log = std::move(kept);
  return outcome;
}

void grow_heap(std::size_t required) noexcept {
  State& s = state();
  const std::lock_guard lock(s.mutex);
  std::size_t current = 0;
  if (nvrtcGetPCHHeapSize(&current) == NVRTC_SUCCESS && current >= required) return;
  if (nvrtcSetPCHHeapSize(required) == NVRTC_SUCCESS) {
    try {
      core::log_write(core::LogLevel::Debug,
                      "NVRTC's PCH heap grown to " + std::to_string(required >> 20) + " MiB");
    } catch (...) {
      // Only a debug line.
    }
  }
}

}  // namespace kreg::compiler::pch
