// Custom kernels on a GPU: host overhead of apply + eval against a raw cuLaunchKernel of the
// same kernel in the same run, and the first call of a new kernel.
//
//   kreg_custom_bench overhead             interleaved batches, per-call medians
//   kreg_custom_bench first-call GAP_MS    fresh process: NVRTC warm-up gets GAP_MS first
//   kreg_custom_bench second-kernel        first call of a new kernel once NVRTC has started
//   kreg_custom_bench raw-second-kernel    the same by hand: NVRTC with default options, load,
//                                          launch, copy back (what CuPy's RawKernel does)
//   kreg_custom_bench new-kernels N        N new kernels each way, alternating, one process
//
// For the first-call modes, point KREG_CACHE_DIR at an empty folder: the compile is cold.
#include <kreg/kreg.hpp>

#include <cuda.h>

#include <nvrtc.h>
#include "bench_support.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

using kreg::bench::require;
using kreg::bench::start_driver;

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int first_call(int gap_ms) {
  start_driver();
  kreg::CustomKernel kernel("first", {"a"}, {"out"},
                            "uint i = thread_position_in_grid.x; out[i] = 2 * a[i];");
  const kreg::Array a = kreg::Array::from_data<float>({1, 2, 3, 4}, {4});
  a.eval();
  std::this_thread::sleep_for(std::chrono::milliseconds(gap_ms));
  const auto start = Clock::now();
  auto out = kernel.apply({a}, {{{4}, kreg::Dtype::Float32}}, {4}, {4});
  const auto values = out[0].to_vector<float>();
  const double ms = ms_since(start);
  if (values != std::vector<float>{2, 4, 6, 8}) return 1;
  std::printf("first-call %.3f ms\n", ms);
  return 0;
}

int second_kernel() {
  start_driver();
  const kreg::Array a = kreg::Array::from_data<float>({1, 2, 3, 4}, {4});
  // A first kernel starts NVRTC; the second is the one timed. Both are new to the cache.
  kreg::CustomKernel warm("warm", {"a"}, {"out"},
                          "uint i = thread_position_in_grid.x; out[i] = a[i] + 1;");
  warm.apply({a}, {{{4}, kreg::Dtype::Float32}}, {4}, {4})[0].eval();
  kreg::CustomKernel kernel("second", {"a"}, {"out"},
                            "uint i = thread_position_in_grid.x; out[i] = 2 * a[i];");
  const auto start = Clock::now();
  auto out = kernel.apply({a}, {{{4}, kreg::Dtype::Float32}}, {4}, {4});
  const auto values = out[0].to_vector<float>();
  const double ms = ms_since(start);
  if (values != std::vector<float>{2, 4, 6, 8}) return 1;
  std::printf("second-kernel %.3f ms\n", ms);
  return 0;
}

bool nvrtc_compile(const char* source, const char* name, std::vector<char>& cubin) {
  nvrtcProgram program = nullptr;
  if (nvrtcCreateProgram(&program, source, name, 0, nullptr, nullptr) != NVRTC_SUCCESS) {
    return false;
  }
  const char* options[] = {"-arch=sm_90"};
  bool ok = nvrtcCompileProgram(program, 1, options) == NVRTC_SUCCESS;
  std::size_t size = 0;
  ok = ok && nvrtcGetCUBINSize(program, &size) == NVRTC_SUCCESS;
  cubin.resize(size);
  ok = ok && nvrtcGetCUBIN(program, cubin.data()) == NVRTC_SUCCESS;
  nvrtcDestroyProgram(&program);
  return ok;
}

// The by-hand path for one new kernel `t` that scales four floats by `factor`: compile with
// default options, load, launch, copy back. Returns the milliseconds, or -1 on a wrong result.
struct ByHand {
  CUdeviceptr in = 0;
  CUdeviceptr out = 0;
  std::vector<char> cubin;

