// Metal's memory and SIMD-group surface in custom kernels on the GPU: threadgroup arrays with
// barriers (with and without threads past the grid), program-scope constant tables and
// helpers from a <metal_stdlib> header, SIMD-group scans, shuffles and votes against a
// lane-by-lane reference, Metal's vector types (constructors, swizzles read and written,
// arithmetic, math, loads through cast pointers, packed vectors) and simdgroup matrices
// against a float64 reference, and a body written for MLX's cuda_kernel. Outputs are
// poisoned (init_value NaN) so that an unwritten element shows.
#include "test_support.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <iterator>
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

// Within `rel` of the float64 reference, relative to it, or absolute below 1.
void expect_near(const std::vector<float>& got, const std::vector<double>& want, double rel) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    ASSERT_NEAR(got[i], want[i], rel * std::fmax(1.0, std::fabs(want[i]))) << "element " << i;
  }
}

// Runs `body`, which writes `columns` outputs out[i * columns + k] for input a[i], over
// `a`, and compares each row with `reference(i, row)`, which fills it in float64.
template <class Reference>
void expect_rows(const char* name, const std::string& body, const std::vector<float>& a,
                 int columns, double rel, Reference reference) {
  const CustomKernel kernel(name, {"a"}, {"out"}, body);
  const auto n = static_cast<unsigned>(a.size());
  const std::vector<float> got = run(kernel, a, std::int64_t{columns} * n, n, 128);
  std::vector<double> want;
  std::vector<double> row(columns);
  for (unsigned i = 0; i < n; ++i) {
    reference(i, row.data());
    want.insert(want.end(), row.begin(), row.end());
  }
  expect_near(got, want, rel);
}

TEST_F(CustomMetalGpu, VectorConstructorsAndSwizzleReads) {
  const std::vector<float> a = random(1000, -4, 4);
  expect_rows("vector_constructors",
              "uint i = thread_position_in_grid.x;\n"
              "float x = a[i];\n"
              "float4 v = float4(x, 1, 2.0f, 3u);\n"
              "float4 w = float4(v.zw, x, 0);\n"
              "float3 t = float3(v.x, w.yx);\n"
              "float4 b = float4(x * 2);\n"
              "int4 k = int4(float4(x * 3, -x * 3, 2.5f, -2.5f));\n"
              "float4 c = float4(k);\n"
              "float2 s = v.wx + v.xx;\n"
              "float3 u = v.bgr;\n"
              "out[i * 12 + 0] = w.x;\n"
              "out[i * 12 + 1] = w.z;\n"
              "out[i * 12 + 2] = t.y;\n"
              "out[i * 12 + 3] = t.z;\n"
              "out[i * 12 + 4] = b.w;\n"
              "out[i * 12 + 5] = c.x;\n"
              "out[i * 12 + 6] = c.y;\n"
              "out[i * 12 + 7] = c.z + 10 * c.w;\n"
              "out[i * 12 + 8] = s.x;\n"
              "out[i * 12 + 9] = s.y;\n"
              "out[i * 12 + 10] = u.x + 10 * u.z;\n"
              "out[i * 12 + 11] = v[3] + w[2];\n",
              a, 12, 1e-6, [&](unsigned i, double* row) {
                const double x = a[i];
                // int4(float4(...)) truncates toward zero, from the float product.
                const double values[] = {2,
                                         x,
                                         3,
                                         2,
                                         2 * x,
                                         std::trunc(3.0f * a[i]),
                                         std::trunc(-3.0f * a[i]),
                                         2 - 20,
                                         3 + x,
                                         2 * x,
                                         2 + 10 * x,
                                         3 + x};
                std::copy(std::begin(values), std::end(values), row);
              });
}

