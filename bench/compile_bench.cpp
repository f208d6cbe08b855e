// Compile-time benchmarks (no GPU needed): raw NVRTC against kreg on the same trivial
// source, and parallel prewarm against the sum of single compiles.
#include <kreg/kreg.hpp>

#include <benchmark/benchmark.h>
#include <nvrtc.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

const char* kTrivial =
    "extern \"C\" __global__ void add(const float* a, const float* b, float* c, int n) {"
    " int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) c[i] = a[i] + b[i]; }\n";

std::string arch() {
  const char* env = std::getenv("KREG_BENCH_ARCH");
  return env != nullptr ? env : "sm_90";
}

// Every compile is a real one: no disk cache, no precompiled set, no background warm-up.
kreg::RegistryOptions cold_options() {
  kreg::RegistryOptions options;
  options.arch = arch();
  options.warm_compiler = false;
  options.disk_cache = false;
  options.precompiled = false;
  return options;
}

void raw_compile(const std::string& source, const std::vector<std::string>& options) {
  nvrtcProgram program = nullptr;
  if (nvrtcCreateProgram(&program, source.c_str(), "add.cu", 0, nullptr, nullptr) !=
      NVRTC_SUCCESS) {
    throw std::runtime_error("nvrtcCreateProgram failed");
  }
  std::vector<const char*> pointers;
  for (const auto& o : options) pointers.push_back(o.c_str());
  if (nvrtcCompileProgram(program, static_cast<int>(pointers.size()), pointers.data()) !=
      NVRTC_SUCCESS) {
    throw std::runtime_error("nvrtcCompileProgram failed");
  }
  std::size_t size = 0;
  nvrtcGetCUBINSize(program, &size);
  std::vector<char> cubin(size);
  nvrtcGetCUBIN(program, cubin.data());
  benchmark::DoNotOptimize(cubin.data());
  nvrtcDestroyProgram(&program);
}

void BM_RawNvrtc(benchmark::State& state) {
  std::vector<std::string> options = {"-arch=" + arch()};
  if (state.range(0) != 0) options.emplace_back("-minimal");
  raw_compile(kTrivial, options);  // NVRTC's one-time start-up stays out of the figures
  for (auto _ : state) raw_compile(kTrivial, options);
  state.SetLabel(state.range(0) != 0 ? "-minimal" : "default options");
}
BENCHMARK(BM_RawNvrtc)
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(20)
    ->Repetitions(5)
    ->ReportAggregatesOnly(true);

// A cold compile through kreg: each iteration replaces the source, which drops its cache.
void BM_KregColdCompile(benchmark::State& state) {
  kreg::Registry reg(cold_options());
  reg.register_source("add", kTrivial);
  reg.compile("add");
  int version = 0;
  for (auto _ : state) {
    state.PauseTiming();
    // Equal-length edits keep the work identical from one iteration to the next.
    std::string text = std::string(kTrivial) + "// v" + std::to_string(100000 + version++) + "\n";
    reg.register_source("add", text);
    state.ResumeTiming();
    benchmark::DoNotOptimize(reg.compile("add").size());
  }
}
BENCHMARK(BM_KregColdCompile)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(20)
    ->Repetitions(5)
    ->ReportAggregatesOnly(true);

// A custom kernel's generated source, compiled cold: the preamble parts that the body pulls
// in are what differs between the cases.
void BM_CustomKernelCompile(benchmark::State& state) {
  struct Case {
    const char* label;
    const char* body;
    kreg::Dtype dtype;
  };
  static const Case kCases[] = {
      {"trivial", "uint i = thread_position_in_grid.x; out[i] = 2 * a[i];", kreg::Dtype::Float32},
      {"metal::exp", "uint i = thread_position_in_grid.x; out[i] = metal::exp(a[i]);",
       kreg::Dtype::Float32},
      {"metal::exp on half", "uint i = thread_position_in_grid.x; out[i] = metal::exp(a[i]);",
       kreg::Dtype::Float16},
      {"clamp, mix, fast::exp",
       "uint i = thread_position_in_grid.x;\n"
       "out[i] = clamp(mix(a[i], 1.0f, 0.25f), 0.0f, 1.0f) + fast::exp(a[i]);",
       kreg::Dtype::Float32},
      {"elem_to_loc",
       "uint i = thread_position_in_grid.x; out[i] = a[elem_to_loc(i, a_shape, a_strides, "
       "a_ndim)];",
       kreg::Dtype::Float32},
  };
  const Case& c = kCases[state.range(0)];
  const std::int64_t n = 64;
  kreg::Array input =
      c.dtype == kreg::Dtype::Float16
          ? kreg::Array::from_data(std::vector<kreg::half>(n, kreg::half(1.0f)), {n})
          : kreg::Array::from_data(std::vector<float>(n, 1.0f), {n});
  kreg::CustomKernelOptions kernel_options;
  kernel_options.ensure_row_contiguous = false;
  const kreg::CustomKernel kernel("bench", {"a"}, {"out"}, c.body, kernel_options);
  const std::string source =
      kernel.generated_source({input}, {kreg::OutputSpec{{n}, c.dtype}}, kreg::ApplyOptions{});
  kreg::Registry reg(cold_options());
  kreg::SourceOptions entries;
  entries.entries = {"bench=kreg_custom_bench"};
  int version = 0;
  // Equal-length edits keep the work identical from one iteration to the next.
  const auto next_version = [&] {
    reg.register_source("bench", source + "// v" + std::to_string(100000 + version++) + "\n",
                        entries);
  };
  try {
    next_version();
    reg.compile("bench");  // NVRTC's one-time start-up stays out of the figures
  } catch (const kreg::Error& e) {
    state.SkipWithError(e.what());
    return;
  }
  for (auto _ : state) {
    state.PauseTiming();
    next_version();
    state.ResumeTiming();
    benchmark::DoNotOptimize(reg.compile("bench").size());
  }
  state.SetLabel(c.label);
}
BENCHMARK(BM_CustomKernelCompile)
    ->DenseRange(0, 4)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(20)
    ->Repetitions(5)
    ->ReportAggregatesOnly(true);

