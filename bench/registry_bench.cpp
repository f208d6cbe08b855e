// Hot-path benchmarks on a GPU: registry lookups against a hand-kept hash map, and launch
// overhead against raw cuLaunchKernel, in the same run.
#include <kreg/kreg.hpp>

#include <benchmark/benchmark.h>
#include <cuda.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

// Counts heap allocations made while `counting` is set on this thread, to show that a
// hit allocates nothing.
namespace {
thread_local bool counting = false;
std::atomic<std::uint64_t> allocations{0};
}  // namespace

void* operator new(std::size_t size) {
  if (counting) allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}

namespace {

kreg::Registry& registry() {
  static kreg::Registry reg(kreg::RegistryOptions{.disk_cache = false, .warm_compiler = false});
  return reg;
}

const char* kEmpty =
    "extern \"C\" __global__ void empty_kernel(const float* a, const float* b, float* c, unsigned "
    "n) {}\n";

const kreg::Constants kTwo{.bools = {{200, true}}, .ints = {{300, 8}}};

// The raw driver launch needs a current context, as any driver-API user would have.
void make_context_current() {
  CUdevice device = 0;
  CUcontext context = nullptr;
  if (cuInit(0) != CUDA_SUCCESS || cuDeviceGet(&device, 0) != CUDA_SUCCESS ||
      cuDevicePrimaryCtxRetain(&context, device) != CUDA_SUCCESS ||
      cuCtxSetCurrent(context) != CUDA_SUCCESS) {
    std::fprintf(stderr, "no CUDA context\n");
    std::exit(1);
  }
}

void setup(const benchmark::State&) {
  make_context_current();
  kreg::Registry& reg = registry();
  reg.register_source("empty", kEmpty);
  reg.get("elementwise_add_f32");
  reg.get("powi_f32", kTwo);
  reg.get("empty_kernel");
}

void BM_GetByName(benchmark::State& state) {
  kreg::Registry& reg = registry();
  const std::uint64_t before = allocations.load();
  counting = true;
  for (auto _ : state) benchmark::DoNotOptimize(&reg.get("elementwise_add_f32"));
  counting = false;
  state.counters["allocs_per_get"] =
      static_cast<double>(allocations.load() - before) / static_cast<double>(state.iterations());
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_GetByName)->Setup(setup)->Repetitions(5)->ReportAggregatesOnly(true);
BENCHMARK(BM_GetByName)->Setup(setup)->ThreadRange(1, 16)->UseRealTime();

void BM_GetWithTwoConstants(benchmark::State& state) {
  kreg::Registry& reg = registry();
  const std::uint64_t before = allocations.load();
  counting = true;
  for (auto _ : state) benchmark::DoNotOptimize(&reg.get("powi_f32", kTwo));
  counting = false;
  state.counters["allocs_per_get"] =
      static_cast<double>(allocations.load() - before) / static_cast<double>(state.iterations());
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_GetWithTwoConstants)->Setup(setup)->Repetitions(5)->ReportAggregatesOnly(true);
BENCHMARK(BM_GetWithTwoConstants)->Setup(setup)->ThreadRange(1, 16)->UseRealTime();

// The baselines: what a program that keeps its own kernels would look up by hand, a
// standard hash map from the name (or the name and two constant values) to the kernel.
struct NameHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const noexcept {
    return std::hash<std::string_view>{}(s);
  }
};

void BM_RawMapByName(benchmark::State& state) {
  std::unordered_map<std::string, const kreg::Kernel*, NameHash, std::equal_to<>> map;
  map.emplace("elementwise_add_f32", &registry().get("elementwise_add_f32"));
  map.emplace("empty_kernel", &registry().get("empty_kernel"));
  const std::string_view name = "elementwise_add_f32";
  for (auto _ : state) benchmark::DoNotOptimize(map.find(name)->second);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_RawMapByName)->Setup(setup)->Repetitions(5)->ReportAggregatesOnly(true);

struct TwoConstants {
  std::string_view name;
  bool b200;
  std::int32_t i300;
  bool operator==(const TwoConstants&) const = default;
};
struct TwoConstantsHash {
  std::size_t operator()(const TwoConstants& k) const noexcept {
    std::size_t h = std::hash<std::string_view>{}(k.name);
    h ^= std::hash<std::int64_t>{}((std::int64_t{k.i300} << 1) | (k.b200 ? 1 : 0)) +
         0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    return h;
  }
};

