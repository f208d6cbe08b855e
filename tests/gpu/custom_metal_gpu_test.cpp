// Metal's memory and SIMD-group surface in custom kernels on the GPU: threadgroup arrays with
// barriers (with and without threads past the grid), program-scope constant tables and
// helpers from a <metal_stdlib> header, and SIMD-group scans, shuffles and votes against a
// lane-by-lane reference. Outputs are poisoned (init_value NaN) so that an unwritten element
// shows.
#include "test_support.hpp"

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace kreg {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

class CustomMetalGpu : public ::testing::Test {
 protected:
  void SetUp() override { KREG_REQUIRE_GPU(); }

  std::vector<float> random(int n, float lo, float hi) {
    std::uniform_real_distribution<float> dist(lo, hi);
    std::vector<float> out(n);
    for (float& v : out) v = dist(rng_);
    return out;
  }

  // Small whole numbers: sums and products of a warp's worth stay exact in float.
  std::vector<float> small_integers(int n) {
    std::uniform_int_distribution<int> dist(0, 3);
    std::vector<float> out(n);
    for (float& v : out) v = static_cast<float>(dist(rng_));
    return out;
  }

  std::mt19937 rng_{19};
};

std::vector<float> run(const CustomKernel& kernel, const std::vector<float>& a,
                       std::int64_t out_size, unsigned grid, unsigned group) {
  ApplyOptions options;
  options.init_value = kNaN;
  const auto n = static_cast<std::int64_t>(a.size());
  const std::vector<Array> out =
      kernel.apply({Array::from_data(a, {n})}, {OutputSpec{{out_size}, Dtype::Float32}}, Dim3{grid},
                   Dim3{group}, options);
  return out[0].to_vector<float>();
}

TEST_F(CustomMetalGpu, ThreadgroupArrayReversesEachThreadgroup) {
  constexpr int kGroup = 256;
  constexpr int kN = 4 * kGroup;
  const std::vector<float> a = random(kN, -1, 1);
  const CustomKernel kernel("reverse", {"a"}, {"out"},
                            "threadgroup float buf[256];\n"
                            "const uint t = thread_position_in_threadgroup.x;\n"
                            "buf[t] = a[thread_position_in_grid.x];\n"
                            "threadgroup_barrier(mem_flags::mem_threadgroup);\n"
                            "threadgroup float* view = buf;\n"
                            "out[thread_position_in_grid.x] = view[255 - t];\n");
  const std::vector<float> got = run(kernel, a, kN, kN, kGroup);
  for (int i = 0; i < kN; ++i) {
    const int group = i / kGroup;
    const int t = i % kGroup;
    ASSERT_EQ(got[i], a[group * kGroup + kGroup - 1 - t]) << "element " << i;
  }
}

// Threads past the grid return before the body; a barrier then waits only for the threads
// that run it (CUDA GPUs of compute capability 7.0 and later), so the call finishes, and each
// thread that ran sees what the others wrote.
TEST_F(CustomMetalGpu, BarrierWithThreadsPastTheGrid) {
  constexpr int kGroup = 256;
  constexpr int kN = 1000;  // the last threadgroup has 232 threads in the grid
  const std::vector<float> a = random(kN, -1, 1);
  const CustomKernel kernel("partial", {"a"}, {"out"},
                            "threadgroup float buf[256];\n"
                            "const uint t = thread_position_in_threadgroup.x;\n"
                            "buf[t] = a[thread_position_in_grid.x];\n"
                            "threadgroup_barrier(mem_flags::mem_threadgroup);\n"
                            "const uint first = thread_position_in_grid.x - t;\n"
                            "out[thread_position_in_grid.x] = buf[t] + buf[0] + a[first];\n");
  const std::vector<float> got = run(kernel, a, kN, kN, kGroup);
  for (int i = 0; i < kN; ++i) {
    const int first = i - i % kGroup;
    ASSERT_EQ(got[i], a[i] + a[first] + a[first]) << "element " << i;
  }
}

TEST_F(CustomMetalGpu, ConstantTablesAndHelpersFromAMetalHeader) {
  constexpr int kN = 1027;
  const std::vector<float> a = random(kN, -4, 4);
  CustomKernelOptions options;
  options.header =
      "#include <metal_stdlib>\n"
      "using namespace metal;\n"
      "constant float table[4] = {1.0f, -2.0f, 0.5f, 3.0f};\n"
      "inline float scaled(const device float* p, uint i) {\n"
      "  thread float v = p[i] * table[i % 4];\n"
      "  return clamp(v, -5.0f, 5.0f);\n"
      "}\n";
  const CustomKernel kernel("tables", {"a"}, {"out"},
                            "uint i = thread_position_in_grid.x;\n"
                            "out[i] = scaled(a, i);\n",
                            options);
  const std::vector<float> got = run(kernel, a, kN, kN, 128);
  const double table[4] = {1.0, -2.0, 0.5, 3.0};
  for (int i = 0; i < kN; ++i) {
    const double want = std::fmin(std::fmax(double{a[i]} * table[i % 4], -5.0), 5.0);
    ASSERT_NEAR(got[i], want, 1e-6) << "element " << i;
  }
}

TEST_F(CustomMetalGpu, SimdScansShufflesAndVotesLaneByLane) {
  constexpr int kN = 512;
  constexpr int kColumns = 9;
  const std::vector<float> a = small_integers(kN);
  const CustomKernel kernel(
      "lanes", {"a"}, {"out"},
      "uint i = thread_position_in_grid.x;\n"
      "float x = a[i];\n"
      "uint lane = thread_index_in_simdgroup;\n"
      "out[i * 9 + 0] = simd_prefix_inclusive_sum(x);\n"
      "out[i * 9 + 1] = simd_prefix_exclusive_sum(x);\n"
      "out[i * 9 + 2] = simd_prefix_exclusive_product(x + 1.0f);\n"
      "out[i * 9 + 3] = metal::simd_sum(x);\n"
      "out[i * 9 + 4] = simd_shuffle_xor(x, 5);\n"
      "out[i * 9 + 5] = simd_shuffle_rotate_down(x, 3);\n"
      "out[i * 9 + 6] = float((simd_ballot(x > 1.5f) >> lane) & 1);\n"
      "out[i * 9 + 7] = float(simd_any(x > 2.5f)) + 2 * float(simd_all(x < 3.5f));\n"
      "out[i * 9 + 8] = float(simd_or(uint(x)) + 8 * simd_and(uint(x) | 4u));\n");
  const std::vector<float> got = run(kernel, a, std::int64_t{kN} * kColumns, kN, 128);
  for (int i = 0; i < kN; ++i) {
    const int base = i - i % 32;
    const int lane = i % 32;
    double inclusive = 0;
    double product = 1;
    for (int l = 0; l <= lane; ++l) inclusive += a[base + l];
    for (int l = 0; l < lane; ++l) product *= a[base + l] + 1.0;
    double sum = 0;
    bool any = false;
    unsigned bits_or = 0;
    unsigned bits_and = ~0u;
    for (int l = 0; l < 32; ++l) {
      sum += a[base + l];
      any = any || a[base + l] > 2.5f;
      bits_or |= static_cast<unsigned>(a[base + l]);
      bits_and &= static_cast<unsigned>(a[base + l]) | 4u;
    }
    const double want[kColumns] = {inclusive,
                                   inclusive - a[i],
                                   product,
                                   sum,
                                   a[base + (lane ^ 5)],
                                   a[base + (lane + 3) % 32],
                                   a[i] > 1.5f ? 1.0 : 0.0,
                                   (any ? 1.0 : 0.0) + 2.0,
                                   static_cast<double>(bits_or + 8 * bits_and)};
    for (int k = 0; k < kColumns; ++k) {
      ASSERT_EQ(got[i * kColumns + k], want[k]) << "element " << i << ", column " << k;
    }
  }
}

}  // namespace
}  // namespace kreg