TEST_F(CustomMetalGpu, VectorSwizzleWrites) {
  constexpr int kThreads = 256;
  const std::vector<float> a = random(4 * kThreads, -4, 4);
  const CustomKernel kernel(
      "swizzle_writes", {"a"}, {"out"},
      "uint i = thread_position_in_grid.x;\n"
      "float4 v = float4(a[4 * i], a[4 * i + 1], a[4 * i + 2], a[4 * i + 3]);\n"
      "v.xy = v.yx;\n"
      "v.zw += 1.0f;\n"
      "v.b *= 2;\n"
      "v.rgb = v.gbr;\n"
      "v.w = -v.w;\n"
      "float4 u = float4(0);\n"
      "u.zw = v.zw;\n"  // the same swizzle of another vector
      "u.x = 7;\n"
      "for (int k = 0; k < 4; ++k) {\n"
      "  out[8 * i + k] = v[k];\n"
      "  out[8 * i + 4 + k] = u[k];\n"
      "}\n");
  const std::vector<float> got = run(kernel, a, std::int64_t{8} * kThreads, kThreads, 64);
  std::vector<double> want;
  for (std::size_t i = 0; i < kThreads; ++i) {
    const double a0 = a[4 * i];
    const double a1 = a[4 * i + 1];
    const double a2 = a[4 * i + 2];
    const double a3 = a[4 * i + 3];
    // xy = yx: (a1, a0, a2, a3); zw += 1; b *= 2: (a1, a0, 2(a2 + 1), a3 + 1);
    // rgb = gbr: (a0, 2(a2 + 1), a1, a3 + 1); w = -w.
    const double v[4] = {a0, 2 * (a2 + 1), a1, -(a3 + 1)};
    const double u[4] = {7, 0, v[2], v[3]};
    want.insert(want.end(), v, v + 4);
    want.insert(want.end(), u, u + 4);
  }
  expect_near(got, want, 1e-6);
}

// A copied swizzle keeps the components it read, even after the vector changes; a swizzle
// of a swizzle picks from the picked components.
TEST_F(CustomMetalGpu, CopiedSwizzlesAndSwizzlesOfSwizzles) {
  const std::vector<float> a = random(1000, -4, 4);
  expect_rows("swizzle_copies",
              "uint i = thread_position_in_grid.x;\n"
              "float x = a[i];\n"
              "float4 v = float4(x, 2 * x, 3, 4);\n"
              "auto s = v.zx;\n"
              "v = float4(0);\n"
              "float2 t = s;\n"
              "float4 w = float4(x, 1, 2, 3);\n"
              "w.xyz.zx = float2(5, 6);\n"  // w.zx: z = 5, x = 6
              "out[i * 6 + 0] = t.x;\n"
              "out[i * 6 + 1] = t.y;\n"
              "out[i * 6 + 2] = w.xy.y;\n"
              "out[i * 6 + 3] = w.wzyx.xy.y + w.x;\n"
              "out[i * 6 + 4] = w.xyz.yx.y;\n"
              "out[i * 6 + 5] = v.x + w.z;\n",
              a, 6, 1e-6, [&](unsigned i, double* row) {
                const double x = a[i];
                const double values[] = {3, x, 1, 5 + 6, 6, 5};
                std::copy(std::begin(values), std::end(values), row);
              });
}

TEST_F(CustomMetalGpu, VectorArithmeticAndComparisons) {
  const std::vector<float> a = random(1000, 0.5f, 4);
  expect_rows("vector_arithmetic",
              "uint i = thread_position_in_grid.x;\n"
              "float x = a[i];\n"
              "float4 v = float4(x, 2 * x, -x, 1);\n"
              "float4 w = float4(1, x, 3, x * x);\n"
              "float4 r = (v + w) * 2.0f - v / w + 1.5f * v - 1;\n"
              "r += w; r -= 0.25f; r *= float4(1, 2, 3, 4); r /= 2;\n"
              "r = -r;\n"
              "bool4 m = v < w;\n"
              "float4 picked = select(v, w, m);\n"
              "int4 q = int4(int(i), int(i) + 1, 2 * int(i), 7);\n"
              "q = (q % 5) * 3 + (q << 2) - (q & 6) + (q ^ 1);\n"
              "for (int k = 0; k < 4; ++k) {\n"
              "  out[i * 12 + k] = r[k];\n"
              "  out[i * 12 + 4 + k] = picked[k];\n"
              "  out[i * 12 + 8 + k] = float(q[k]);\n"
              "}\n",
              a, 12, 1e-5, [&](unsigned i, double* row) {
                const double x = a[i];
                const double v[4] = {x, 2 * x, -x, 1};
                const double w[4] = {1, x, 3, x * x};
                const int n = static_cast<int>(i);
                const int q0[4] = {n, n + 1, 2 * n, 7};
                for (int k = 0; k < 4; ++k) {
                  const double r = (v[k] + w[k]) * 2 - v[k] / w[k] + 1.5 * v[k] - 1;
                  row[k] = -((r + w[k] - 0.25) * (k + 1) / 2);
                  // Metal compares the float values; x * x rounds in float first.
                  const float wf = k == 3 ? a[i] * a[i] : static_cast<float>(w[k]);
                  row[4 + k] = static_cast<float>(v[k]) < wf ? wf : v[k];
                  const int q = q0[k];
                  row[8 + k] = (q % 5) * 3 + (q << 2) - (q & 6) + (q ^ 1);
                }
              });
}

