// Custom kernels on the GPU, on random data against float64 references. Outputs that the
// body writes in full are poisoned (init_value NaN or a sentinel) so an unwritten element
// shows.
#include "gpu/device_buffer.hpp"
#include "test_support.hpp"

#include <cmath>
#include <limits>
#include <numeric>
#include <random>

namespace kreg {
namespace {

using test::close_to;
using test::contains;
using test::expect_error;
using test::random_vector;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

class CustomKernelGpu : public ::testing::Test {
 protected:
  void SetUp() override { KREG_REQUIRE_GPU(); }
  static ApplyOptions poisoned() {
    ApplyOptions options;
    options.init_value = kNaN;
    return options;
  }
  std::mt19937 rng_{42};
};

TEST_F(CustomKernelGpu, SeedExample) {
  CustomKernel kernel("double", {"a"}, {"out"},
                      "uint i = thread_position_in_grid.x; out[i] = 2 * a[i];");
  const Array a = Array::from_data<float>({1, 2, 3, 4}, {4});
  std::vector<Array> out =
      kernel.apply({a}, {OutputSpec{{4}, Dtype::Float32}}, Dim3{4, 1, 1}, Dim3{4, 1, 1});
  EXPECT_EQ(out[0].to_vector<float>(), (std::vector<float>{2, 4, 6, 8}));
}

TEST_F(CustomKernelGpu, RandomDataWithPartialLastBlock) {
  CustomKernel kernel("axpb", {"x"}, {"y"},
                      "uint i = thread_position_in_grid.x; y[i] = 3.0f * x[i] + 0.5f;");
  for (int n : {1, 7, 8, 1000, 100003}) {
    const auto x = random_vector<float>(n, rng_);
    auto out = kernel.apply({Array::from_data(x, {n})}, {OutputSpec{{n}, Dtype::Float32}},
                            Dim3{static_cast<unsigned>(n)}, Dim3{256}, poisoned());
    std::vector<double> want(n);
    for (int i = 0; i < n; ++i) want[i] = 3.0 * x[i] + 0.5;
    EXPECT_TRUE(close_to(out[0].to_vector<float>(), want, 1e-6)) << "n=" << n;
  }
}

// out[i, j] = a[i, j] read through a_shape and a_strides, for a transposed input.
TEST_F(CustomKernelGpu, StridedInputWithAndWithoutRowContiguous) {
  const char* body =
      "uint i = thread_position_in_grid.y, j = thread_position_in_grid.x;\n"
      "int64_t at = i * a_strides[0] + j * a_strides[1];\n"
      "out[i * a_shape[1] + j] = a[at] * 2.0f + float(a_ndim);";
  const int rows = 37;
  const int cols = 53;
  const std::size_t count = std::size_t{rows} * cols;
  const auto values = random_vector<float>(count, rng_);
  const Array base = Array::from_data(values, {cols, rows});
  const Array a = base.transpose();  // rows x cols, strides {1, rows}
  ASSERT_FALSE(a.is_row_contiguous());
  std::vector<double> want(count);
  for (int i = 0; i < rows; ++i) {
    for (int j = 0; j < cols; ++j) want[i * cols + j] = values[j * rows + i] * 2.0 + 2.0;
  }
  for (bool contiguous : {true, false}) {
    CustomKernelOptions options;
    options.ensure_row_contiguous = contiguous;
    CustomKernel kernel("strided", {"a"}, {"out"}, body, options);
    auto out = kernel.apply({a}, {OutputSpec{{rows, cols}, Dtype::Float32}}, Dim3{cols, rows},
                            Dim3{16, 16}, poisoned());
    EXPECT_TRUE(close_to(out[0].to_vector<float>(), want, 1e-6)) << "contiguous=" << contiguous;
  }
  // A sliced (offset, stepped) view too.
  const Array sliced = Array::from_data(values, {rows, cols}).slice(1, 3, cols, 5);
  const int kept = static_cast<int>(sliced.shape()[1]);
  std::vector<double> want_sliced(std::size_t{rows} * kept);
  for (int i = 0; i < rows; ++i) {
    for (int j = 0; j < kept; ++j)
      want_sliced[i * kept + j] = values[i * cols + 3 + 5 * j] * 2.0 + 2.0;
  }
  for (bool contiguous : {true, false}) {
    CustomKernelOptions options;
    options.ensure_row_contiguous = contiguous;
    CustomKernel kernel("strided", {"a"}, {"out"}, body, options);
    auto out = kernel.apply({sliced}, {OutputSpec{{rows, kept}, Dtype::Float32}},
                            Dim3{static_cast<unsigned>(kept), rows}, Dim3{8, 8}, poisoned());
    EXPECT_TRUE(close_to(out[0].to_vector<float>(), want_sliced, 1e-6))
        << "contiguous=" << contiguous;
  }
}

TEST_F(CustomKernelGpu, ZeroDimensionalScalarAndSmallInputs) {
  CustomKernel kernel("scale", {"x", "s", "w"}, {"out"},
                      "uint i = thread_position_in_grid.x; out[i] = x[i] * s + w[i % 3];");
  const int n = 5000;
  const auto x = random_vector<float>(n, rng_);
  const auto s = random_vector<float>(1, rng_);
  const auto w = random_vector<float>(3, rng_);
  auto out =
      kernel.apply({Array::from_data(x, {n}), Array::from_data(s, {}), Array::from_data(w, {3})},
                   {OutputSpec{{n}, Dtype::Float32}}, Dim3{n}, Dim3{128}, poisoned());
  std::vector<double> want(n);
  for (int i = 0; i < n; ++i) want[i] = double(x[i]) * s[0] + w[i % 3];
  EXPECT_TRUE(close_to(out[0].to_vector<float>(), want, 1e-6));

  // The scalar and the small input computed on the GPU by an earlier kernel.
  CustomKernel make("make", {"v"}, {"one", "three"},
                    "uint i = thread_position_in_grid.x; if (i == 0) one[0] = v[0] * 2.0f; "
                    "if (i < 3) three[i] = v[i] + 1.0f;");
  auto made = make.apply({Array::from_data(w, {3})},
                         {OutputSpec{{}, Dtype::Float32}, OutputSpec{{3}, Dtype::Float32}}, Dim3{3},
                         Dim3{3});
  auto out2 = kernel.apply({Array::from_data(x, {n}), made[0], made[1]},
                           {OutputSpec{{n}, Dtype::Float32}}, Dim3{n}, Dim3{128}, poisoned());
  for (int i = 0; i < n; ++i) want[i] = double(x[i]) * (2.0 * w[0]) + (w[i % 3] + 1.0);
  EXPECT_TRUE(close_to(out2[0].to_vector<float>(), want, 1e-5));
}

TEST_F(CustomKernelGpu, HistogramWithAtomicOutputsAndInitValue) {
  CustomKernelOptions options;
  options.atomic_outputs = true;
  CustomKernel kernel("histogram", {"values"}, {"counts"},
                      "uint i = thread_position_in_grid.x;\n"
                      "atomic_fetch_add_explicit(&counts[values[i]], 1, memory_order_relaxed);",
                      options);
  const int n = 100000;
  const int bins = 64;
  std::uniform_int_distribution<int> pick(0, bins - 1);
  std::vector<int> values(n);
  for (int& v : values) v = pick(rng_);
  std::vector<int> want(bins, 0);
  for (int v : values) ++want[v];
  ApplyOptions apply;
  apply.init_value = 0;
  auto out = kernel.apply({Array::from_data(values, {n})}, {OutputSpec{{bins}, Dtype::Int32}},
                          Dim3{n}, Dim3{256}, apply);
  EXPECT_EQ(out[0].to_vector<int>(), want);
}

TEST_F(CustomKernelGpu, InitValueOfEveryWidth) {
  CustomKernel kernel("untouched", {"a"}, {"o8", "o16", "o32", "o64"}, "(void)a;");
  ApplyOptions apply;
  apply.init_value = 3;
  auto out = kernel.apply({Array::from_data<float>({1}, {1})},
                          {OutputSpec{{5}, Dtype::UInt8}, OutputSpec{{5}, Dtype::Float16},
                           OutputSpec{{5}, Dtype::Float32}, OutputSpec{{5}, Dtype::Float64}},
                          Dim3{1}, Dim3{1}, apply);
  EXPECT_EQ(out[0].to_vector<std::uint8_t>(), std::vector<std::uint8_t>(5, 3));
  for (half h : out[1].to_vector<half>()) EXPECT_EQ(float(h), 3.0F);
  EXPECT_EQ(out[2].to_vector<float>(), std::vector<float>(5, 3.0F));
  EXPECT_EQ(out[3].to_vector<double>(), std::vector<double>(5, 3.0));
}

TEST_F(CustomKernelGpu, TemplateArgumentsOfEachKind) {
  CustomKernel kernel("templated", {"a"}, {"out"},
                      "uint i = thread_position_in_grid.x;\n"
                      "out[i] = Negate ? T(-float(a[i]) * Scale) : T(float(a[i]) * Scale);");
  const int n = 1000;
  const auto a = random_vector<float>(n, rng_);
  for (bool negate : {false, true}) {
    for (int scale : {-3, 7}) {
      ApplyOptions options = poisoned();
      options.template_args = {{"T", Dtype::Float32}, {"Scale", scale}, {"Negate", negate}};
      auto out = kernel.apply({Array::from_data(a, {n})}, {OutputSpec{{n}, Dtype::Float32}},
                              Dim3{n}, Dim3{128}, options);
      std::vector<double> want(n);
      for (int i = 0; i < n; ++i) want[i] = (negate ? -1.0 : 1.0) * a[i] * scale;
      EXPECT_TRUE(close_to(out[0].to_vector<float>(), want, 1e-6));
    }
  }
  ApplyOptions options;
  options.template_args = {{"T", Dtype::Float64}, {"Scale", 2}, {"Negate", false}};
  options.init_value = kNaN;
  auto out = kernel.apply({Array::from_data(a, {n})}, {OutputSpec{{n}, Dtype::Float64}}, Dim3{n},
                          Dim3{128}, options);
  std::vector<double> want(n);
  for (int i = 0; i < n; ++i) want[i] = 2.0 * a[i];
  EXPECT_TRUE(close_to(out[0].to_vector<double>(), want, 1e-12));
}

TEST_F(CustomKernelGpu, MetalStyleSimdSum) {
  CustomKernel kernel("warp_sums", {"a"}, {"sums"},
                      "float v = a[thread_position_in_grid.x];\n"
                      "float total = simd_sum(v);\n"
                      "uint warp = thread_position_in_grid.x / threads_per_simdgroup;\n"
                      "if (thread_index_in_simdgroup == 0) sums[warp] = total;");
  const int warps = 300;
  const int n = warps * 32;
  const auto a = random_vector<float>(n, rng_);
  auto out = kernel.apply({Array::from_data(a, {n})}, {OutputSpec{{warps}, Dtype::Float32}},
                          Dim3{n}, Dim3{256}, poisoned());
  std::vector<double> want(warps, 0.0);
  for (int i = 0; i < n; ++i) want[i / 32] += a[i];
  EXPECT_TRUE(close_to(out[0].to_vector<float>(), want, 1e-5));
}

TEST_F(CustomKernelGpu, SyntaxErrorSurfacesAtEvalAndEvalRetries) {
  CustomKernel kernel("broken", {"a"}, {"out"},
                      "uint i = thread_position_in_grid.x;\nout[i] = a[i] +;");
  auto out = kernel.apply({Array::from_data<float>({1, 2}, {2})}, {OutputSpec{{2}, Dtype::Float32}},
                          Dim3{2}, Dim3{2});
  const std::uint64_t failures = device_registry().stats().failures;
  std::string m = expect_error(ErrorCode::CompileError, [&] { out[0].eval(); });
  EXPECT_TRUE(contains(m, "broken")) << m;
  EXPECT_TRUE(contains(m, "error")) << m;
  EXPECT_TRUE(contains(m, "generated source")) << m;
  EXPECT_TRUE(contains(m, " | out[i] = a[i] +;")) << m;  // numbered
  EXPECT_FALSE(out[0].is_evaluated());
  m = expect_error(ErrorCode::CompileError, [&] { out[0].to_vector<float>(); });
  EXPECT_FALSE(out[0].is_evaluated());
  // Both evals compiled again: failures are never cached.
  EXPECT_EQ(device_registry().stats().failures, failures + 2);
}

TEST_F(CustomKernelGpu, KernelAndOptionsMayDieBeforeEval) {
  std::vector<Array> out;
  {
    CustomKernelOptions options;
    options.header = "__device__ float plus_one(float x) { return x + 1.0f; }";
    CustomKernel kernel("ephemeral", {"a"}, {"out"},
                        "uint i = thread_position_in_grid.x; out[i] = plus_one(a[i]);", options);
    ApplyOptions apply;
    apply.init_value = kNaN;
    out = kernel.apply({Array::from_data<float>({1, 2, 3}, {3})}, {OutputSpec{{3}, Dtype::Float32}},
                       Dim3{3}, Dim3{32}, apply);
  }
  EXPECT_EQ(out[0].to_vector<float>(), (std::vector<float>{2, 3, 4}));
}

TEST_F(CustomKernelGpu, OutputsOfOneApplyShareOneLaunchAndChainsEvaluate) {
  CustomKernel split(
      "split", {"a"}, {"lo", "hi"},
      "uint i = thread_position_in_grid.x; lo[i] = a[i] - 1.0f; hi[i] = a[i] + 1.0f;");
  CustomKernel add("add", {"x", "y"}, {"z"},
                   "uint i = thread_position_in_grid.x; z[i] = x[i] + y[i];");
  const int n = 4096;
  const auto a = random_vector<float>(n, rng_);
  auto parts = split.apply({Array::from_data(a, {n})},
                           {OutputSpec{{n}, Dtype::Float32}, OutputSpec{{n}, Dtype::Float32}},
                           Dim3{n}, Dim3{256}, poisoned());
  auto sum = add.apply({parts[0], parts[1]}, {OutputSpec{{n}, Dtype::Float32}}, Dim3{n}, Dim3{256},
                       poisoned());
  const Stats before = device_registry().stats();
  EXPECT_FALSE(parts[0].is_evaluated());
  sum[0].eval();
  EXPECT_TRUE(parts[0].is_evaluated());
  EXPECT_TRUE(parts[1].is_evaluated());
  std::vector<double> want(n);
  for (int i = 0; i < n; ++i) want[i] = 2.0 * a[i];
  EXPECT_TRUE(close_to(sum[0].to_vector<float>(), want, 1e-6));
  // One compile per kernel (or a cache hit), whichever happened: never one per output.
  const Stats after = device_registry().stats();
  EXPECT_LE(after.compiles + after.disk_hits - before.compiles - before.disk_hits, 2U);
  // Evaluating a sibling again does nothing.
  eval(parts);
  EXPECT_TRUE(close_to(parts[1].to_vector<float>(), std::vector<double>(a.begin(), a.end()), 1.1));
}

TEST_F(CustomKernelGpu, TwoStreams) {
  Stream s1(0);
  Stream s2(0);
  CustomKernel fill("fill_index", {"a"}, {"out"},
                    "uint i = thread_position_in_grid.x; out[i] = a[0] + float(i);");
  CustomKernel twice("twice_stream", {"x"}, {"y"},
                     "uint i = thread_position_in_grid.x; y[i] = 2.0f * x[i];");
  const int n = 1 << 20;
  std::vector<Array> first;
  {
    StreamScope scope(s1);
    first = fill.apply({Array::from_data<float>({5}, {1})}, {OutputSpec{{n}, Dtype::Float32}},
                       Dim3{n}, Dim3{256});
    EXPECT_EQ(first[0].stream(), s1);
  }
  std::vector<Array> second;
  {
    StreamScope scope(s2);
    second = twice.apply(first, {OutputSpec{{n}, Dtype::Float32}}, Dim3{n}, Dim3{256});
    EXPECT_EQ(second[0].stream(), s2);
  }
  const auto got = second[0].to_vector<float>();
  for (int i = 0; i < n; i += 997) ASSERT_EQ(got[i], 2.0F * (5.0F + float(i))) << i;
  EXPECT_EQ(got[n - 1], 2.0F * (5.0F + float(n - 1)));
}

TEST_F(CustomKernelGpu, DeviceScopeOnGpuZeroAndMissingGpu) {
  {
    DeviceScope scope(Device::gpu(0));
    CustomKernel kernel("on_zero", {"a"}, {"out"}, "out[0] = a[0] + 1.0f;");
    auto out = kernel.apply({Array::from_data<float>({1}, {1})}, {OutputSpec{{1}, Dtype::Float32}},
                            Dim3{1}, Dim3{1});
    EXPECT_EQ(out[0].stream().device(), 0);
    EXPECT_EQ(out[0].to_vector<float>(), std::vector<float>{2});
  }
  const int count = cuda::device_count();
  const std::string m =
      expect_error(ErrorCode::InvalidArgument, [&] { DeviceScope scope(Device::gpu(count)); });
  EXPECT_TRUE(contains(m, "does not exist")) << m;
  expect_error(ErrorCode::InvalidArgument, [&] { Stream stream(count); });
}

TEST_F(CustomKernelGpu, EveryDtypeRoundTrips) {
  CustomKernel copy("copy_any", {"a"}, {"out"},
                    "uint i = thread_position_in_grid.x; out[i] = a[i];");
  const int n = 333;
  std::uniform_int_distribution<int> pick(0, 100);
  std::vector<std::int64_t> ints(n);
  for (auto& v : ints) v = pick(rng_);
  auto check = [&](auto sample) {
    using T = decltype(sample);
    std::vector<T> values(n);
    for (int i = 0; i < n; ++i) values[i] = static_cast<T>(ints[i]);
    ApplyOptions options;
    options.init_value = 255;  // poison: no value above is 255
    auto out = copy.apply({Array::from_data(values, {n})}, {OutputSpec{{n}, dtype_v<T>}}, Dim3{n},
                          Dim3{64}, options);
    const auto got = out[0].template to_vector<T>();
    for (int i = 0; i < n; ++i) {
      ASSERT_EQ(double(got[i]), double(values[i])) << to_string(dtype_v<T>) << " at " << i;
    }
  };
  check(std::int8_t{});
  check(std::int16_t{});
  check(std::int32_t{});
  check(std::int64_t{});
  check(std::uint8_t{});
  check(std::uint16_t{});
  check(std::uint32_t{});
  check(std::uint64_t{});
  check(half{});
  check(bfloat16{});
  check(float{});
  check(double{});
}

TEST_F(CustomKernelGpu, EmptyArraysGetTheirMemoryAtEval) {
  const Array scratch = Array::empty({1000}, Dtype::Float32);
  EXPECT_FALSE(scratch.is_evaluated());
  scratch.eval();
  EXPECT_TRUE(scratch.is_evaluated());
  EXPECT_NE(scratch.data(), nullptr);
  EXPECT_EQ(scratch.to_vector<float>().size(), 1000U);
  // Written by one kernel, read by the next.
  CustomKernel fill("fill_empty", {"a"}, {"out"},
                    "uint i = thread_position_in_grid.x; out[i] = float(i) + a[0];");
  CustomKernel sum("sum_pair", {"x", "y"}, {"out"},
                   "uint i = thread_position_in_grid.x; out[i] = x[i] + y[i];");
  auto filled = fill.apply({Array::from_data<float>({0.5F}, {1})},
                           {OutputSpec{{1000}, Dtype::Float32}}, Dim3{1000}, Dim3{128});
  auto total = sum.apply({filled[0], filled[0]}, {OutputSpec{{1000}, Dtype::Float32}}, Dim3{1000},
                         Dim3{128}, poisoned());
  const auto got = total[0].to_vector<float>();
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(got[i], 2.0F * (float(i) + 0.5F)) << i;
}

TEST_F(CustomKernelGpu, LargeSharedMemory) {
  CustomKernel kernel("shared_rev", {"a"}, {"out"},
                      "extern __shared__ float tile[];\n"
                      "uint t = thread_position_in_threadgroup.x;\n"
                      "uint n = threads_per_threadgroup.x;\n"
                      "for (uint k = t; k < 16384; k += n) tile[k] = a[k];\n"
                      "threadgroup_barrier(mem_flags::mem_threadgroup);\n"
                      "for (uint k = t; k < 16384; k += n) out[k] = tile[16383 - k];");
  const auto a = random_vector<float>(16384, rng_);
  ApplyOptions options = poisoned();
  options.shared_memory = 16384 * sizeof(float);  // 64 KiB: needs the opt-in
  auto out = kernel.apply({Array::from_data(a, {16384})}, {OutputSpec{{16384}, Dtype::Float32}},
                          Dim3{256}, Dim3{256}, options);
  const auto got = out[0].to_vector<float>();
  for (int k = 0; k < 16384; ++k) ASSERT_EQ(got[k], a[16383 - k]) << k;
}

// Under 48 KiB of dynamic shared memory, but over it with the kernel's static array: the
// launch needs the opt-in all the same.
TEST_F(CustomKernelGpu, StaticAndDynamicSharedMemoryTogetherPast48KiB) {
  CustomKernel kernel("shared_split", {"a"}, {"out"},
                      "__shared__ float low[8192];\n"  // 32 KiB, static
                      "extern __shared__ float high[];\n"
                      "uint t = thread_position_in_threadgroup.x;\n"
                      "uint n = threads_per_threadgroup.x;\n"
                      "for (uint k = t; k < 8192; k += n) low[k] = a[k];\n"
                      "for (uint k = t; k < 6144; k += n) high[k] = a[8192 + k];\n"
                      "threadgroup_barrier(mem_flags::mem_threadgroup);\n"
                      "for (uint k = t; k < 14336; k += n)\n"
                      "  out[k] = k < 6144 ? high[6143 - k] : low[14335 - k];");
  const auto a = random_vector<float>(14336, rng_);
  ApplyOptions options = poisoned();
  options.shared_memory = 6144 * sizeof(float);  // 24 KiB dynamic, 56 KiB in all
  auto out = kernel.apply({Array::from_data(a, {14336})}, {OutputSpec{{14336}, Dtype::Float32}},
                          Dim3{256}, Dim3{256}, options);
  const auto got = out[0].to_vector<float>();
  for (int k = 0; k < 14336; ++k) ASSERT_EQ(got[k], a[14335 - k]) << k;
}

}  // namespace
}  // namespace kreg
