// The registry on a GPU: the seed's two tests, in kreg's terms, and loading behaviour.
#include "gpu/device_buffer.hpp"
#include "test_support.hpp"

#include <algorithm>
#include <barrier>
#include <string>
#include <thread>
#include <vector>

namespace kreg {
namespace {

using test::contains;
using test::expect_error;

RegistryOptions gpu_options() {
  return test::isolated_options();
}

TEST(RegistryGpu, IntConstantsGiveDistinctKernelsAndCountsGrowByOne) {
  KREG_REQUIRE_GPU();
  Registry reg(gpu_options());
  const std::size_t before = reg.cached_count();
  Constants four{.ints = {{300, 4}}};
  Constants eight{.ints = {{300, 8}}};

  const Kernel& k4 = reg.get("powi_f32", four);
  EXPECT_EQ(reg.cached_count(), before + 1);
  const Kernel& k8 = reg.get("powi_f32", eight);
  EXPECT_EQ(reg.cached_count(), before + 2);
  EXPECT_NE(&k4, &k8);
  EXPECT_NE(k4.native_handle(), k8.native_handle());

  const Kernel& k4_again = reg.get("powi_f32", four);
  EXPECT_EQ(&k4, &k4_again);  // a repeated get returns the same object
  EXPECT_EQ(reg.cached_count(), before + 2);
  EXPECT_TRUE(reg.is_cached("powi_f32", four));
  EXPECT_GE(reg.stats().memory_hits, 1u);
}

TEST(RegistryGpu, LabelsEqualTheCacheKey) {
  KREG_REQUIRE_GPU();
  Registry reg(gpu_options());
  Constants c{.bools = {{200, true}}, .ints = {{300, 64}}};
  const Kernel& k = reg.get("powi_f32", c);
  EXPECT_EQ(k.label(), "powi_f32|200:b1|300:i64");
  EXPECT_EQ(k.label(), kernel_label("powi_f32", c));
  EXPECT_EQ(k.name(), "powi_f32");
  EXPECT_EQ(reg.get("elementwise_add_f32").label(), "elementwise_add_f32");
  EXPECT_EQ(reg.arch(), k.binary().arch());
}

TEST(RegistryGpu, EntriesOfOneSourceShareOneCompileAndLoad) {
  KREG_REQUIRE_GPU();
  Registry reg(gpu_options());
  const Kernel& add = reg.get("elementwise_add_f32");
  const Kernel& mul = reg.get("elementwise_mul_f32");
  EXPECT_EQ(&add.binary(), &mul.binary());
  EXPECT_EQ(reg.stats().compiles, 1u);
  EXPECT_EQ(reg.stats().loads, 1u);
  EXPECT_GT(reg.stats().compile_ms, 0.0);
}

TEST(RegistryGpu, AttributesAreRead) {
  KREG_REQUIRE_GPU();
  Registry reg(gpu_options());
  const KernelAttributes& a = reg.get("elementwise_add_f32").attributes();
  EXPECT_GT(a.registers, 0);
  EXPECT_GE(a.max_threads_per_block, 256);
  EXPECT_LE(a.max_threads_per_block, 1024);
  EXPECT_EQ(a.static_shared_bytes, 0);
}

// A thread that has launched nothing has no current context; its first kernel must still
// know its parameters, or launches would go unchecked.
TEST(RegistryGpu, AKernelLoadedOnAThreadWithoutAContextKnowsItsParameters) {
  KREG_REQUIRE_GPU();
  std::vector<std::size_t> sizes;
  bool known = false;
  std::thread([&] {
    Registry reg(gpu_options());
    reg.register_source("wide",
                        "extern \"C\" __global__ void wide(double a, long long b, short c, bool d, "
                        "double* out) { out[0] = a + b + c + d; }\n");
    const Kernel& k = reg.get("wide");
    known = k.parameters_known();
    sizes = k.parameter_sizes();
  }).join();
  EXPECT_TRUE(known);
  EXPECT_EQ(sizes, (std::vector<std::size_t>{8, 8, 2, 1, 8}));
}

TEST(RegistryGpu, PrewarmLoadsSoGetIsAHit) {
  KREG_REQUIRE_GPU();
  Registry reg(gpu_options());
  PrewarmReport report = reg.prewarm_all();
  EXPECT_TRUE(report.failures.empty());
  EXPECT_GT(report.warmed, 0u);
  const auto compiles = reg.stats().compiles;
  const auto hits = reg.stats().memory_hits;
  reg.get("axpy_f64");
  EXPECT_EQ(reg.stats().compiles, compiles);
  EXPECT_EQ(reg.stats().memory_hits, hits + 1);
}

TEST(RegistryGpu, ConcurrentGetsOfOneColdKernelMakeOneKernel) {
  KREG_REQUIRE_GPU();
  Registry reg(gpu_options());
  constexpr int kThreads = 32;
  std::barrier start(kThreads);
  std::vector<const Kernel*> seen(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      start.arrive_and_wait();
      seen[t] = &reg.get("powi_f32", {.ints = {{300, 2}}});
    });
  }
  for (auto& thread : threads) thread.join();
  for (const Kernel* k : seen) EXPECT_EQ(k, seen[0]);
  EXPECT_EQ(reg.stats().compiles, 1u);
  EXPECT_EQ(reg.stats().loads, 1u);
}

