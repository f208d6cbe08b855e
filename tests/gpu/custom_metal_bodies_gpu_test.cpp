// Metal bodies that real code writes and that need more than a rewrite: a header template
// calling metal::precise and metal::fast (MLX's own test of a header helper), a hash set
// built with atomic_compare_exchange_weak_explicit on `device atomic_int*`, half converted
// to bfloat (scalars, and vectors explicitly), and threadgroup arrays past the 48 KiB a
// kernel may hold statically; a small input given to a helper that takes a pointer, and
// Metal's numeric_limits. Each runs on the GPU against a float64 (or exact) reference,
// with its outputs poisoned first.
#include "test_support.hpp"

#include <cmath>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace kreg {
namespace {

class CustomMetalBodiesGpu : public ::testing::Test {
 protected:
  void SetUp() override { KREG_REQUIRE_GPU(); }
  std::mt19937 rng_{23};
};

TEST_F(CustomMetalBodiesGpu, PreciseAndFastMathInsideAHeaderTemplate) {
  CustomKernelOptions options;
  // As MLX's test writes it, indented, with the kernel's input of 2x2 elements.
  options.header =
      "\n            template <typename T>\n"
      "            T do_exp(T x) {\n"
      "                return metal::precise::exp(x);\n"
      "            }\n"
      "            template <typename T> T do_more(T x) {\n"
      "              return metal::precise::sqrt(metal::precise::fabs(x)) +\n"
      "                     metal::precise::log(metal::precise::fabs(x) + T(1)) +\n"
      "                     metal::precise::sin(x) + metal::precise::tanh(x) +\n"
      "                     metal::fast::exp(x) + metal::fast::cos(x);\n"
      "            }\n";
  const CustomKernel kernel("helper", {"a"}, {"out1", "out2"},
                            "\n                uint elem = thread_position_in_grid.x;\n"
                            "                out1[elem] = do_exp(a[elem]);\n"
                            "                out2[elem] = do_more(a[elem]);\n",
                            options);
  for (const std::vector<std::int64_t>& shape :
       {std::vector<std::int64_t>{2, 2}, std::vector<std::int64_t>{1000}}) {
    const std::int64_t n = shape.size() == 2 ? 4 : 1000;
    std::normal_distribution<float> dist(0, 1);
    std::vector<float> a(static_cast<std::size_t>(n));
    for (float& v : a) v = dist(rng_);
    ApplyOptions apply;
    apply.init_value = std::numeric_limits<double>::quiet_NaN();
    const std::vector<Array> out =
        kernel.apply({Array::from_data(a, shape)},
                     {OutputSpec{shape, Dtype::Float32}, OutputSpec{shape, Dtype::Float32}},
                     Dim3{static_cast<unsigned>(n)}, Dim3{128}, apply);
    const std::vector<float> exp_got = out[0].to_vector<float>();
    const std::vector<float> more_got = out[1].to_vector<float>();
    for (std::int64_t i = 0; i < n; ++i) {
      const double x = a[static_cast<std::size_t>(i)];
      const double more = std::sqrt(std::fabs(x)) + std::log(std::fabs(x) + 1) + std::sin(x) +
                          std::tanh(x) + std::exp(x) + std::cos(x);
      ASSERT_NEAR(exp_got[static_cast<std::size_t>(i)], std::exp(x), 2e-6 * std::exp(x)) << i;
      // The fast:: functions are CUDA's intrinsics, within about 1e-5 here.
      ASSERT_NEAR(more_got[static_cast<std::size_t>(i)], more, 1e-4 * std::fmax(1.0, more)) << i;
    }
  }
}

// Open addressing with linear probing: each thread inserts its key; a lost race retries the
// next slot. Every key must end up in the table exactly once.
TEST_F(CustomMetalBodiesGpu, AHashSetOfCompareExchangeOnDeviceAtomicInt) {
  constexpr int kKeys = 3000;
  constexpr int kSlots = 4096;
  std::uniform_int_distribution<int> dist(0, 900);  // repeats: duplicates insert once
  std::vector<int> keys(kKeys);
  for (int& k : keys) k = dist(rng_);
  const CustomKernel kernel(
      "hashset", {"keys"}, {"table"},
      "uint i = thread_position_in_grid.x;\n"
      "int key = keys[i];\n"
      "uint slot = (uint(key) * 2654435761u) % 4096u;\n"
      "device atomic_int* cells = (device atomic_int*)table;\n"
      "for (uint probe = 0; probe < 4096u; ++probe) {\n"
      "  int expected = -1;\n"
      "  if (atomic_compare_exchange_weak_explicit(&cells[slot], &expected, key,\n"
      "                                            memory_order_relaxed, memory_order_relaxed)) {\n"
      "    break;\n"
      "  }\n"
      "  if (expected == key) break;  // already there\n"
      "  if (expected != -1) slot = (slot + 1) % 4096u;  // taken by another key\n"
      "}\n");
  ApplyOptions apply;
  apply.init_value = -1;
  const std::vector<Array> out =
      kernel.apply({Array::from_data(keys, {kKeys})}, {OutputSpec{{kSlots}, Dtype::Int32}},
                   Dim3{kKeys}, Dim3{256}, apply);
  const std::vector<int> table = out[0].to_vector<int>();
  std::multiset<int> stored;
  for (int v : table) {
    if (v != -1) stored.insert(v);
  }
  const std::set<int> want(keys.begin(), keys.end());
  EXPECT_EQ(stored.size(), want.size()) << "a key is missing or stored twice";
  EXPECT_EQ(std::set<int>(stored.begin(), stored.end()), want);
}

TEST_F(CustomMetalBodiesGpu, HalfConvertsToBfloatInScalarsAndVectors) {
  constexpr int kN = 1024;
  std::uniform_real_distribution<float> dist(-8, 8);
  std::vector<half> values(kN);
  for (half& v : values) v = half(dist(rng_));
  const Array a = Array::from_data(values, {kN});
  const CustomKernel kernel("h2b", {"a"}, {"out"},
                            "uint i = thread_position_in_grid.x;\n"
                            "half h = a[i];\n"
                            "bfloat s = h;\n"
                            "half4 v = half4(h, h * half(2), -h, h + half(1));\n"
                            "bfloat4 b = bfloat4(v);\n"
                            "bfloat2 c = bfloat2(v.zw);\n"
                            "b.y = h;\n"
                            "out[i * 4 + 0] = float(s);\n"
                            "out[i * 4 + 1] = float(b.x + b.y);\n"
                            "out[i * 4 + 2] = float(b.z) + float(b.w);\n"
                            "out[i * 4 + 3] = float(c.x) * float(c.y);\n");
  ApplyOptions apply;
  apply.init_value = std::numeric_limits<double>::quiet_NaN();
  const std::vector<float> got =
      kernel.apply({a}, {OutputSpec{{kN * 4}, Dtype::Float32}}, Dim3{kN}, Dim3{128}, apply)[0]
          .to_vector<float>();
  // bfloat keeps 8 bits of significand: each conversion is within 2^-8 of its value.
  const auto bf = [](double x) { return x; };
  for (int i = 0; i < kN; ++i) {
    const double h = static_cast<float>(values[static_cast<std::size_t>(i)]);
    const double want[4] = {bf(h), bf(h) + bf(h), bf(-h) + bf(h + 1), bf(-h) * bf(h + 1)};
    for (int k = 0; k < 4; ++k) {
      ASSERT_NEAR(got[static_cast<std::size_t>(i * 4 + k)], want[k],
                  2 * std::ldexp(1.0, -8) * std::fmax(1.0, std::fabs(want[k]) + 2 * std::fabs(h)))
          << "element " << i << ", column " << k;
    }
  }
}

// 64 KiB of threadgroup floats and a second array: more than a kernel may hold statically.
TEST_F(CustomMetalBodiesGpu, ThreadgroupArraysPast48KiBMoveToDynamicSharedMemory) {
  constexpr int kGroup = 256;
  constexpr int kGroups = 6;
  constexpr int kTile = 16384;
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> a(kGroup * kGroups);
  for (float& v : a) v = dist(rng_);
  const CustomKernel kernel("big_tile", {"a"}, {"out"},
                            "const uint t = thread_position_in_threadgroup.x;\n"
                            "const uint g = threadgroup_position_in_grid.x;\n"
                            "threadgroup float tile[16384];\n"
                            "threadgroup float sums[256];\n"
                            "for (uint k = t; k < 16384u; k += 256u) {\n"
                            "  tile[k] = a[g * 256u + (k * 7u) % 256u] * float(k % 5u);\n"
                            "}\n"
                            "threadgroup_barrier(mem_flags::mem_threadgroup);\n"
                            "float s = 0;\n"
                            "for (uint k = t; k < 16384u; k += 256u) s += tile[16383u - k];\n"
                            "sums[t] = s;\n"
                            "threadgroup_barrier(mem_flags::mem_threadgroup);\n"
                            "out[thread_position_in_grid.x] = sums[255u - t];\n");
  ApplyOptions apply;
  apply.init_value = std::numeric_limits<double>::quiet_NaN();
  const std::vector<float> got = kernel
                                     .apply({Array::from_data(a, {kGroup * kGroups})},
                                            {OutputSpec{{kGroup * kGroups}, Dtype::Float32}},
                                            Dim3{kGroup * kGroups}, Dim3{kGroup}, apply)[0]
                                     .to_vector<float>();
  for (int g = 0; g < kGroups; ++g) {
    std::vector<double> tile(kTile);
    for (int k = 0; k < kTile; ++k) tile[k] = double{a[g * kGroup + (k * 7) % kGroup]} * (k % 5);
    for (int t = 0; t < kGroup; ++t) {
      const int reader = kGroup - 1 - t;  // out[t] = sums[255 - t]
      double s = 0;
      for (int k = reader; k < kTile; k += kGroup) s += tile[kTile - 1 - k];
      ASSERT_NEAR(got[static_cast<std::size_t>(g * kGroup + t)], s,
                  1e-4 * std::fmax(1.0, std::fabs(s)))
          << "group " << g << ", thread " << t;
    }
  }
}

// A small input (3 elements, passed by value) handed to a header helper that takes Metal's
// `constant const float*`, as a molecular-dynamics body wraps displacements into a periodic
// box, and read through an offset pointer.
TEST_F(CustomMetalBodiesGpu, ASmallInputGoesToAHelperThatTakesAPointer) {
  constexpr int kN = 999;
  std::uniform_real_distribution<float> dist(-20, 20);
  std::vector<float> d(3 * kN);
  for (float& v : d) v = dist(rng_);
  const std::vector<float> box = {4.0f, 5.5f, 7.25f};
  CustomKernelOptions options;
  options.header =
      "inline float wrap(float v, constant const float* box, int axis) {\n"
      "  return v - box[axis] * rint(v / box[axis]);\n"
      "}\n";
  const CustomKernel kernel("minimum_image", {"d", "box"}, {"out"},
                            "uint i = thread_position_in_grid.x;\n"
                            "if (i >= 3 * 999) return;\n"
                            "const float* edges = box + 0;\n"
                            "out[i] = wrap(d[i], box, int(i % 3)) + 0.0f * edges[i % 3];\n",
                            options);
  ApplyOptions apply;
  apply.init_value = std::numeric_limits<double>::quiet_NaN();
  const std::vector<float> got =
      kernel
          .apply({Array::from_data(d, {kN, 3}), Array::from_data(box, {3})},
                 {OutputSpec{{kN, 3}, Dtype::Float32}}, Dim3{3 * kN}, Dim3{128}, apply)[0]
          .to_vector<float>();
  for (std::size_t i = 0; i < d.size(); ++i) {
    const double edge = box[i % 3];
    const double want = d[i] - edge * std::nearbyint(static_cast<double>(d[i]) / edge);
    ASSERT_NEAR(got[i], want, 1e-5) << i;
  }
}

// MLX-VLM's grammar mask: logits a token grammar forbids become minus infinity, written with
// Metal's numeric_limits of the template type (bfloat16 here).
TEST_F(CustomMetalBodiesGpu, NumericLimitsMaskForbiddenLogits) {
  constexpr int kVocab = 1000;
  std::uniform_real_distribution<float> dist(-10, 10);
  std::vector<bfloat16> logits(kVocab);
  for (bfloat16& v : logits) v = bfloat16(dist(rng_));
  std::vector<std::uint32_t> allowed((kVocab + 31) / 32);
  for (std::uint32_t& word : allowed) word = static_cast<std::uint32_t>(rng_());
  const CustomKernel kernel("mask", {"logits", "allowed"}, {"out", "bounds"},
                            "uint i = thread_position_in_grid.x;\n"
                            "bool ok = (allowed[i / 32] >> (i % 32)) & 1u;\n"
                            "out[i] = ok ? logits[i] : -metal::numeric_limits<T>::infinity();\n"
                            "if (i == 0) {\n"
                            "  bounds[0] = float(numeric_limits<T>::max());\n"
                            "  bounds[1] = float(numeric_limits<T>::lowest());\n"
                            "  bounds[2] = float(numeric_limits<T>::epsilon());\n"
                            "  bounds[3] = float(numeric_limits<float>::min());\n"
                            "}\n");
  ApplyOptions apply;
  apply.template_args = {{"T", Dtype::BFloat16}};
  apply.init_value = std::numeric_limits<double>::quiet_NaN();
  const std::vector<Array> out =
      kernel.apply({Array::from_data(logits, {kVocab}),
                    Array::from_data(allowed, {std::int64_t(allowed.size())})},
                   {OutputSpec{{kVocab}, Dtype::BFloat16}, OutputSpec{{4}, Dtype::Float32}},
                   Dim3{kVocab}, Dim3{256}, apply);
  const std::vector<bfloat16> got = out[0].to_vector<bfloat16>();
  for (int i = 0; i < kVocab; ++i) {
    const bool ok = ((allowed[i / 32] >> (i % 32)) & 1u) != 0;
    if (ok) {
      ASSERT_EQ(float(got[i]), float(logits[i])) << i;
    } else {
      ASSERT_EQ(float(got[i]), -std::numeric_limits<float>::infinity()) << i;
    }
  }
  const std::vector<float> bounds = out[1].to_vector<float>();
  EXPECT_EQ(bounds[0], 0x1.fep127f);
  EXPECT_EQ(bounds[1], -0x1.fep127f);
  EXPECT_EQ(bounds[2], 0x1p-7f);
  EXPECT_EQ(bounds[3], std::numeric_limits<float>::min());
}

}  // namespace
}  // namespace kreg
