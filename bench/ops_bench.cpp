// Effective bandwidth of the ops at sizes well past L2 (bytes read plus written, over the
// median time), against a device-to-device copy measured in the same run.
//
//   kreg_ops_bench            prints one line per op: name, time, GB/s, fraction of copy
#include <kreg/kreg.hpp>

#include <cuda.h>

#include "bench_support.hpp"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using kreg::bench::require;
using kreg::bench::start_driver;

// Median over 5 repetitions of the mean time of 20 back-to-back runs, in milliseconds.
double time_ms(const std::function<void()>& run) {
  CUevent start = nullptr;
  CUevent stop = nullptr;
  require(cuEventCreate(&start, CU_EVENT_DEFAULT), "cuEventCreate");
  require(cuEventCreate(&stop, CU_EVENT_DEFAULT), "cuEventCreate");
  run();  // warm: compile or load, first allocations
  require(cuCtxSynchronize(), "cuCtxSynchronize");
  std::vector<double> times;
  for (int rep = 0; rep < 5; ++rep) {
    require(cuEventRecord(start, nullptr), "cuEventRecord");
    for (int i = 0; i < 20; ++i) run();
    require(cuEventRecord(stop, nullptr), "cuEventRecord");
    require(cuEventSynchronize(stop), "cuEventSynchronize");
    float ms = 0;
    require(cuEventElapsedTime(&ms, start, stop), "cuEventElapsedTime");
    times.push_back(ms / 20.0);
  }
  cuEventDestroy(start);
  cuEventDestroy(stop);
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

double copy_gbps = 0;

void report(const char* name, double bytes, double ms) {
  const double gbps = bytes / (ms * 1e-3) / 1e9;
  if (copy_gbps == 0) copy_gbps = gbps;
  std::printf("%-34s %9.3f ms %8.0f GB/s %6.1f%% of copy\n", name, ms, gbps,
              100.0 * gbps / copy_gbps);
}

// An array of uniform values in [-2, 2), from a hash of each index and `salt`. Timings then
// do not depend on what the memory held before (NaN, infinity and subnormal inputs take
// slow paths in some math functions). Sizes are multiples of 256.
kreg::Array random_array(kreg::Shape shape, kreg::Dtype dtype, int salt) {
  static const kreg::CustomKernel fill("bench_uniform", {}, {"out"}, R"(
    uint i = thread_position_in_grid.x;
    uint h = (i ^ (uint)salt * 0x9e3779b9u) * 2654435761u;
    h ^= h >> 16;
    h *= 2246822519u;
    h ^= h >> 13;
    out[i] = T((float)(h >> 8) * (4.0f / 16777216.0f) - 2.0f);
  )");
  std::int64_t n = 1;
  for (std::int64_t d : shape) n *= d;
  kreg::ApplyOptions options;
  options.template_args = {{"T", dtype}, {"salt", salt}};
  auto out = fill.apply({}, {{std::move(shape), dtype}}, kreg::Dim3{static_cast<unsigned>(n)},
                        kreg::Dim3{256}, options);
  out[0].eval();
  return out[0];
}

}  // namespace