TEST_F(CustomMetalGpu, VectorLoadsAndStoresThroughCastPointers) {
  constexpr int kVectors = 1024;
  const std::vector<float> a = small_integers(4 * kVectors);
  const CustomKernel float4s("float4_copy", {"a"}, {"out"},
                             "uint i = thread_position_in_grid.x;\n"
                             "float4 v = ((const device float4*)a)[i];\n"
                             "((device float4*)out)[i] = v.wzyx * 2.0f + float4(0, 1, 2, 3);\n");
  const std::vector<float> got = run(float4s, a, std::int64_t{4} * kVectors, kVectors, 128);
  for (int i = 0; i < kVectors; ++i) {
    for (int k = 0; k < 4; ++k) {
      ASSERT_EQ(got[4 * i + k], 2 * a[4 * i + 3 - k] + k) << "vector " << i << ", " << k;
    }
  }
  const CustomKernel float3s("float3_read", {"a"}, {"out"},
                             "uint i = thread_position_in_grid.x;\n"
                             "const device float3* p = (const device float3*)a;\n"
                             "float3 v = p[i];\n"
                             "out[i] = v.x + 10 * v.z + 100 * float(sizeof(float3));\n");
  const std::vector<float> three = run(float3s, a, kVectors, kVectors, 128);
  for (std::size_t i = 0; i < kVectors; ++i) {
    ASSERT_EQ(three[i], a[4 * i] + 10 * a[4 * i + 2] + 1600) << "vector " << i;
  }
}

// packed_float3 is 12 bytes: element i of a packed buffer starts at float 3 * i, where a
// float3 buffer's would start at 4 * i.
TEST_F(CustomMetalGpu, PackedVectorsReadAndWriteUnpaddedTriples) {
  constexpr int kTriples = 1000;
  const std::vector<float> a = random(3 * kTriples, -2, 2);
  const CustomKernel packed("packed_triples", {"a"}, {"out"},
                            "uint i = thread_position_in_grid.x;\n"
                            "const device packed_float3* p = (const device packed_float3*)a;\n"
                            "packed_float3 q = p[i];\n"
                            "float3 f = q;\n"
                            "metal::packed_float3 r = f.zxy * 2.0f + q;\n"
                            "r.y += 1.0f;\n"
                            "((device packed_float3*)out)[i] = r;\n");
  const std::vector<float> got = run(packed, a, std::int64_t{3} * kTriples, kTriples, 128);
  for (int i = 0; i < kTriples; ++i) {
    const float* q = &a[std::size_t{3} * i];
    const double want[3] = {2.0 * q[2] + q[0], 2.0 * q[0] + q[1] + 1.0, 2.0 * q[1] + q[2]};
    for (int k = 0; k < 3; ++k) {
      ASSERT_NEAR(got[3 * i + k], want[k], 1e-5) << "triple " << i << ", " << k;
    }
  }
}

TEST_F(CustomMetalGpu, VectorMathAndGeometry) {
  const std::vector<float> a = random(1000, -2, 2);
  expect_rows("vector_math",
              "uint i = thread_position_in_grid.x;\n"
              "float4 v = float4(a[i], a[i] * 0.5f - 1, 2, -a[i]);\n"
              "float3 d = v.xyz;\n"
              "out[i * 8 + 0] = dot(v, v);\n"
              "out[i * 8 + 1] = length(d);\n"
              "out[i * 8 + 2] = normalize(d).y;\n"
              "out[i * 8 + 3] = cross(d, float3(0, 0, 1)).x;\n"
              "out[i * 8 + 4] = clamp(v, -1.0f, 1.0f).w;\n"
              "out[i * 8 + 5] = max(v, 0.5f).y + min(v, float4(1)).x;\n"
              "out[i * 8 + 6] = exp(v).y;\n"
              "out[i * 8 + 7] = distance(v.xy, float2(1, 2));\n",
              a, 8, 1e-5, [&](unsigned i, double* row) {
                const double x = a[i];
                const double v[4] = {x, x * 0.5 - 1, 2, -x};
                const double len3 = std::sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
                const double values[] = {v[0] * v[0] + v[1] * v[1] + v[2] * v[2] + v[3] * v[3],
                                         len3,
                                         v[1] / len3,
                                         v[1],
                                         std::fmin(std::fmax(v[3], -1.0), 1.0),
                                         std::fmax(v[1], 0.5) + std::fmin(v[0], 1.0),
                                         std::exp(v[1]),
                                         std::hypot(v[0] - 1, v[1] - 2)};
                std::copy(std::begin(values), std::end(values), row);
              });
}