  ByHand() {
    const float host[4] = {1, 2, 3, 4};
    require(cuMemAlloc(&in, sizeof(host)), "cuMemAlloc");
    require(cuMemAlloc(&out, sizeof(host)), "cuMemAlloc");
    require(cuMemcpyHtoD(in, host, sizeof(host)), "cuMemcpyHtoD");
    // NVRTC's start-up is not part of a kernel's first call.
    nvrtc_compile("extern \"C\" __global__ void warm(float* a) { a[0] = 1; }", "warm.cu", cubin);
  }

  double run(int factor) {
    const auto start = Clock::now();
    const std::string source =
        "extern \"C\" __global__ void t(const float* a, float* out) {\n"
        "  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  out[i] = " +
        std::to_string(factor) + " * a[i];\n}\n";
    if (!nvrtc_compile(source.c_str(), "t.cu", cubin)) return -1;
    CUmodule module = nullptr;
    CUfunction function = nullptr;
    require(cuModuleLoadData(&module, cubin.data()), "cuModuleLoadData");
    require(cuModuleGetFunction(&function, module, "t"), "cuModuleGetFunction");
    void* params[] = {&in, &out};
    require(cuLaunchKernel(function, 1, 1, 1, 4, 1, 1, 0, nullptr, params, nullptr), "launch");
    float result[4] = {};
    require(cuMemcpyDtoH(result, out, sizeof(result)), "cuMemcpyDtoH");
    const double ms = ms_since(start);
    return result[3] == 4.0F * static_cast<float>(factor) ? ms : -1;
  }
};

int raw_second_kernel() {
  start_driver();
  ByHand by_hand;
  const double ms = by_hand.run(2);
  if (ms < 0) return 1;
  std::printf("raw-second-kernel %.3f ms\n", ms);
  return 0;
}

// New kernels in one process, kreg and by hand alternately, so that both see the same
// machine state: each kreg kernel and each hand-compiled one is new to every cache.
int new_kernels(int count) {
  start_driver();
  const kreg::Array a = kreg::Array::from_data<float>({1, 2, 3, 4}, {4});
  a.eval();
  ByHand by_hand;
  kreg::Registry& registry = kreg::device_registry();
  std::vector<double> kreg_ms;
  std::vector<double> compile_ms;
  std::vector<double> raw_ms;
  for (int i = 1; i <= count; ++i) {
    const std::string k = std::to_string(i);
    kreg::CustomKernel kernel("k" + k, {"a"}, {"out"},
                              "uint i = thread_position_in_grid.x; out[i] = " + k + " * a[i];");
    const double before = registry.stats().compile_ms;
    const auto start = Clock::now();
    auto result = kernel.apply({a}, {{{4}, kreg::Dtype::Float32}}, {4}, {4});
    const auto values = result[0].to_vector<float>();
    kreg_ms.push_back(ms_since(start));
    compile_ms.push_back(registry.stats().compile_ms - before);
    if (values[3] != 4.0F * static_cast<float>(i)) return 1;
    raw_ms.push_back(by_hand.run(i));
    if (raw_ms.back() < 0) return 1;
  }
  std::printf("new kernel, kreg (apply + to_vector)       %.3f ms (of which NVRTC %.3f ms)\n",
              median(kreg_ms), median(compile_ms));
  std::printf("new kernel, by hand (NVRTC, load, launch)  %.3f ms\n", median(raw_ms));
  std::printf("(medians of %d of each, alternating, one process)\n", count);
  return 0;
}

