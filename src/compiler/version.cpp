// The parts of <kreg/version.hpp> that NVRTC answers.
#include <kreg/version.hpp>

#include "compiler/nvrtc_compiler.hpp"

namespace kreg {

std::string nvrtc_version() {
  return compiler::version();
}

std::vector<std::string> supported_archs() {
  std::vector<std::string> out;
  for (int arch : compiler::supported_archs()) out.push_back("sm_" + std::to_string(arch));
  return out;
}

}  // namespace kreg