TEST_F(CustomMetalGpu, ThreadPositionsAsMetalVectors) {
  constexpr unsigned kWidth = 37;
  constexpr unsigned kHeight = 5;
  const CustomKernel kernel(
      "positions", {"a"}, {"out"},
      "uint3 pos = thread_position_in_grid;\n"
      "uint2 xy = pos.xy;\n"
      "uint3 size = threads_per_grid;\n"
      "out[pos.y * size.x + pos.x] =\n"
      "    float(xy.x * 1000 + xy.y) + float(uint2(pos.yx).y == xy.x) + a[0];\n");
  ApplyOptions options;
  options.init_value = kNaN;
  const std::vector<Array> out =
      kernel.apply({Array::from_data(std::vector<float>{0.0f}, {1})},
                   {OutputSpec{{std::int64_t{kWidth} * kHeight}, Dtype::Float32}},
                   Dim3{kWidth, kHeight}, Dim3{16, 4}, options);
  const std::vector<float> got = out[0].to_vector<float>();
  for (unsigned y = 0; y < kHeight; ++y) {
    for (unsigned x = 0; x < kWidth; ++x) {
      ASSERT_EQ(got[y * kWidth + x], static_cast<float>(x * 1000 + y + 1)) << x << ", " << y;
    }
  }
}

TEST_F(CustomMetalGpu, HalfVectorsRoundEachComponent) {
  constexpr int kVectors = 256;
  const std::vector<float> a = random(4 * kVectors, -4, 4);
  const CustomKernel kernel("half_vectors", {"a"}, {"out"},
                            "uint i = thread_position_in_grid.x;\n"
                            "half4 h = half4(((const device float4*)a)[i]);\n"
                            "((device float4*)out)[i] = float4(h * h);\n");
  const std::vector<float> got = run(kernel, a, std::int64_t{4} * kVectors, kVectors, 64);
  for (int i = 0; i < 4 * kVectors; ++i) {
    const float h = static_cast<float>(kreg::half(a[i]));
    ASSERT_EQ(got[i], static_cast<float>(kreg::half(h * h))) << "element " << i;
  }
}

// Metal's usual arithmetic conversions in conditionals: a `half` meets a `float` as a float,
// an integer meets a `half` as a half, and same-typed operands stay as they are.
TEST_F(CustomMetalGpu, ConditionalsMixingHalfAndFloat) {
  constexpr int kN = 1024;
  const std::vector<float> a = random(kN, -8, 8);
  const CustomKernel kernel("mixed_conditionals", {"a"}, {"out"},
                            "uint i = thread_position_in_grid.x;\n"
                            "half h = half(a[i]);\n"
                            "float f = a[i] * 3.0f;\n"
                            "switch (i % 4) {\n"
                            "  case 0: out[i] = i % 8 == 0 ? f : h; break;\n"
                            "  case 1: out[i] = h > 0 ? h : 0.25f; break;\n"
                            "  case 2: { half z = h < 0 ? h : 2; out[i] = z - 1; break; }\n"
                            "  default: { auto w = i % 8 == 3 ? h : f; out[i] = w / 3.0f; }\n"
                            "}\n");
  const std::vector<float> got = run(kernel, a, kN, kN, 128);
  for (int i = 0; i < kN; ++i) {
    const auto h = static_cast<float>(kreg::half(a[i]));
    const float f = a[i] * 3.0f;
    float want = 0;
    switch (i % 4) {
      case 0: want = i % 8 == 0 ? f : h; break;
      case 1: want = h > 0 ? h : 0.25f; break;
      case 2: {
        const float z = h < 0 ? h : 2.0f;
        want = z - 1;  // z is a half, exact for these values
        break;
      }
      default: want = (i % 8 == 3 ? h : f) / 3.0f;  // `w` is a float, not a half
    }
    ASSERT_EQ(got[i], want) << "element " << i;
  }
}

