// One registry on every GPU of the machine: what the first use of a kernel costs on the GPU
// that compiled it and on the others, which only load it, and that nothing compiles twice.
//
//   kreg_multi_gpu_bench        (point KREG_CACHE_DIR at an empty folder)
#include <kreg/kreg.hpp>

#include <cuda.h>

#include "bench_support.hpp"

#include <chrono>
#include <cstddef>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

using kreg::bench::require;

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// First get + launch + synchronize of `name` on `device`, then the mean of 1000 launches.
void time_on(kreg::Registry& registry, const char* name, int device, double& first_ms,
             double& launch_us) {
  kreg::DeviceScope scope(kreg::Device::gpu(device));
  CUdevice handle = 0;
  CUcontext context = nullptr;
  require(cuDeviceGet(&handle, device), "cuDeviceGet");
  require(cuDevicePrimaryCtxRetain(&context, handle), "cuDevicePrimaryCtxRetain");
  require(cuCtxSetCurrent(context), "cuCtxSetCurrent");
  constexpr unsigned n = 1 << 20;
  CUdeviceptr a = 0;
  CUdeviceptr b = 0;
  CUdeviceptr c = 0;
  constexpr std::size_t bytes = std::size_t{n} * sizeof(float);
  require(cuMemAlloc(&a, bytes), "cuMemAlloc");
  require(cuMemAlloc(&b, bytes), "cuMemAlloc");
  require(cuMemAlloc(&c, bytes), "cuMemAlloc");
  // Device addresses as the kernel's pointer parameters.
  const auto* pa = reinterpret_cast<const float*>(a);  // NOLINT(performance-no-int-to-ptr)
  const auto* pb = reinterpret_cast<const float*>(b);  // NOLINT(performance-no-int-to-ptr)
  auto* pc = reinterpret_cast<float*>(c);              // NOLINT(performance-no-int-to-ptr)
  const auto start = Clock::now();
  registry.get(name).launch(kreg::Dim3{n / 256}, kreg::Dim3{256}, 0, nullptr, pa, pb, pc, n);
  require(cuCtxSynchronize(), "cuCtxSynchronize");
  first_ms = ms_since(start);
  const auto loop = Clock::now();
  for (int i = 0; i < 1000; ++i) {
    registry.get(name).launch(kreg::Dim3{1}, kreg::Dim3{32}, 0, nullptr, pa, pb, pc, 32U);
  }
  launch_us = ms_since(loop);  // 1000 launches: milliseconds are microseconds per launch
  require(cuCtxSynchronize(), "cuCtxSynchronize");
  cuMemFree(a);
  cuMemFree(b);
  cuMemFree(c);
}

double custom_first_call(int device, int factor) {
  kreg::DeviceScope scope(kreg::Device::gpu(device));
  kreg::CustomKernel kernel(
      "multi_bench", {"a"}, {"out"},
      "uint i = thread_position_in_grid.x; out[i] = " + std::to_string(factor) + " * a[i];");
  const kreg::Array a = kreg::Array::from_data<float>({1, 2, 3, 4}, {4});
  a.eval();
  const auto start = Clock::now();
  auto out = kernel.apply({a}, {{{4}, kreg::Dtype::Float32}}, {4}, {4});
  const auto values = out[0].to_vector<float>();
  const double ms = ms_since(start);
  if (values[3] != 4.0F * static_cast<float>(factor)) throw std::runtime_error("wrong result");
  return ms;
}

}  // namespace

int main() {
  try {
    require(cuInit(0), "cuInit");
    int count = 0;
    require(cuDeviceGetCount(&count), "cuDeviceGetCount");
    std::printf("GPUs: %d\n", count);
    kreg::RegistryOptions options;
    options.precompiled = false;  // so that the first use on GPU 0 compiles
    kreg::Registry registry(options);

    // The first use on each GPU in turn: GPU 0 compiles, the others only load.
    for (int device = 0; device < count; ++device) {
      double first = 0;
      double launch = 0;
      std::thread([&] { time_on(registry, "elementwise_add_f32", device, first, launch); }).join();
      std::printf("GPU %d: first get + launch + sync %.3f ms, then %.3f us per launch\n", device,
                  first, launch);
    }
    const kreg::Stats stats = registry.stats();
    std::printf("registry: %llu compiles, %llu loads for %d GPUs\n",
                static_cast<unsigned long long>(stats.compiles),
                static_cast<unsigned long long>(stats.loads), count);

    // Custom kernels: a new kernel on GPU 0 compiles; the same kernel on the others loads.
    for (int device = 0; device < count; ++device) {
      std::printf("custom kernel first call on GPU %d: %.3f ms\n", device,
                  custom_first_call(device, 7));
    }
    const kreg::Stats custom = kreg::device_registry(0).stats();
    std::printf("custom registry: %llu compiles, %llu disk hits, %llu loads\n",
                static_cast<unsigned long long>(custom.compiles),
                static_cast<unsigned long long>(custom.disk_hits),
                static_cast<unsigned long long>(custom.loads));
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
