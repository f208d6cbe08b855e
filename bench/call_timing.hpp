#pragma once
// What the array-level benchmarks share: timing a call eagerly and replayed from a CUDA graph
// with device events, and random bfloat16 inputs made on the GPU.

#include <kreg/kreg.hpp>

#include <cuda.h>

#include "bench_support.hpp"

#include <algorithm>
#include <functional>
#include <utility>
#include <vector>

namespace kreg::bench {

inline constexpr int kRuns = 20;

// Median over 5 repetitions of `launch` (which issues kRuns calls) on `stream`, per call, ms.
inline double median_ms(CUstream stream, const std::function<void()>& launch) {
  CUevent start = nullptr;
  CUevent stop = nullptr;
  require(cuEventCreate(&start, CU_EVENT_DEFAULT), "cuEventCreate");
  require(cuEventCreate(&stop, CU_EVENT_DEFAULT), "cuEventCreate");
  std::vector<double> times;
  for (int rep = 0; rep < 5; ++rep) {
    require(cuEventRecord(start, stream), "cuEventRecord");
    launch();
    require(cuEventRecord(stop, stream), "cuEventRecord");
    require(cuEventSynchronize(stop), "cuEventSynchronize");
    float ms = 0;
    require(cuEventElapsedTime(&ms, start, stop), "cuEventElapsedTime");
    times.push_back(ms / kRuns);
  }
  cuEventDestroy(start);
  cuEventDestroy(stop);
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

// Eager and graph-replayed times of `call` on the current stream (kreg's), in ms.
inline std::pair<double, double> time_call(const kreg::Stream& kstream,
                                           const std::function<void()>& call) {
  auto stream = static_cast<CUstream>(kstream.native().native);
  call();  // compile or load, first allocations
  kstream.synchronize();
  const double eager = median_ms(stream, [&] {
    for (int i = 0; i < kRuns; ++i) call();
  });
  kstream.synchronize();
  require(cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL), "cuStreamBeginCapture");
  for (int i = 0; i < kRuns; ++i) call();
  CUgraph graph = nullptr;
  require(cuStreamEndCapture(stream, &graph), "cuStreamEndCapture");
  CUgraphExec exec = nullptr;
  require(cuGraphInstantiate(&exec, graph, 0), "cuGraphInstantiate");
  require(cuGraphLaunch(exec, stream), "cuGraphLaunch");  // warm
  require(cuStreamSynchronize(stream), "cuStreamSynchronize");
  const double replayed =
      median_ms(stream, [&] { require(cuGraphLaunch(exec, stream), "cuGraphLaunch"); });
  cuGraphExecDestroy(exec);
  cuGraphDestroy(graph);
  return {eager, replayed};
}

// A device-to-device copy of 1 GiB on `kstream`: the roofline the memory-bound benches compare
// with. GB/s counts the bytes read and written.
struct CopyRoofline {
  double us = 0;
  double gbps = 0;
};

inline CopyRoofline copy_roofline(const kreg::Stream& kstream) {
  constexpr std::size_t bytes = std::size_t{1} << 30;
  CUdeviceptr a = 0;
  CUdeviceptr b = 0;
  require(cuMemAlloc(&a, bytes), "cuMemAlloc");
  require(cuMemAlloc(&b, bytes), "cuMemAlloc");
  auto stream = static_cast<CUstream>(kstream.native().native);
  require(cuMemcpyDtoDAsync(b, a, bytes, stream), "copy");
  require(cuStreamSynchronize(stream), "cuStreamSynchronize");
  const double ms = median_ms(stream, [&] {
    for (int i = 0; i < kRuns; ++i) require(cuMemcpyDtoDAsync(b, a, bytes, stream), "copy");
  });
  cuMemFree(a);
  cuMemFree(b);
  return {ms * 1e3, 2.0 * bytes / (ms * 1e-3) / 1e9};
}

// Uniform values in [-1, 1) from a hash of each index.
inline Array random_array(kreg::Shape shape, int salt) {
  static const kreg::CustomKernel fill("bench_uniform", {}, {"out"}, R"(
    uint i = thread_position_in_grid.x;
    uint h = (i ^ (uint)salt * 0x9e3779b9u) * 2654435761u;
    h ^= h >> 16;
    h *= 2246822519u;
    h ^= h >> 13;
    out[i] = bfloat16_t((float)(h >> 8) * (2.0f / 16777216.0f) - 1.0f);
  )");
  std::int64_t n = 1;
  for (std::int64_t d : shape) n *= d;
  kreg::ApplyOptions options;
  options.template_args = {{"salt", salt}};
  auto out = fill.apply({}, {{std::move(shape), Dtype::BFloat16}},
                        kreg::Dim3{static_cast<unsigned>(n)}, kreg::Dim3{256}, options);
  out[0].eval();
  return out[0];
}

}  // namespace kreg::bench