// Metal's simdgroup_matrix: four SIMD-groups each compute one 8x8 tile of a 16x16 product
// A * B plus 0.5 on each tile's diagonal, over two steps of k, against a float64 reference.
TEST_F(CustomMetalGpu, SimdgroupMatricesMultiplyTiles) {
  constexpr int kN = 16;
  const std::vector<float> a = random(kN * kN, -2, 2);
  const std::vector<float> b = random(kN * kN, -2, 2);
  const CustomKernel kernel("tiles", {"a", "b"}, {"c"},
                            "uint sg = simdgroup_index_in_threadgroup;\n"
                            "uint row = (sg / 2) * 8, col = (sg % 2) * 8;\n"
                            "simdgroup_float8x8 acc = simdgroup_float8x8(0.5f);\n"
                            "simdgroup_float8x8 x, y;\n"
                            "for (uint k = 0; k < 16; k += 8) {\n"
                            "  simdgroup_load(x, a + row * 16 + k, 16);\n"
                            "  simdgroup_load(y, b, 16, ulong2(col, k));\n"
                            "  simdgroup_multiply_accumulate(acc, x, y, acc);\n"
                            "}\n"
                            "simdgroup_store(acc, c + row * 16 + col, 16);\n");
  ApplyOptions options;
  options.init_value = kNaN;
  const std::vector<Array> out =
      kernel.apply({Array::from_data(a, {kN, kN}), Array::from_data(b, {kN, kN})},
                   {OutputSpec{{kN, kN}, Dtype::Float32}}, Dim3{128}, Dim3{128}, options);
  const std::vector<float> got = out[0].to_vector<float>();
  std::vector<double> want(std::size_t{kN} * kN);
  for (int i = 0; i < kN; ++i) {
    for (int j = 0; j < kN; ++j) {
      double sum = i % 8 == j % 8 ? 0.5 : 0.0;  // each tile starts from 0.5 I
      for (int k = 0; k < kN; ++k) sum += double(a[i * kN + k]) * b[k * kN + j];
      want[i * kN + j] = sum;
    }
  }
  expect_near(got, want, 1e-5);
}

// Each lane holds the elements Metal's hardware gives it; transposed loads and stores, an
// origin, a filled matrix and simdgroup_multiply.
TEST_F(CustomMetalGpu, SimdgroupMatrixLayoutTransposeAndOrigin) {
  constexpr int kN = 16;
  std::vector<float> a(std::size_t{kN} * kN);
  for (int i = 0; i < kN * kN; ++i) a[i] = static_cast<float>(i);
  const CustomKernel kernel(
      "matrix_layout", {"a"}, {"out"},
      "uint lane = thread_index_in_simdgroup;\n"
      "simdgroup_float8x8 m;\n"
      "simdgroup_load(m, a, 16);\n"
      "out[lane * 2] = m.thread_elements()[0];\n"
      "out[lane * 2 + 1] = m.thread_elements()[1];\n"
      "simdgroup_float8x8 t;\n"
      "simdgroup_load(t, a, 16, ulong2(8, 0), true);\n"  // the transpose of a[0:8, 8:16]
      "simdgroup_store(t, out + 64, 8);\n"
      "simdgroup_store(m, out + 128, 8, ulong2(0, 0), true);\n"
      "simdgroup_float8x8 ones = make_filled_simdgroup_matrix<float, 8, 8>(1.0f);\n"
      "simdgroup_float8x8 p;\n"
      "simdgroup_multiply(p, m, ones);\n"  // row sums of m in every column
      "simdgroup_store(p, out + 192, 8);\n");
  const std::vector<float> got = run(kernel, a, 256, 32, 32);
  for (int lane = 0; lane < 32; ++lane) {
    const int row = ((lane >> 4) & 1) * 4 + ((lane >> 1) & 3);
    const int col = ((lane >> 3) & 1) * 4 + (lane & 1) * 2;
    ASSERT_EQ(got[std::size_t{2} * lane], a[row * kN + col]) << "lane " << lane;
    ASSERT_EQ(got[lane * 2 + 1], a[row * kN + col + 1]) << "lane " << lane;
  }
  for (int r = 0; r < 8; ++r) {
    double row_sum = 0;
    for (int c = 0; c < 8; ++c) row_sum += a[r * kN + c];
    for (int c = 0; c < 8; ++c) {
      ASSERT_EQ(got[64 + r * 8 + c], a[c * kN + 8 + r]) << r << ", " << c;
      ASSERT_EQ(got[128 + r * 8 + c], a[c * kN + r]) << r << ", " << c;
      ASSERT_EQ(got[192 + r * 8 + c], row_sum) << r << ", " << c;
    }
  }
}