int main() {
  try {
    start_driver();
    using kreg::Array;
    using kreg::Dtype;
    constexpr std::int64_t n = std::int64_t{256} << 20;  // elements
    constexpr std::int64_t rows = 65536;
    constexpr std::int64_t cols = 4096;

    {
      const std::size_t bytes = n * 4;
      CUdeviceptr a = 0;
      CUdeviceptr b = 0;
      require(cuMemAlloc(&a, bytes), "cuMemAlloc");
      require(cuMemAlloc(&b, bytes), "cuMemAlloc");
      report("copy (cuMemcpyDtoD, 1 GiB)", 2.0 * bytes,
             time_ms([&] { require(cuMemcpyDtoDAsync(b, a, bytes, nullptr), "copy"); }));
      cuMemFree(a);
      cuMemFree(b);
    }
    for (Dtype dtype : {Dtype::Float32, Dtype::BFloat16}) {
      const auto size = static_cast<double>(kreg::size_of(dtype));
      const std::string t = kreg::to_string(dtype);
      const Array a = random_array({n}, dtype, 1);
      const Array b = random_array({n}, dtype, 2);
      report(("add " + t).c_str(), 3.0 * size * n, time_ms([&] { kreg::ops::add(a, b).eval(); }));
      report(("scale " + t).c_str(), 2.0 * size * n,
             time_ms([&] { kreg::ops::scale(a, 1.5F).eval(); }));
      // The same with the input 1024 elements into its allocation: shows whether the input and
      // the output falling on the same low address bits costs bandwidth.
      const Array shifted = random_array({n + 1024}, dtype, 3).slice(0, 1024, n + 1024);
      report(("scale " + t + " (input shifted)").c_str(), 2.0 * size * n,
             time_ms([&] { kreg::ops::scale(shifted, 1.5F).eval(); }));
      // The same traffic through the binary kernel: times a row of 8 that stays in L1.
      const Array eight =
          kreg::ops::cast(Array::from_data(std::vector<float>(8, 1.5F), {8}), dtype);
      const Array rows_of_8 = random_array({n / 8, 8}, dtype, 4);
      eight.eval();
      report(("mul by an 8-wide row " + t).c_str(), 2.0 * size * n,
             time_ms([&] { kreg::ops::mul(rows_of_8, eight).eval(); }));
      report(("scale " + t + " (of the 8-wide rows)").c_str(), 2.0 * size * n,
             time_ms([&] { kreg::ops::scale(rows_of_8, 1.5F).eval(); }));
    }
    {
      const Array a = random_array({n}, Dtype::Float32, 5);
      report("cast float32 -> bfloat16", 6.0 * n,
             time_ms([&] { kreg::ops::cast(a, Dtype::BFloat16).eval(); }));
      const Array h = random_array({n}, Dtype::BFloat16, 6);
      report("cast bfloat16 -> float32", 6.0 * n,
             time_ms([&] { kreg::ops::cast(h, Dtype::Float32).eval(); }));
    }
    for (Dtype dtype : {Dtype::Float32, Dtype::BFloat16}) {
      const auto size = static_cast<double>(kreg::size_of(dtype));
      const std::string t = kreg::to_string(dtype);
      const Array x = random_array({rows, cols}, dtype, 7);
      const Array r = random_array({rows, cols}, dtype, 8);
      const Array w = Array::from_data(std::vector<float>(cols, 1.0F), {cols});
      const Array weight = dtype == Dtype::Float32 ? w : kreg::ops::cast(w, dtype);
      kreg::eval({x, r, weight});
      report(("rms_norm " + t + " 64Kx4096").c_str(), 2.0 * size * rows * cols,
             time_ms([&] { kreg::ops::rms_norm(x, weight, 1e-6F).eval(); }));
      report(("add_rms_norm " + t + " 64Kx4096").c_str(), 4.0 * size * rows * cols,
             time_ms([&] { kreg::eval({kreg::ops::add_rms_norm(x, r, weight, 1e-6F).first}); }));
    }
    for (Dtype dtype : {Dtype::Float32, Dtype::BFloat16}) {
      const auto size = static_cast<double>(kreg::size_of(dtype));
      const std::string t = kreg::to_string(dtype);
      const Array x = random_array({rows, cols}, dtype, 9);
      report(("softmax " + t + " 64Kx4096").c_str(), 2.0 * size * rows * cols,
             time_ms([&] { kreg::ops::softmax(x, 0.125F).eval(); }));
      report(("row_sum " + t + " 64Kx4096").c_str(), size * rows * cols,
             time_ms([&] { kreg::ops::row_sum(x).eval(); }));
    }
    {
      const Array a = random_array({n}, Dtype::BFloat16, 10);
      const Array b = random_array({n}, Dtype::BFloat16, 11);
      report("swiglu bfloat16", 6.0 * n, time_ms([&] { kreg::ops::swiglu(a, b).eval(); }));
      report("gelu bfloat16 (erf)", 4.0 * n, time_ms([&] { kreg::ops::gelu(a).eval(); }));
      constexpr std::int64_t vocab = 131072;
      const Array table = random_array({vocab, cols}, Dtype::BFloat16, 12);
      std::vector<std::int64_t> ids(rows);
      for (std::int64_t i = 0; i < rows; ++i) ids[i] = (i * 7919) % vocab;
      const Array id_array = Array::from_data(ids, {rows});
      kreg::eval({table, id_array});
      report("embedding bfloat16 64K of 128Kx4096", 2.0 * 2.0 * rows * cols,
             time_ms([&] { kreg::ops::embedding(table, id_array).eval(); }));
      const Array w = random_array({16384, 8192}, Dtype::BFloat16, 13);
      const Array v = Array::from_data(std::vector<float>(8192, 1.0F), {8192});
      kreg::eval({w, v});
      report("gemv bfloat16 16384x8192", 2.0 * 16384 * 8192,
             time_ms([&] { kreg::ops::gemv(w, v).eval(); }));
    }
    {
      const Array x = random_array({rows, cols}, Dtype::BFloat16, 14);
      const Array w = kreg::ops::cast(Array::from_data(std::vector<float>(cols, 1.0F), {cols}),
                                      Dtype::BFloat16);
      kreg::eval({x, w});
      report("layer_norm bfloat16 64Kx4096", 4.0 * rows * cols,
             time_ms([&] { kreg::ops::layer_norm(x, w, w, 1e-5F).eval(); }));
      report("transpose bfloat16 64Kx4096", 4.0 * rows * cols,
             time_ms([&] { kreg::ops::transpose(x).eval(); }));
      const Array q = random_array({16384, 32, 128}, Dtype::BFloat16, 15);
      report("rope bfloat16 16K tokens x 32 x 128", 4.0 * 16384 * 32 * 128,
             time_ms([&] { kreg::ops::rope(q, 0, 10000.0F, true).eval(); }));
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
