#pragma once
// The kernels the remote-cache tests and their worker process compile: small, distinct
// sources, so that every binary has a key of its own and compiles in milliseconds.

#include <kreg/kreg.hpp>

#include <string>
#include <vector>

namespace kreg::test {

inline std::vector<std::string> register_remote_sources(Registry& reg, int count) {
  std::vector<std::string> names;
  for (int i = 0; i < count; ++i) {
    const std::string name = "remote_k" + std::to_string(i);
    reg.register_source(name, "extern \"C\" __global__ void " + name +
                                  "(float* x) { x[threadIdx.x] = x[threadIdx.x] * " +
                                  std::to_string(i + 2) + ".0f + 1.0f; }\n");
    names.push_back(name);
  }
  return names;
}

// A registry for sm_90 (no GPU needed) on `cache_dir`, compiling in-process, with the
// remote cache at `url` (none if empty).
inline RegistryOptions remote_options(const std::filesystem::path& cache_dir,
                                      const std::string& url) {
  RegistryOptions options;
  options.arch = "sm_90";
  options.precompiled = false;
  options.warm_compiler = false;
  options.compile_processes = 0;
  options.cache_dir = cache_dir;
  options.remote.url = url;
  options.remote.enabled = !url.empty();
  return options;
}

}  // namespace kreg::test
