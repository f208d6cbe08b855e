#include "registry/request.hpp"

#include "compiler/constant_values.hpp"
#include "core/embedded.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

namespace kreg::registry {
namespace {

// The toolkit's headers; CUDA 13 keeps libcu++ (<cuda/std/...>) in a folder of its own.
void add_toolkit_includes(std::vector<std::string>& options) {
  const std::string dir = compiler::toolkit_include_dir();
  if (dir.empty()) return;
  options.push_back("-I" + dir);
  std::error_code error;
  if (std::filesystem::is_directory(dir + "/cccl", error)) options.push_back("-I" + dir + "/cccl");
}

}  // namespace

std::string source_arch(const Source& source, std::string arch) {
  // Only sm_90 and newer have an `a` variant; an older target compiles as it is, and the
  // source's own #if on the features picks its portable path.
  const auto digits = arch.find_first_of("0123456789");
  const int number = digits == std::string::npos ? 0 : std::atoi(arch.c_str() + digits);
  if (source.arch_specific && number >= 90 && arch.back() != 'a') {
    if (arch.back() == 'f') arch.pop_back();
    arch += 'a';
  }
  return arch;
}

compiler::Request make_request(const Source& source, const std::vector<core::ConstantValue>& values,
                               const std::string& arch,
                               const std::vector<std::string>& global_options,
                               std::string& storage) {
  compiler::Request request;
  request.program_name = source.name + ".cu";
  request.source = source.text;
  request.arch = arch;
  request.embedded = core::embedded_headers();
  request.embedded_sha256 = core::embedded_headers_sha256();
  request.options = {"-std=c++17"};
  if (!values.empty()) {
    // Without values <kreg/kernel.cuh> declares every constant "not given" by itself, and
    // a compile without a pre-included header starts measurably faster.
    storage = compiler::constant_values_header(values);
    request.headers.push_back({compiler::kConstantValuesHeader, storage});
    request.options.push_back(std::string("--pre-include=") + compiler::kConstantValuesHeader);
  }
  if (source.kreg_headers_only) {
    // Leaves out the runtime's implicit declarations: half of a small compile.
    request.options.emplace_back("-minimal");
  } else {
    add_toolkit_includes(request.options);
  }
  request.options.insert(request.options.end(), global_options.begin(), global_options.end());
  request.options.insert(request.options.end(), source.options.begin(), source.options.end());
  for (const Entry& entry : source.entries) {
    if (!entry.expression.empty()) request.name_expressions.push_back(entry.expression);
  }
  return request;
}

compiler::Result compile_with_fallback(
    compiler::Request request,
    const std::function<compiler::Result(const compiler::Request&)>& run) {
  compiler::Result result = run(request);
  const auto minimal = std::find(request.options.begin(), request.options.end(), "-minimal");
  if (result.ok || minimal == request.options.end()) return result;
  request.options.erase(minimal);
  add_toolkit_includes(request.options);
  return run(request);
}

}  // namespace kreg::registry