// A fresh registry's first gets start the driver, make the GPU's context on a thread of their
// own and compile beside it; every thread then loads into that one context.
TEST(RegistryGpu, ColdGetsFromManyThreadsWaitForOneContextMadeBesideTheirCompiles) {
  KREG_REQUIRE_GPU();
  Registry reg(gpu_options());
  constexpr int kThreads = 16;
  for (int t = 0; t < kThreads; ++t) {
    reg.register_source("val" + std::to_string(t),
                        "extern \"C\" __global__ void val" + std::to_string(t) +
                            "(int* p) { p[0] = " + std::to_string(1000 + t) + "; }");
  }
  std::barrier start(kThreads);
  std::vector<int> seen(kThreads, -1);
  std::vector<std::thread> threads;
  threads.reserve(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      start.arrive_and_wait();
      const Kernel& kernel = reg.get("val" + std::to_string(t));
      test::DeviceBuffer<int> out(1);
      out.poison();
      kernel.launch(Dim3{1}, Dim3{1}, 0, nullptr, out.get());
      seen[t] = out.download()[0];
    });
  }
  for (auto& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(seen[t], 1000 + t) << "thread " << t;
  EXPECT_EQ(reg.stats().compiles, 16u);
  EXPECT_EQ(reg.stats().loads, 16u);
}

TEST(RegistryGpu, ReplacedSourceServesNewCodeAndOldReferencesStayValid) {
  KREG_REQUIRE_GPU();
  Registry reg(gpu_options());
  reg.register_source("val", "extern \"C\" __global__ void val(int* p) { p[0] = 1; }");
  const Kernel& old_kernel = reg.get("val");
  reg.register_source("val", "extern \"C\" __global__ void val(int* p) { p[0] = 2; }");
  const Kernel& new_kernel = reg.get("val");
  EXPECT_NE(&old_kernel, &new_kernel);
  test::DeviceBuffer<int> out(1);
  out.poison();
  new_kernel.launch(Dim3{1}, Dim3{1}, 0, nullptr, out.get());
  EXPECT_EQ(out.download()[0], 2);
  old_kernel.launch(Dim3{1}, Dim3{1}, 0, nullptr, out.get());
  EXPECT_EQ(out.download()[0], 1);
}

TEST(RegistryGpu, BadInputLeavesTheRegistryUsable) {
  KREG_REQUIRE_GPU();
  Registry reg(gpu_options());
  expect_error(ErrorCode::KernelNotFound, [&] { reg.get("no_such_kernel"); });
  expect_error(ErrorCode::InvalidArgument, [&] { reg.get(""); });
  expect_error(ErrorCode::CompileError, [&] { reg.get("powi_f32"); });
  expect_error(ErrorCode::InvalidArgument, [&] {
    reg.get("powi_f32", {.ints = {{300, 1}, {301, 1}}});
  });
  reg.register_source("syntax", "extern \"C\" __global__ void syntax() { oops }");
  expect_error(ErrorCode::CompileError, [&] { reg.get("syntax"); });
  EXPECT_EQ(reg.get("elementwise_add_f32").name(), "elementwise_add_f32");
}

}  // namespace
}  // namespace kreg

namespace kreg {
namespace {

TEST(RegistryGpu, CompiledDiskAndPrecompiledKernelsGiveIdenticalResults) {
  KREG_REQUIRE_GPU();
  test::ScratchDir scratch("kreg_gpu_disk_");
  RegistryOptions options = test::isolated_options();
  options.disk_cache = true;
  options.cache_dir = scratch.path();
  const Constants c{.bools = {{200, true}}, .ints = {{300, 3}}};
  const unsigned n = 100003;
  std::mt19937 rng(99);
  const auto x = test::random_vector<float>(n, rng);
  test::DeviceBuffer<float> dx(x), out(n);
  auto run = [&](Registry& reg, Origin expected) {
    const Kernel& k = reg.get("powi_f32", c);
    EXPECT_EQ(k.binary().origin(), expected);
    out.poison();
    k.launch(Dim3{(n + 255) / 256}, Dim3{256}, 0, nullptr, static_cast<const float*>(dx.get()),
             out.get(), n);
    return out.download();
  };
  Registry compiled(options);
  const auto a = run(compiled, Origin::Compiled);
  compiled.flush_disk_cache();
  Registry from_disk(options);
  const auto b = run(from_disk, Origin::Disk);
  EXPECT_EQ(from_disk.stats().compiles, 0u);
  options.precompiled = true;
  options.disk_cache = false;
  Registry precompiled(options);
  const auto archs = precompiled_archs();
  const bool has_code = std::find(archs.begin(), archs.end(), precompiled.arch()) != archs.end();
  // Without machine code for this GPU the precompiled set falls back to NVRTC.
  const auto p = run(precompiled, has_code ? Origin::Precompiled : Origin::Compiled);
  ASSERT_EQ(a.size(), b.size());
  for (unsigned i = 0; i < n; ++i) {
    ASSERT_EQ(a[i], b[i]) << i;
    ASSERT_EQ(a[i], p[i]) << i;
    ASSERT_EQ(a[i], -x[i] * x[i] * x[i]) << i;
  }
}

}  // namespace
}  // namespace kreg
