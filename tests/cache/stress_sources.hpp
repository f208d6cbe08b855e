#pragma once
// The kernel set of the disk-cache stress test, shared by the test and its worker processes.

#include <kreg/kreg.hpp>

#include <string>
#include <vector>

namespace kreg::test {

inline constexpr int kStressSources = 12;

inline RegistryOptions stress_options(const std::string& dir) {
  RegistryOptions options;
  options.arch = "sm_90";
  options.cache_dir = dir;
  options.warm_compiler = false;
  options.prewarm_threads = 4;
  options.compile_processes = 0;
  return options;
}

inline std::vector<std::string> register_stress_sources(Registry& reg) {
  std::vector<std::string> names;
  for (int i = 0; i < kStressSources; ++i) {
    names.push_back("stress_" + std::to_string(i));
    reg.register_source(names.back(),
                        "extern \"C\" __global__ void " + names.back() +
                            "(float* p) { p[threadIdx.x] *= " + std::to_string(i + 2) + ".0f; }\n");
  }
  return names;
}

}  // namespace kreg::test