int overhead() {
  start_driver();
  constexpr int n = 1024;
  constexpr int kBatch = 256;
  constexpr int kRounds = 400;
  kreg::CustomKernel kernel("bench_double", {"a"}, {"out"},
                            "uint i = thread_position_in_grid.x; out[i] = 2 * a[i];");
  const kreg::Array a = kreg::Array::from_data(std::vector<float>(n, 1.0F), {n});
  a.eval();
  const std::vector<kreg::OutputSpec> specs{{{n}, kreg::Dtype::Float32}};
  const kreg::Dim3 grid{n};
  const kreg::Dim3 group{256};
  kernel.apply({a}, specs, grid, group)[0].eval();  // compile and load

  // The raw launch: the very kernel kreg loaded, with the same arguments.
  const kreg::Kernel& loaded = kreg::device_registry().get(kernel.cache_key({a}, specs));
  auto* function = reinterpret_cast<CUfunction>(loaded.native_handle());
  CUdeviceptr out = 0;
  require(cuMemAlloc(&out, n * sizeof(float)), "cuMemAlloc");
  auto in = reinterpret_cast<CUdeviceptr>(a.data());
  struct {
    unsigned x, y, z;
  } dims{n, 1, 1};
  void* params[] = {&in, &out, &dims};
  CUmemoryPool pool = nullptr;
  require(cuDeviceGetDefaultMemPool(&pool, 0), "cuDeviceGetDefaultMemPool");
  cuuint64_t threshold = ~cuuint64_t{0};
  require(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &threshold), "threshold");

  // Forms, rotated so that drift in the machine's state affects all alike: the raw launch,
  // apply + eval, and two parts of the latter (apply alone; an output's allocation and
  // release alone).
  constexpr int kForms = 5;
  std::vector<double> times[kForms];
  for (int round = 0; round < kRounds; ++round) {
    for (int j = 0; j < kForms; ++j) {
      const int form = (round + j) % kForms;
      require(cuCtxSynchronize(), "cuCtxSynchronize");
      const auto start = Clock::now();
      for (int i = 0; i < kBatch; ++i) {
        if (form == 0) {
          require(cuLaunchKernel(function, n / 256, 1, 1, 256, 1, 1, 0, nullptr, params, nullptr),
                  "cuLaunchKernel");
        } else if (form == 1) {
          kernel.apply({a}, specs, grid, group)[0].eval();
        } else if (form == 2) {
          kernel.apply({a}, specs, grid, group);
        } else if (form == 3) {
          kreg::Array::empty({n}, kreg::Dtype::Float32).eval();
        } else {
          CUdeviceptr fresh = 0;
          require(cuMemAllocFromPoolAsync(&fresh, n * sizeof(float), pool, nullptr), "alloc");
          void* fresh_params[] = {&in, &fresh, &dims};
          require(
              cuLaunchKernel(function, n / 256, 1, 1, 256, 1, 1, 0, nullptr, fresh_params, nullptr),
              "cuLaunchKernel");
          require(cuMemFreeAsync(fresh, nullptr), "free");
        }
      }
      times[form].push_back(ms_since(start) * 1000.0 / kBatch);
    }
  }
  require(cuCtxSynchronize(), "cuCtxSynchronize");
  const double r = median(times[0]);
  const double k = median(times[1]);
  std::printf("raw cuLaunchKernel        %.3f us/call\n", r);
  std::printf("kreg apply + eval         %.3f us/call\n", k);
  std::printf("kreg over raw             %+.3f us/call (median of %d batches of %d)\n", k - r,
              kRounds, kBatch);
  std::printf("  of which apply alone    %.3f us/call\n", median(times[2]));
  std::printf("  allocate + free output  %.3f us/call\n", median(times[3]));
  std::printf("driver alloc+launch+free  %.3f us/call\n", median(times[4]));
  cuMemFree(out);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "overhead";
  try {
    if (mode == "overhead") return overhead();
    if (mode == "first-call") return first_call(argc > 2 ? std::atoi(argv[2]) : 0);
    if (mode == "second-kernel") return second_kernel();
    if (mode == "raw-second-kernel") return raw_second_kernel();
    if (mode == "new-kernels") return new_kernels(argc > 2 ? std::atoi(argv[2]) : 21);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  std::fprintf(stderr,
               "usage: kreg_custom_bench overhead | first-call GAP_MS | second-kernel | "
               "raw-second-kernel | new-kernels N\n");
  return 2;
}
