#include "compiler/nvrtc_compiler.hpp"

#include "core/env.hpp"
#include "core/faults.hpp"
#include "core/log.hpp"

#include <kreg/error.hpp>

#include <dlfcn.h>
#include <nvrtc.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <memory>

namespace kreg::compiler {
namespace {

void check(nvrtcResult result, std::string_view what) {
  if (result == NVRTC_SUCCESS) return;
  throw Error(ErrorCode::CompileError,
              "kreg: NVRTC " + std::string(what) + " failed: " + nvrtcGetErrorString(result));
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

}  // namespace

Result compile(const Request& request) {
  const auto start = std::chrono::steady_clock::now();
  // NVRTC wants NUL-terminated strings; the views we are given need not be.
  std::vector<std::string> header_texts;
  std::vector<std::string> header_names;
  for (const Header& header : request.headers) {
    header_texts.emplace_back(header.text);
    header_names.emplace_back(header.name);
  }
  std::vector<const char*> text_pointers;
  std::vector<const char*> name_pointers;
  for (std::size_t i = 0; i < header_texts.size(); ++i) {
    text_pointers.push_back(header_texts[i].c_str());
    name_pointers.push_back(header_names[i].c_str());
  }

  const std::string source(request.source);
  const std::string& name = request.program_name;
  Program program(new nvrtcProgram(nullptr));
  check(nvrtcCreateProgram(program.get(), source.c_str(), name.c_str(),
                           static_cast<int>(text_pointers.size()), text_pointers.data(),
                           name_pointers.data()),
        "nvrtcCreateProgram");
  for (const std::string& expression : request.name_expressions) {
    check(nvrtcAddNameExpression(*program, expression.c_str()), "nvrtcAddNameExpression");
  }

  std::vector<std::string> options;
  options.reserve(request.options.size() + 1);
  options.push_back("-arch=" + request.arch);
  options.insert(options.end(), request.options.begin(), request.options.end());
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
  const nvrtcResult status = compile_program(*program, option_pointers);
  result.log = program_log(*program);
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
    result.log += "\nkreg: NVRTC produced no CUBIN for " + request.arch;
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

std::string version() {
  int major = 0;
  int minor = 0;
  check(nvrtcVersion(&major, &minor), "nvrtcVersion");
  return std::to_string(major) + "." + std::to_string(minor);
}

std::string identity() {
  std::string id = "nvrtc " + version();
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&nvrtcVersion), &info) != 0 && info.dli_fname != nullptr) {
    struct stat st {};
    id += std::string(" ") + info.dli_fname;
    if (::stat(info.dli_fname, &st) == 0) {
      id += " " + std::to_string(st.st_size) + " " + std::to_string(st.st_mtime);
    }
  }
  return id;
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
      if (fs::exists(fs::path(candidate) / "cuda_runtime.h", error)) return candidate;
    }
    return std::string();
  }();
  return dir;
}

}  // namespace kreg::compiler
