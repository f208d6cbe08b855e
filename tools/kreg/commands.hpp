#pragma once
// The kreg command-line tool's commands.

#include <kreg/kreg.hpp>

#include <string>
#include <vector>

namespace kreg::cli {

struct SelfCheckOptions {
  std::string arch;
  bool json = false;
  unsigned jobs = 0;
};

// Compiles and prewarms every built-in kernel, prints a table, and on a GPU runs each one
// against a CPU reference. Returns the process exit code.
int selfcheck(const SelfCheckOptions& options);

// The requests that cover every built-in entry, with constants where a source needs them.
std::vector<KernelRequest> builtin_requests(const Registry& reg);

struct GpuCheck {
  std::string label;
  bool ok = false;
  std::string detail;
};

// Launches each built-in on random data and compares with a float64 reference.
std::vector<GpuCheck> run_gpu_checks(Registry& reg);

}  // namespace kreg::cli
