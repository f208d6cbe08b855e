#include "compiler/nvrtc_compiler.hpp"

#include "compiler/include_trace.hpp"
#include "compiler/pch.hpp"
#include "core/env.hpp"
#include "core/faults.hpp"
#include "core/log.hpp"

#include <kreg/error.hpp>

#include <nvrtc.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>

namespace kreg::compiler {
namespace {

void check(nvrtcResult result, std::string_view what) {
  if (result == NVRTC_SUCCESS) return;
  throw Error(ErrorCode::CompileError,
              "NVRTC " + std::string(what) + " failed: " + nvrtcGetErrorString(result));
}

// Destroys the program however compile() leaves.
struct ProgramDeleter {
  void operator()(nvrtcProgram* program) const noexcept {
    nvrtcDestroyProgram(program);
    delete program;
  }
};
using Program = std::unique_ptr<nvrtcProgram, ProgramDeleter>;

std::string program_log(nvrtcProgram program) {
  std::size_t size = 0;
  if (nvrtcGetProgramLogSize(program, &size) != NVRTC_SUCCESS || size <= 1) return {};
  std::string log(size, '\0');
  if (nvrtcGetProgramLog(program, log.data()) != NVRTC_SUCCESS) return {};
  log.resize(size - 1);  // drop the terminating NUL
  return log;
}

// nvrtcCompileProgram, or the failure a test armed in its place.
nvrtcResult compile_program(nvrtcProgram program, const std::vector<const char*>& options) {
  if (auto injected = core::faults::hit(core::faults::Point::NvrtcCompile)) {
    return static_cast<nvrtcResult>(*injected);
  }
  return nvrtcCompileProgram(program, static_cast<int>(options.size()), options.data());
}

// NVRTC looks for a quoted include next to the program first. /dev/null is not a folder, so
// nothing can ever be found "next to" a program named inside it.
constexpr std::string_view kProgramFolder = "/dev/null/";

// NVRTC's front end names internal-linkage entities (a namespace-scope constexpr, anything in
// an anonymous namespace) after the program's first external function; a program whose
// first is a template, or comes later, gets a name made of a hash and the process id, and so
// other bytes in every process. This one comes first, so the names depend on the program
// alone. Nothing calls it, so nothing of it reaches the image (but debug information).
constexpr std::string_view kModuleAnchor = "extern \"C\" __device__ void __kreg_module_id() {}\n";

// The source without a byte-order mark, which is only valid as a file's first bytes, and the
// source no longer starts the text.
std::string_view without_bom(std::string_view source) {
  if (source.starts_with("\xEF\xBB\xBF")) source.remove_prefix(3);
  return source;
}

std::size_t count_lines(std::string_view text) {
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

// The text NVRTC compiles: the module anchor, then the source after a #line that gives
// diagnostics and __FILE__ the program's own name and lines back. With a PCH, the source's
// leading #include lines (`pch_prefix`) come first, unchanged and on their own line numbers,
// because NVRTC's PCH covers only what precedes the first declaration.
std::string program_text(const Request& request, std::string_view pch_prefix) {
  std::string_view source = without_bom(request.source);
  source.remove_prefix(pch_prefix.size());
  std::string line = "#line " + std::to_string(count_lines(pch_prefix) + 1);
  const std::string& name = request.program_name;
  if (std::none_of(name.begin(), name.end(), [](char c) { return c >= 0 && c < 0x20; })) {
    line += " \"";
    for (char c : name) {
      if (c == '"' || c == '\\') line += '\\';
      line += c;
    }
    line += '"';
  }
  std::string text;
  text.reserve(pch_prefix.size() + kModuleAnchor.size() + line.size() + 1 + source.size());
  text.append(pch_prefix).append(kModuleAnchor).append(line).append("\n").append(source);
  return text;
}

// Whether the caller's own options already say what to do with precompiled headers.
bool asks_for_pch(const std::vector<std::string>& options) {
  return std::any_of(options.begin(), options.end(), [](const std::string& o) {
    return o == "-pch" || o == "--pch" || o.starts_with("--create-pch") ||
           o.starts_with("-create-pch") || o.starts_with("--use-pch") || o.starts_with("-use-pch");
  });
}

// Files of `extra` not yet in `files`, added in order.
void add_files(std::vector<std::string>& files, const std::vector<std::string>& extra) {
  for (const std::string& file : extra) {
    if (std::find(files.begin(), files.end(), file) == files.end()) files.push_back(file);
  }
}

// NVRTC's closing line names the program by the path it was given.
void restore_program_name(std::string& log, const std::string& nvrtc_name,
                          const std::string& name) {
  const std::string from = "\"" + nvrtc_name + "\"";
  const std::string to = "\"" + name + "\"";
  for (std::size_t at = log.find(from); at != std::string::npos; at = log.find(from, at)) {
    log.replace(at, from.size(), to);
    at += to.size();
  }
}

// One attempt; `traced` adds the options that list the files read; a `pch_prefix` compiles
// with NVRTC's automatic PCH over it. `status` is NVRTC's.
Result compile_once(const Request& request, bool traced, std::string_view pch_prefix,
                    nvrtcResult& status) {
  const auto start = std::chrono::steady_clock::now();
  // NVRTC wants NUL-terminated strings; the views we are given need not be.
  std::vector<std::string> header_texts;
  std::vector<std::string> header_names;
  for_each_header(request, [&](std::string_view name, std::string_view text) {
    header_texts.emplace_back(text);
    header_names.emplace_back(name);
  });
  std::vector<const char*> text_pointers;
  std::vector<const char*> name_pointers;
  for (std::size_t i = 0; i < header_texts.size(); ++i) {
    text_pointers.push_back(header_texts[i].c_str());
    name_pointers.push_back(header_names[i].c_str());
  }

  const std::vector<std::string> pch_options =
      pch_prefix.empty() ? std::vector<std::string>{} : pch::options();
  if (pch_options.empty()) pch_prefix = {};
  const std::string source = program_text(request, pch_prefix);
  const std::string& name = request.program_name;
  const std::string nvrtc_name = std::string(kProgramFolder) + name;
  Program program(new nvrtcProgram(nullptr));
  check(nvrtcCreateProgram(program.get(), source.c_str(), nvrtc_name.c_str(),
                           static_cast<int>(text_pointers.size()), text_pointers.data(),
                           name_pointers.data()),
        "nvrtcCreateProgram");
  for (const std::string& expression : request.name_expressions) {
    check(nvrtcAddNameExpression(*program, expression.c_str()), "nvrtcAddNameExpression");
  }

  const std::optional<IncludeTrace> trace =
      traced ? std::make_optional<IncludeTrace>() : std::nullopt;
  std::vector<std::string> options;
  options.reserve(request.options.size() + 9);
  options.push_back("-arch=" + request.arch);
  options.insert(options.end(), request.options.begin(), request.options.end());
  options.insert(options.end(), pch_options.begin(), pch_options.end());
  if (trace) {
    for (std::string& option : trace->options()) options.push_back(std::move(option));
  }
  std::vector<const char*> option_pointers;
  option_pointers.reserve(options.size());
  for (const std::string& option : options) option_pointers.push_back(option.c_str());
  if (core::log_enabled(core::LogLevel::Debug)) {
    std::string line = "nvrtc " + name;
    for (const std::string& option : options) line += " " + option;
    core::log_write(core::LogLevel::Debug, line);
  }

  Result result;
  auto elapsed = [&] {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
        .count();
  };
  status = compile_program(*program, option_pointers);
  result.log = program_log(*program);
  std::optional<std::vector<std::string>> files = trace ? trace->files() : std::nullopt;
  if (!pch_prefix.empty()) {
    pch::Outcome outcome = pch::take_messages(result.log, nvrtc_name, files);
    result.pch_created = outcome.created;
    result.pch_used = outcome.used;
    if (outcome.used) {
      // The trace leaves out what came from the PCH: without the list it was made from, the
      // files read are not known.
      if (files && outcome.pch_files) {
        add_files(*files, *outcome.pch_files);
      } else {
        files.reset();
      }
    }
    if (nvrtcGetPCHCreateStatus(*program) == NVRTC_ERROR_PCH_CREATE_HEAP_EXHAUSTED) {
      std::size_t required = 0;
      if (nvrtcGetPCHHeapSizeRequired(*program, &required) == NVRTC_SUCCESS) {
        pch::grow_heap(required);
      }
    }
  }
  restore_program_name(result.log, nvrtc_name, name);
  if (files) {
    result.files_read = std::move(*files);
    result.files_known = true;
  }
  if (status == NVRTC_ERROR_OUT_OF_MEMORY || status == NVRTC_ERROR_PROGRAM_CREATION_FAILURE) {
    check(status, "nvrtcCompileProgram");
  }
  if (status != NVRTC_SUCCESS) {
    if (result.log.empty()) result.log = nvrtcGetErrorString(status);
    result.milliseconds = elapsed();
    return result;
  }
  std::size_t size = 0;
  check(nvrtcGetCUBINSize(*program, &size), "nvrtcGetCUBINSize");
  if (size == 0) {
    // A compute_XX target yields PTX only; kreg loads machine code, never driver-JIT'd PTX.
    result.log += "\nNVRTC produced no CUBIN for " + request.arch;
    return result;
  }
  result.image.resize(size);
  check(nvrtcGetCUBIN(*program, result.image.data()), "nvrtcGetCUBIN");
  for (const std::string& expression : request.name_expressions) {
    const char* lowered = nullptr;
    check(nvrtcGetLoweredName(*program, expression.c_str(), &lowered), "nvrtcGetLoweredName");
    result.lowered_names.emplace_back(lowered);
  }
  result.ok = true;
  result.milliseconds = elapsed();
  return result;
}

}  // namespace

Result compile(const Request& request) {
  std::string_view pch_prefix;
  if (!asks_for_pch(request.options)) {
    pch_prefix = pch::leading_includes(without_bom(request.source));
    if (!pch::should_use(pch_prefix)) pch_prefix = {};
  }
  nvrtcResult status = NVRTC_SUCCESS;
  Result result = compile_once(request, true, pch_prefix, status);
  if (status != NVRTC_ERROR_INVALID_OPTION) return result;
  // The trace's options are NVRTC's front end's, not its documented ones: an NVRTC that
  // refuses them still compiles, and only the disk cache goes without (files_known stays
  // false). A caller's own bad option fails again, with its own log.
  Result plain = compile_once(request, false, pch_prefix, status);
  // A fact about the NVRTC in use, so said once per process.
  static std::atomic<bool> warned{false};
  if (status == NVRTC_SUCCESS && !warned.exchange(true)) {
    core::log_write(core::LogLevel::Warn,
                    "NVRTC refused the options that list the files a compile reads; binaries it "
                    "compiles are kept in memory, not stored on disk");
  }
  return plain;
}

std::string version() {
  int major = 0;
  int minor = 0;
  check(nvrtcVersion(&major, &minor), "nvrtcVersion");
  return std::to_string(major) + "." + std::to_string(minor);
}

std::vector<int> supported_archs() {
  int count = 0;
  check(nvrtcGetNumSupportedArchs(&count), "nvrtcGetNumSupportedArchs");
  std::vector<int> archs(static_cast<std::size_t>(count));
  check(nvrtcGetSupportedArchs(archs.data()), "nvrtcGetSupportedArchs");
  return archs;
}

std::string toolkit_include_dir() {
  // Probed once: every compile of a source with toolkit headers asks, and the answer does
  // not change while the process runs.
  static const std::string dir = [] {
    namespace fs = std::filesystem;
    std::vector<std::string> candidates;
    for (const char* variable : {"CUDA_HOME", "CUDA_PATH"}) {
      if (auto root = core::env_string(variable)) candidates.push_back(*root + "/include");
    }
    candidates.emplace_back(KREG_CUDA_INCLUDE_DIR);
    candidates.emplace_back("/usr/local/cuda/include");
    std::error_code error;
    for (const std::string& candidate : candidates) {
      // Absolute: the path is part of every disk key, and a relative one would name another
      // folder in a process that runs elsewhere.
      const fs::path path = fs::absolute(candidate, error).lexically_normal();
      if (!error && fs::exists(path / "cuda_runtime.h", error)) {
        std::string text = path.string();
        while (text.size() > 1 && text.back() == '/') text.pop_back();
        return text;
      }
    }
    return std::string();
  }();
  return dir;
}

}  // namespace kreg::compiler