void BM_RawMapWithTwoConstants(benchmark::State& state) {
  std::unordered_map<TwoConstants, const kreg::Kernel*, TwoConstantsHash> map;
  map.emplace(TwoConstants{"powi_f32", true, 8}, &registry().get("powi_f32", kTwo));
  const std::string_view name = "powi_f32";
  for (auto _ : state) {
    benchmark::DoNotOptimize(
        map.find(TwoConstants{name, kTwo.bools[0].second, kTwo.ints[0].second})->second);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_RawMapWithTwoConstants)->Setup(setup)->Repetitions(5)->ReportAggregatesOnly(true);

struct LaunchArgs {
  CUdeviceptr a = 0, b = 0, c = 0;
  unsigned n = 32;
  LaunchArgs() {
    cuMemAlloc(&a, 128);
    cuMemAlloc(&b, 128);
    cuMemAlloc(&c, 128);
  }
  ~LaunchArgs() {
    cuMemFree(a);
    cuMemFree(b);
    cuMemFree(c);
  }
};

// Launches are timed in batches of 256 with a synchronize outside the timed region, so
// the queue never fills and the figure is the host's cost per launch.
constexpr int kBatch = 256;

template <class Launch>
void time_launches(benchmark::State& state, Launch&& launch) {
  for (auto _ : state) {
    bool ok = true;
    for (int i = 0; i < kBatch; ++i) ok = launch() && ok;
    state.PauseTiming();
    ok = cuCtxSynchronize() == CUDA_SUCCESS && ok;
    state.ResumeTiming();
    if (!ok) {
      state.SkipWithError("a launch or the synchronize failed");
      break;
    }
  }
  state.SetItemsProcessed(state.iterations() * kBatch);
}

void BM_LaunchRawDriver(benchmark::State& state) {
  const kreg::Kernel& k = registry().get("empty_kernel");
  LaunchArgs args;
  void* params[] = {&args.a, &args.b, &args.c, &args.n};
  auto function = reinterpret_cast<CUfunction>(k.native_handle());
  time_launches(state, [&] {
    return cuLaunchKernel(function, 1, 1, 1, 32, 1, 1, 0, nullptr, params, nullptr) == CUDA_SUCCESS;
  });
}

void BM_LaunchKregTyped(benchmark::State& state) {
  const kreg::Kernel& k = registry().get("empty_kernel");
  LaunchArgs args;
  auto a = reinterpret_cast<const float*>(args.a);
  auto b = reinterpret_cast<const float*>(args.b);
  auto c = reinterpret_cast<float*>(args.c);
  time_launches(state, [&] {
    k.launch(kreg::Dim3{1}, kreg::Dim3{32}, 0, nullptr, a, b, c, args.n);
    return true;  // kreg throws on failure
  });
}

void BM_LaunchKregRaw(benchmark::State& state) {
  const kreg::Kernel& k = registry().get("empty_kernel");
  LaunchArgs args;
  void* params[] = {&args.a, &args.b, &args.c, &args.n};
  time_launches(state, [&] {
    k.launch_raw(kreg::Dim3{1}, kreg::Dim3{32}, 0, nullptr, params);
    return true;
  });
}

// The three forms in rotation within one loop, so that drift in the machine's state affects
// all alike; per-launch medians over all batches are reported as counters (microseconds).
void BM_LaunchInterleaved(benchmark::State& state) {
  const kreg::Kernel& k = registry().get("empty_kernel");
  LaunchArgs args;
  void* params[] = {&args.a, &args.b, &args.c, &args.n};
  auto function = reinterpret_cast<CUfunction>(k.native_handle());
  auto a = reinterpret_cast<const float*>(args.a);
  auto b = reinterpret_cast<const float*>(args.b);
  auto c = reinterpret_cast<float*>(args.c);
  std::vector<double> times[3];
  std::size_t round = 0;
  for (auto _ : state) {
    for (std::size_t j = 0; j < 3; ++j) {
      const std::size_t form = (round + j) % 3;
      if (cuCtxSynchronize() != CUDA_SUCCESS) {
        state.SkipWithError("cuCtxSynchronize failed");
        return;
      }
      const auto start = std::chrono::steady_clock::now();
      for (int i = 0; i < kBatch; ++i) {
        if (form == 0) {
          cuLaunchKernel(function, 1, 1, 1, 32, 1, 1, 0, nullptr, params, nullptr);
        } else if (form == 1) {
          k.launch(kreg::Dim3{1}, kreg::Dim3{32}, 0, nullptr, a, b, c, args.n);
        } else {
          k.launch_raw(kreg::Dim3{1}, kreg::Dim3{32}, 0, nullptr, params);
        }
      }
      times[form].push_back(
          std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
              .count() /
          kBatch);
    }
    ++round;
  }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  const double raw = median(times[0]);
  state.counters["raw_us"] = raw;
  state.counters["typed_us"] = median(times[1]);
  state.counters["launch_raw_us"] = median(times[2]);
  state.counters["typed_over_raw_us"] = median(times[1]) - raw;
  state.counters["launch_raw_over_raw_us"] = median(times[2]) - raw;
}
BENCHMARK(BM_LaunchInterleaved)->Setup(setup)->Iterations(3000)->Repetitions(3);

BENCHMARK(BM_LaunchRawDriver)->Setup(setup)->Repetitions(7)->ReportAggregatesOnly(true);
BENCHMARK(BM_LaunchKregTyped)->Setup(setup)->Repetitions(7)->ReportAggregatesOnly(true);
BENCHMARK(BM_LaunchKregRaw)->Setup(setup)->Repetitions(7)->ReportAggregatesOnly(true);

}  // namespace

BENCHMARK_MAIN();
