// prewarm_all in a fresh process, for the comparison with the Python form
// (bench/python/prewarm_all.py, docs/performance.md): the same registry options, the same
// call, the same line printed.
#include <kreg/registry.hpp>

#include <chrono>
#include <cstdio>

int main() {
  kreg::RegistryOptions options;
  options.precompiled = false;  // every binary from the disk cache, as in the Python form
  kreg::Registry registry(options);
  const auto start = std::chrono::steady_clock::now();
  const kreg::PrewarmReport report = registry.prewarm_all();
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  const kreg::Stats stats = registry.stats();
  std::printf("cpp-prewarm-all %.3f ms (%zu kernels, %llu compiles, %llu disk hits)\n", ms,
              report.warmed, static_cast<unsigned long long>(stats.compiles),
              static_cast<unsigned long long>(stats.disk_hits));
  return report.failures.empty() ? 0 : 1;
}