// bfloat16 matrices accumulate into a float matrix, and the result goes back to bfloat16
// through thread_elements(), as quantized-matmul kernels written for MLX do.
TEST_F(CustomMetalGpu, SimdgroupMatricesOfBfloat16AccumulateInFloat) {
  const std::vector<float> values = random(64, -2, 2);
  std::vector<kreg::bfloat16> a(values.begin(), values.end());
  const CustomKernel kernel(
      "bf16_tiles", {"a"}, {"out"},
      "simdgroup_matrix<T, 8, 8> x;\n"
      "simdgroup_matrix<float, 8, 8> acc = simdgroup_matrix<float, 8, 8>(0);\n"
      "simdgroup_load(x, a, 8);\n"
      "simdgroup_multiply_accumulate(acc, x, x, acc);\n"
      "simdgroup_matrix<T, 8, 8> r;\n"
      "r.thread_elements()[0] = T(acc.thread_elements()[0]);\n"
      "r.thread_elements()[1] = T(acc.thread_elements()[1]);\n"
      "simdgroup_store(r, out, 8);\n");
  ApplyOptions options;
  options.template_args = {{"T", Dtype::BFloat16}};
  options.init_value = kNaN;
  const std::vector<Array> out =
      kernel.apply({Array::from_data(a, {8, 8})}, {OutputSpec{{8, 8}, Dtype::BFloat16}}, Dim3{32},
                   Dim3{32}, options);
  const std::vector<kreg::bfloat16> got = out[0].to_vector<kreg::bfloat16>();
  for (int i = 0; i < 8; ++i) {
    for (int j = 0; j < 8; ++j) {
      double sum = 0;
      for (int k = 0; k < 8; ++k) sum += double(float(a[i * 8 + k])) * float(a[k * 8 + j]);
      // One rounding to bfloat16 (8 bits of precision) after a float sum.
      ASSERT_NEAR(float(got[i * 8 + j]), sum, std::fmax(1.0, std::fabs(sum)) / 128)
          << i << ", " << j;
    }
  }
}

// A body written for MLX's cuda_kernel: cooperative groups, a scalar input read as d[0],
// WARP_SIZE, and shape and strides through .data(), over a transposed input.
TEST_F(CustomMetalGpu, BodiesWrittenForMlxCudaKernels) {
  constexpr int kRows = 24;
  constexpr int kCols = 40;
  const std::vector<float> values = random(kRows * kCols, -2, 2);
  const Array inp = Array::from_data(values, {kRows, kCols}).transpose();
  CustomKernelOptions definition;
  definition.ensure_row_contiguous = false;
  const CustomKernel kernel(
      "cuda_style", {"inp", "d"}, {"out"},
      "auto elem = cooperative_groups::this_grid().thread_rank();\n"
      "auto loc = elem_to_loc(elem, inp_shape.data(), inp_strides.data(), inp_ndim);\n"
      "out[elem] = inp[loc] * d[0] + WARP_SIZE;\n",
      definition);
  ApplyOptions options;
  options.init_value = kNaN;
  const std::vector<Array> out = kernel.apply({inp, Array::from_data(std::vector<float>{4.0f}, {})},
                                              {OutputSpec{{kCols, kRows}, Dtype::Float32}},
                                              Dim3{kRows * kCols}, Dim3{64}, options);
  const std::vector<float> got = out[0].to_vector<float>();
  for (int i = 0; i < kCols; ++i) {
    for (int j = 0; j < kRows; ++j) {
      ASSERT_EQ(got[i * kRows + j], values[j * kCols + i] * 4.0f + 32) << i << ", " << j;
    }
  }
}

