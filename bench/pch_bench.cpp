// Compiles of sources that include the toolkit's heavy headers, in one fresh process each run:
// bench/pch.sh runs it with KREG_PCH on and off, alternating, and prints the comparison.
//
//   kreg_pch_bench sequence cub|half N   N distinct sources compiled one after another
//   kreg_pch_bench prewarm cub|half N    one prewarm of N distinct sources
//
// Prints one line per compile ("compile I MS") or per prewarm ("prewarm MS ..."), then the
// registry's PCH counters. Needs no GPU (the target is KREG_BENCH_ARCH, default sm_90).
#include <kreg/kreg.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// A distinct kernel per index, after the same #include lines.
std::string source(const std::string& kind, int i) {
  const std::string n = std::to_string(i);
  if (kind == "cub") {
    return "#include <cub/block/block_reduce.cuh>\n"
           "extern \"C\" __global__ void heavy" +
           n +
           "(const float* in, float* out) {\n"
           "  using Reduce = cub::BlockReduce<float, 128>;\n"
           "  __shared__ typename Reduce::TempStorage temp;\n"
           "  const float sum = Reduce(temp).Sum(in[threadIdx.x] * " +
           n +
           ".0f);\n"
           "  if (threadIdx.x == 0) out[blockIdx.x] = sum;\n"
           "}\n";
  }
  return "#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n"
         "extern \"C\" __global__ void heavy" +
         n +
         "(const __half* a, const __nv_bfloat16* b, float* out) {\n"
         "  const unsigned i = threadIdx.x;\n"
         "  out[i] = __half2float(a[i]) * " +
         n +
         ".0f + __bfloat162float(b[i]);\n"
         "}\n";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4 || (std::string(argv[2]) != "cub" && std::string(argv[2]) != "half")) {
    std::fprintf(stderr, "usage: kreg_pch_bench sequence|prewarm cub|half N\n");
    return 2;
  }
  const std::string mode = argv[1];
  const std::string kind = argv[2];
  const int count = std::atoi(argv[3]);
  kreg::RegistryOptions options;
  // NOLINTNEXTLINE(concurrency-mt-unsafe): read before any thread starts
  const char* arch = std::getenv("KREG_BENCH_ARCH");
  options.arch = arch != nullptr ? arch : "sm_90";
  options.disk_cache = false;
  options.precompiled = false;
  options.builtins = false;
  kreg::Registry reg(options);
  std::vector<kreg::KernelRequest> requests;
  for (int i = 0; i < count; ++i) {
    reg.register_source("heavy" + std::to_string(i), source(kind, i));
    requests.push_back({"heavy" + std::to_string(i), {}});
  }
  if (mode == "sequence") {
    for (int i = 0; i < count; ++i) {
      const auto start = Clock::now();
      reg.compile("heavy" + std::to_string(i));
      std::printf("compile %d %.1f\n", i, ms_since(start));
    }
  } else if (mode == "prewarm") {
    const auto start = Clock::now();
    const std::size_t ready = reg.prewarm(requests);
    std::printf("prewarm %.1f (%zu of %d ready)\n", ms_since(start), ready, count);
    if (ready != static_cast<std::size_t>(count)) return 1;
  } else {
    std::fprintf(stderr, "unknown mode %s\n", mode.c_str());
    return 2;
  }
  const kreg::Stats s = reg.stats();
  std::printf("stats compiles %llu worker %llu pch_created %llu pch_used %llu\n",
              static_cast<unsigned long long>(s.compiles),
              static_cast<unsigned long long>(s.worker_compiles),
              static_cast<unsigned long long>(s.pch_creations),
              static_cast<unsigned long long>(s.pch_uses));
  return 0;
}
