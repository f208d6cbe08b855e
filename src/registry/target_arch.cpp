#include "registry/target_arch.hpp"

#include "compiler/nvrtc_compiler.hpp"
#include "core/env.hpp"

#include <kreg/error.hpp>

#include <algorithm>
#include <string_view>
#include <vector>

namespace kreg::registry {
namespace {

// "sm_90", "sm_90a" or "sm_100f": the forms NVRTC accepts for CUBIN output.
bool valid_arch(std::string_view arch) {
  if (arch.size() < 4 || arch.substr(0, 3) != "sm_") return false;
  std::string_view digits = arch.substr(3);
  if (digits.back() == 'a' || digits.back() == 'f') digits.remove_suffix(1);
  return !digits.empty() &&
         std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; });
}

int arch_number(std::string_view arch) {
  int value = 0;
  for (char c : arch.substr(3)) {
    if (c < '0' || c > '9') break;
    value = value * 10 + (c - '0');
  }
  return value;
}

}  // namespace

std::string requested_arch(const RegistryOptions& options) {
  std::string arch = options.arch;
  if (arch.empty()) arch = core::env_string("KREG_ARCH").value_or("");
  if (arch.empty()) return arch;
  if (!valid_arch(arch)) {
    throw Error(ErrorCode::InvalidArgument,
                "'" + arch + "' is not a target arch (expected e.g. sm_90 or sm_90a)");
  }
  const std::vector<int> supported = compiler::supported_archs();
  if (std::find(supported.begin(), supported.end(), arch_number(arch)) == supported.end()) {
    std::string list;
    for (int a : supported) list += (list.empty() ? "sm_" : ", sm_") + std::to_string(a);
    throw Error(ErrorCode::InvalidArgument, "NVRTC " + compiler::version() + " cannot target " +
                                                arch + " (it supports " + list + ")");
  }
  return arch;
}

}  // namespace kreg::registry