// A moderately sized distinct source, so that prewarm has real work per item.
std::string synthetic_source(int i) {
  std::string s = "#include <kreg/kernel.cuh>\n";
  for (int f = 0; f < 4; ++f) {
    s += "extern \"C\" __global__ void synth_" + std::to_string(i) + "_" + std::to_string(f) +
         "(const float* __restrict__ x, float* __restrict__ y, unsigned n) {\n"
         "  for (unsigned j = blockIdx.x * blockDim.x + threadIdx.x; j < n; j += gridDim.x * "
         "blockDim.x) {\n"
         "    float v = x[j];\n"
         "#pragma unroll\n"
         "    for (int k = 0; k < " +
         std::to_string(4 + f) + "; ++k) v = v * 1.0001f + " + std::to_string(i) +
         ".0f;\n"
         "    y[j] = v;\n  }\n}\n";
  }
  return s;
}

std::vector<std::string> register_synthetic(kreg::Registry& reg, int sources) {
  std::vector<std::string> names;
  for (int i = 0; i < sources; ++i) {
    reg.register_source("synth_" + std::to_string(i), synthetic_source(i));
    names.push_back("synth_" + std::to_string(i) + "_0");
  }
  return names;
}

double elapsed_ms(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

// prewarm of N sources on the pool, against prewarming them one at a time in the same
// process. Both do the same work per kernel (compile, and load where there is a GPU); the
// driver and NVRTC start-up are paid before either clock starts. Arg 1 selects threads only
// (0) or worker processes (1); worker start-up is inside the timed region.
void BM_PrewarmSpeedup(benchmark::State& state) {
  const int sources = static_cast<int>(state.range(0));
  const bool processes = state.range(1) != 0;
  const unsigned workers = std::max(1U, std::thread::hardware_concurrency());
  double serial_ms = 0;
  double parallel_ms = 0;
  std::uint64_t in_workers = 0;
  for (auto _ : state) {
    kreg::RegistryOptions options = cold_options();
    options.compile_processes = 0;
    {
      kreg::Registry reg(options);
      auto names = register_synthetic(reg, sources);
      reg.prewarm({"elementwise_add_f32"});  // driver and NVRTC start-up
      const auto start = std::chrono::steady_clock::now();
      for (const auto& name : names) reg.prewarm({name});
      serial_ms = elapsed_ms(start);
    }
    options.compile_processes = processes ? -1 : 0;
    {
      kreg::Registry reg(options);
      auto names = register_synthetic(reg, sources);
      reg.prewarm({"elementwise_add_f32"});
      const auto start = std::chrono::steady_clock::now();
      const std::size_t ready = reg.prewarm(names);
      parallel_ms = elapsed_ms(start);
      in_workers = reg.stats().worker_compiles;
      if (ready != names.size()) state.SkipWithError("prewarm missed kernels");
    }
    state.SetIterationTime(parallel_ms / 1000.0);
  }
  state.SetLabel(processes ? "worker processes" : "threads only");
  state.counters["serial_ms"] = serial_ms;
  state.counters["prewarm_ms"] = parallel_ms;
  state.counters["workers"] = workers;
  state.counters["in_workers"] = static_cast<double>(in_workers);
  state.counters["speedup"] = serial_ms / parallel_ms;
  state.counters["speedup_per_worker"] = serial_ms / parallel_ms / workers;
}
BENCHMARK(BM_PrewarmSpeedup)
    ->Args({64, 0})
    ->Args({64, 1})
    ->Args({256, 0})
    ->Args({256, 1})
    ->Args({1024, 1})
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1)
    ->Repetitions(3);

// NVRTC's own scaling: T threads compiling distinct programs, no kreg involved.
void BM_RawNvrtcParallel(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  constexpr int kPerThread = 8;
  const std::vector<std::string> options = {"-arch=" + arch(), "-minimal"};
  raw_compile(kTrivial, options);
  for (auto _ : state) {
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
      pool.emplace_back([&, t] {
        for (int i = 0; i < kPerThread; ++i) {
          std::string source = synthetic_source(t * kPerThread + i);
          // The kreg header is not available to raw NVRTC; drop the include.
          source.erase(0, source.find('\n') + 1);
          raw_compile(source, options);
        }
      });
    }
    for (auto& thread : pool) thread.join();
  }
  state.counters["compiles_per_s"] = benchmark::Counter(
      static_cast<double>(threads * kPerThread), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_RawNvrtcParallel)
    ->Arg(1)
    ->Arg(4)
    ->Arg(16)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(2)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
