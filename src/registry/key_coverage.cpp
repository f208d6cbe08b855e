#include "registry/key_coverage.hpp"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <string_view>

namespace kreg::registry {
namespace {

bool in_memory(const compiler::Request& request, std::string_view name) {
  bool found = false;
  compiler::for_each_header(
      request, [&](std::string_view header, std::string_view) { found = found || header == name; });
  return found;
}

// NVRTC's own built-in headers, which it lists among the files it read.
bool nvrtc_builtin(std::string_view name) {
  return name == "__nv_nvrtc_builtin_header.h" || name == "__nv_name_map";
}

bool under(const std::string& path, const std::string& dir) {
  if (dir.empty() || path.empty() || path.front() != '/') return false;
  const std::string normal = std::filesystem::path(path).lexically_normal().string();
  return normal.size() > dir.size() + 1 && normal.starts_with(dir) && normal[dir.size()] == '/';
}

}  // namespace

bool key_can_cover(const Source& source, const compiler::Request& request) {
  if (source.probes_files) return false;
  // The toolkit's folder is probed on the file system the first time it is asked for, so it
  // is asked for only when there is an include path to compare: a built-in's first get in a
  // process (kreg headers only, no -I) would otherwise pay for the probe.
  std::optional<std::string> toolkit;
  for (const std::string& option : request.options) {
    if (option.starts_with("-I")) {
      if (!toolkit) toolkit = compiler::toolkit_include_dir();
      if (option == "-I" + *toolkit || option == "-I" + *toolkit + "/cccl") continue;
    }
    constexpr std::string_view kPreInclude = "--pre-include=";
    if (option.starts_with(kPreInclude) &&
        in_memory(request, std::string_view(option).substr(kPreInclude.size()))) {
      continue;
    }
    // Include paths and pre-includes name files by the caller's choice; front-end options
    // (-Xcudafe) can add either; a precompiled header holds other headers' text.
    for (std::string_view reads :
         {"-I", "--include-path", "-include", "--pre-include", "-isystem", "--system-include",
          "-Xcudafe", "-use-pch", "--use-pch", "-pch-dir", "--pch-dir"}) {
      if (option.starts_with(reads)) return false;
    }
  }
  return true;
}

std::string uncovered_read(const compiler::Request& request, const compiler::Result& result) {
  if (!result.files_known) return "NVRTC did not say which files it read";
  const std::string toolkit = compiler::toolkit_include_dir();
  for (const std::string& file : result.files_read) {
    if (in_memory(request, file) || nvrtc_builtin(file) || under(file, toolkit)) continue;
    return "it read '" + file + "', whose text the cache key does not hold";
  }
  return {};
}

}  // namespace kreg::registry
