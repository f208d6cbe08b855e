// One registry serving several GPUs. On a machine with one GPU, the per-device parts run on
// GPU 0; the tests that need two say so and skip.
#include "gpu/device_buffer.hpp"
#include "test_support.hpp"

#include <cmath>
#include <cstring>
#include <map>
#include <thread>

namespace kreg {
namespace {

using test::close_to;
using test::DeviceBuffer;
using test::random_vector;

constexpr unsigned kN = 300007;
const Constants kSquare{.ints = {{300, 2}}};
const Constants kNegCube{.bools = {{200, true}}, .ints = {{300, 3}}};

std::string two_gpus_unavailable() {
  std::string why = test::gpu_unavailable_reason();
  if (!why.empty()) return why;
  const int count = cuda::device_count();
  if (count < 2) return "needs two GPUs; this machine has " + std::to_string(count);
  return {};
}

CustomKernel scale_kernel() {
  return {"multi_gpu_scale",
          {"x"},
          {"y"},
          "uint i = thread_position_in_grid.x; y[i] = 3.0f * x[i] - 1.0f;"};
}

// Every op, and so every family of built-in kernels, on the calling thread's GPU, on bfloat16
// data that is the same whatever the GPU. Results go into `results` as bytes, by op.
void run_ops(int device, std::map<std::string, std::vector<char>>& results) {
  auto keep = [&](const std::string& name, const Array& a) {
    EXPECT_EQ(a.stream().device(), device) << name;
    std::vector<char> bytes;
    auto take = [&](const auto& values) {
      const auto* p = reinterpret_cast<const char*>(values.data());
      bytes.assign(p, p + values.size() * sizeof(values[0]));
    };
    if (a.dtype() == Dtype::Float32) take(a.to_vector<float>());
    if (a.dtype() == Dtype::BFloat16) take(a.to_vector<bfloat16>());
    if (a.dtype() == Dtype::Int64) take(a.to_vector<std::int64_t>());
    results["op " + name] = std::move(bytes);
  };
  std::mt19937 rng(99);
  constexpr std::int64_t rows = 64;
  constexpr std::int64_t cols = 512;
  auto data = [&](std::size_t n) {
    const auto values = random_vector<float>(n, rng);
    return std::vector<bfloat16>(values.begin(), values.end());
  };
  const Array x = Array::from_data(data(rows * cols), {rows, cols});
  const Array y = Array::from_data(data(rows * cols), {rows, cols});
  const Array w = Array::from_data(data(cols), {cols});
  keep("add", ops::add(x, y));
  keep("sub", ops::sub(x, w));
  keep("mul", ops::mul(x, y));
  keep("div", ops::div(x, w));
  keep("scale", ops::scale(x, 0.5F));
  keep("cast", ops::cast(ops::cast(x, Dtype::Float32), Dtype::BFloat16));
  keep("rms_norm", ops::rms_norm(x, w, 1e-6F));
  keep("add_rms_norm", ops::add_rms_norm(x, y, w, 1e-6F).first);
  keep("layer_norm", ops::layer_norm(x, w, w, 1e-5F));
  keep("softmax", ops::softmax(x, 0.5F, w));
  keep("swiglu", ops::swiglu(x, y));
  keep("gelu", ops::gelu(x, true));
  keep("row_sum", ops::row_sum(x));
  keep("row_max", ops::row_max(x));
  keep("argmax", ops::argmax(x));
  keep("transpose", ops::transpose(x));
  keep("permute021", ops::permute021(Array::from_data(data(rows * cols), {8, 8, cols})));
  keep("rope", ops::rope(Array::from_data(data(rows * cols), {rows, 4, cols / 4}), 7));
  keep("embedding", ops::embedding(x, Array::from_data<std::int32_t>({3, 1, 4, 1, 5}, {5})));
  keep("gemv", ops::gemv(x, Array::from_data(random_vector<float>(cols, rng), {cols})));
}

// Every built-in kernel, and a custom kernel over a transposed input, on `device`, with the
// same data whatever the device. Returns each result's bytes by name.
std::map<std::string, std::vector<char>> run_everything(Registry& reg, int device) {
  test::cuda_check(cudaSetDevice(device), "cudaSetDevice");  // for the test's own buffers
  DeviceScope scope(Device::gpu(device));                    // for kreg's launches
  std::mt19937 rng(1234);
  const auto a = random_vector<float>(kN, rng);
  const auto b = random_vector<float>(kN, rng, -1.5, 1.5);
  const auto d = random_vector<double>(kN, rng);
  DeviceBuffer<float> da(a);
  DeviceBuffer<float> db(b);
  DeviceBuffer<float> out(kN);
  DeviceBuffer<double> dd(d);
  DeviceBuffer<double> out64(kN);
  std::map<std::string, std::vector<char>> results;
  auto keep = [&](const std::string& name, const auto& values) {
    const auto* bytes = reinterpret_cast<const char*>(values.data());
    results[name].assign(bytes, bytes + values.size() * sizeof(values[0]));
  };
  const Dim3 grid{(kN + 255) / 256};
  const Dim3 block{256};
  const float* pa = da.get();
  const float* pb = db.get();
  for (const char* name : {"elementwise_add_f32", "elementwise_mul_f32"}) {
    out.poison();
    reg.get(name).launch(grid, block, 0, nullptr, pa, pb, out.get(), kN);
    keep(name, out.download());
  }
  for (const auto& [label, constants] :
       {std::pair{"powi_f32|300:i2", kSquare}, std::pair{"powi_f32|200:b1|300:i3", kNegCube}}) {
    out.poison();
    reg.get("powi_f32", constants).launch(grid, block, 0, nullptr, pb, out.get(), kN);
    keep(label, out.download());
  }
  out.upload(a);
  reg.get("axpy_f32").launch(grid, block, 0, nullptr, 2.0F, pb, out.get(), kN);
  keep("axpy_f32", out.download());
  out64.upload(d);
  reg.get("axpy_f64")
      .launch(grid, block, 0, nullptr, 0.5, static_cast<const double*>(dd.get()), out64.get(), kN);
  keep("axpy_f64", out64.download());

  const CustomKernel kernel = scale_kernel();
  const Array x =
      Array::from_data(std::vector<float>(a.begin(), a.begin() + std::ptrdiff_t{1000} * 300),
                       {1000, 300})
          .transpose();
  ApplyOptions options;
  options.init_value = std::nan("");
  auto y = kernel.apply({x}, {OutputSpec{{300, 1000}, Dtype::Float32}}, Dim3{300 * 1000}, Dim3{256},
                        options);
  EXPECT_EQ(y[0].stream().device(), device);
  keep("custom", y[0].to_vector<float>());
  run_ops(device, results);
  return results;
}

TEST(MultiGpu, KernelsHaveAFunctionPerDeviceAndRejectMissingOnes) {
  KREG_REQUIRE_GPU();
  Registry reg(test::isolated_options());
  const Kernel& k = reg.get("elementwise_add_f32");
  EXPECT_NE(k.function(0), nullptr);
  EXPECT_EQ(k.function(0), k.function(0));
  const int count = cuda::device_count();
  test::expect_error(ErrorCode::InvalidArgument, [&] { k.function(count); });
  test::expect_error(ErrorCode::InvalidArgument, [&] { k.function(-1); });
  if (count >= 2) EXPECT_NE(k.function(0), k.function(1));
  RegistryOptions missing = test::isolated_options();
  missing.device = count;
  test::expect_error(ErrorCode::NoDevice, [&] { Registry(missing).get("elementwise_add_f32"); });
}

TEST(MultiGpu, DeviceScopeOnGpuZeroRunsEverythingFromAThreadWithoutAContext) {
  KREG_REQUIRE_GPU();
  Registry reg(test::isolated_options());
  std::map<std::string, std::vector<char>> results;
  std::thread worker([&] { results = run_everything(reg, 0); });
  worker.join();
  ASSERT_EQ(results.size(), 7U + 20U);  // 6 registry kernels, a custom kernel, 20 ops
  std::mt19937 rng(1234);
  const auto a = random_vector<float>(kN, rng);
  const auto b = random_vector<float>(kN, rng, -1.5, 1.5);
  std::vector<float> sum(kN);
  std::memcpy(sum.data(), results["elementwise_add_f32"].data(), kN * sizeof(float));
  std::vector<double> want(kN);
  for (unsigned i = 0; i < kN; ++i) want[i] = double(a[i]) + double(b[i]);
  EXPECT_TRUE(close_to(sum, want, 1e-6));
  std::vector<float> cube(kN);
  std::memcpy(cube.data(), results["powi_f32|200:b1|300:i3"].data(), kN * sizeof(float));
  for (unsigned i = 0; i < kN; ++i) want[i] = -std::pow(double(b[i]), 3);
  EXPECT_TRUE(close_to(cube, want, 1e-5));
}

TEST(MultiGpu, OneRegistryTwoGpusOneCompilePerKey) {
  const std::string why = two_gpus_unavailable();
  if (!why.empty()) GTEST_SKIP() << why;
  ASSERT_EQ(cuda::device_info(0).arch(), cuda::device_info(1).arch());
  Registry reg(test::isolated_options());
  // A prewarm from this thread serves both GPUs.
  const std::size_t ready = reg.prewarm(std::vector<KernelRequest>{{"elementwise_add_f32", {}},
                                                                   {"elementwise_mul_f32", {}},
                                                                   {"powi_f32", kSquare},
                                                                   {"powi_f32", kNegCube},
                                                                   {"axpy_f32", {}},
                                                                   {"axpy_f64", {}}});
  EXPECT_EQ(ready, 6U);
  const Stats warmed = reg.stats();
  EXPECT_EQ(warmed.compiles, 4U);  // elementwise, powi twice, axpy: one per (source, constants)
  Registry& custom = device_registry(0);
  EXPECT_EQ(&custom, &device_registry(1));  // one per arch, not per GPU
  const Stats custom_before = custom.stats();
  // Earlier tests in this process may have built it already.
  const std::string key = scale_kernel().cache_key(
      {Array::from_data(std::vector<float>(300000), {1000, 300}).transpose()},
      {OutputSpec{{300, 1000}, Dtype::Float32}});
  const bool kernel_ready = custom.is_cached(key);

  std::map<std::string, std::vector<char>> results[2];
  std::thread first([&] { results[0] = run_everything(reg, 0); });
  std::thread second([&] { results[1] = run_everything(reg, 1); });
  first.join();
  second.join();

  ASSERT_EQ(results[0].size(), 7U + 20U);
  for (const auto& [name, bytes] : results[0]) {
    EXPECT_EQ(bytes, results[1][name]) << name << " differs between GPU 0 and GPU 1";
  }
  const Stats after = reg.stats();
  EXPECT_EQ(after.compiles, warmed.compiles);  // nothing compiled per device
  EXPECT_EQ(after.loads, warmed.loads);        // nor loaded: one CUlibrary serves both
  // The custom kernel is built once for both GPUs; the ops' kernels and strided_copy come
  // from the precompiled set, also once for both, and nothing else compiles.
  const Stats custom_after = custom.stats();
  EXPECT_EQ(custom_after.compiles + custom_after.disk_hits - custom_before.compiles -
                custom_before.disk_hits,
            kernel_ready ? 0U : 1U);
  EXPECT_TRUE(custom.is_cached(key));
  EXPECT_TRUE(custom.is_cached("strided_copy_4"));
}

}  // namespace
}  // namespace kreg