// MLX's Limits<T>, the identities its reductions start from, for float, half, bfloat16 and int.
TEST_F(CustomMetalGpu, MlxLimitsHoldEachTypesBounds) {
  const CustomKernel kernel("limits", {"a"}, {"out"},
                            "uint i = thread_position_in_grid.x;\n"
                            "if (i > 0) return;\n"
                            "out[0] = Limits<float>::max;\n"
                            "out[1] = Limits<float>::finite_min;\n"
                            "out[2] = float(Limits<half>::finite_max);\n"
                            "out[3] = float(Limits<half>::min);\n"
                            "out[4] = float(Limits<bfloat>::finite_max);\n"
                            "out[5] = float(Limits<int>::min);\n"
                            "out[6] = float(Limits<uint8_t>::max);\n"
                            "out[7] = float(Limits<bool>::max) + a[0];\n");
  const std::vector<float> got = run(kernel, std::vector<float>(8, 0.0f), 8, 1, 32);
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> want = {inf,
                                   -std::numeric_limits<float>::max(),
                                   65504,
                                   -inf,
                                   static_cast<float>(kreg::bfloat16::from_bits(0x7f7f)),
                                   -2147483648.0f,
                                   255,
                                   1};
  for (int i = 0; i < 8; ++i) ASSERT_EQ(got[i], want[i]) << "element " << i;
}

// As under Metal's dispatchThreads, a threadgroup at the edge of the grid counts only its own
// threads; the dispatch_ attributes keep the size the launch asked for.
TEST_F(CustomMetalGpu, AnEdgeThreadgroupCountsOnlyItsThreads) {
  const CustomKernel kernel("edge_group", {"a"}, {"out"},
                            "uint i = thread_position_in_grid.x;\n"
                            "out[i] = a[i] + threads_per_threadgroup.x * 1000 +\n"
                            "         dispatch_threads_per_threadgroup.x * 10 +\n"
                            "         simdgroups_per_threadgroup;\n");
  const std::vector<float> got = run(kernel, std::vector<float>(72, 0.0f), 72, 72, 64);
  for (int i = 0; i < 72; ++i) {
    const float want = i < 64 ? 64 * 1000 + 640 + 2 : 8 * 1000 + 640 + 1;
    ASSERT_EQ(got[i], want) << "element " << i;
  }
}

// complex64 inputs and outputs with MLX's complex64_t arithmetic, against std::complex<double>.
TEST_F(CustomMetalGpu, Complex64ArithmeticMatchesAComplexReference) {
  constexpr int kN = 512;
  const std::vector<float> re = random(2 * kN, -2, 2);
  std::vector<std::complex<float>> z(kN);
  std::vector<float> k(kN);
  for (int i = 0; i < kN; ++i) {
    z[i] = {re[std::size_t{2} * i], re[std::size_t{2} * i + 1]};
    k[i] = re[(7 * i) % (2 * kN)] + 3.0f;  // away from zero: it divides
  }
  const CustomKernel kernel("complex_ops", {"z", "k"}, {"out", "mag"},
                            "uint i = thread_position_in_grid.x;\n"
                            "complex64_t w = z[i] * complex64_t(k[i]) + z[(i + 1) % 512];\n"
                            "out[i] = w * conj(z[i]) / complex64_t(k[i], 1.0f);\n"
                            "mag[i] = abs(w);\n");
  ApplyOptions options;
  options.init_value = kNaN;
  const std::vector<Array> out =
      kernel.apply({Array::from_data(z, {kN}), Array::from_data(k, {kN})},
                   {OutputSpec{{kN}, Dtype::Complex64}, OutputSpec{{kN}, Dtype::Float32}}, Dim3{kN},
                   Dim3{128}, options);
  const std::vector<std::complex<float>> got = out[0].to_vector<std::complex<float>>();
  const std::vector<float> mag = out[1].to_vector<float>();
  for (int i = 0; i < kN; ++i) {
    const std::complex<double> zi(z[i]);
    const std::complex<double> w = zi * double(k[i]) + std::complex<double>(z[(i + 1) % kN]);
    const std::complex<double> want = w * std::conj(zi) / std::complex<double>(k[i], 1.0);
    const double tolerance = 1e-5 * std::fmax(1.0, std::abs(want));
    ASSERT_NEAR(got[i].real(), want.real(), tolerance) << "element " << i;
    ASSERT_NEAR(got[i].imag(), want.imag(), tolerance) << "element " << i;
    ASSERT_NEAR(mag[i], std::abs(w), 1e-5 * std::fmax(1.0, std::abs(w))) << "element " << i;
  }
}

}  // namespace
}  // namespace kreg