namespace kreg {
namespace {

TEST(MultiGpu, InputsFollowTheGpuThatFirstUsesThemOrAreRefused) {
  const std::string why = two_gpus_unavailable();
  if (!why.empty()) GTEST_SKIP() << why;
  CustomKernel twice("multi_gpu_twice", {"x"}, {"y"},
                     "uint i = thread_position_in_grid.x; y[i] = 2.0f * x[i];");
  const std::vector<float> values(100, 1.5F);
  // Made outside any scope (GPU 0), still on the host: it goes to GPU 1 with its first use.
  const Array host = Array::from_data(values, {100});
  const Array view = host.slice(0, 0, 100, 1);
  {
    DeviceScope gpu1(Device::gpu(1));
    auto y = twice.apply({view}, {OutputSpec{{100}, Dtype::Float32}}, Dim3{100}, Dim3{64});
    EXPECT_EQ(y[0].to_vector<float>(), std::vector<float>(100, 3.0F));
    EXPECT_EQ(host.stream().device(), 1);
  }
  // Already on GPU 0: refused on GPU 1, with the input's name.
  const Array on_gpu0 = Array::from_data(values, {100});
  on_gpu0.eval();
  DeviceScope gpu1(Device::gpu(1));
  const std::string m = test::expect_error(ErrorCode::InvalidArgument, [&] {
    twice.apply({on_gpu0}, {OutputSpec{{100}, Dtype::Float32}}, Dim3{100}, Dim3{64});
  });
  EXPECT_TRUE(test::contains(m, "'x' is on GPU 0")) << m;
}

}  // namespace
}  // namespace kreg
