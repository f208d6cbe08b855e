// ops::quantize, ops::dequantize and ops::quantized_matmul on the GPU: the packing read as MLX
// writes it (codes from the low bits up), exactly, through both the dequantize kernel and the
// decode matmul (one-hot rows of x pick single weights out); quantize's codes within half a
// step of the weights they reach (and one step of the far extreme, which mx.quantize's rule
// may leave past the last code), with zero and the group's edge exact; products against a float64
// reference of the same decoded weights, on the decode kernel (m <= 16) and the dequantize +
// matmul path (more rows, a misaligned x). Outputs are poisoned first.
#include "gpu/poison.hpp"
#include "test_support.hpp"

#include <cmath>
#include <random>
#include <tuple>
#include <utility>

namespace kreg {
namespace {

struct Format {
  int group = 64;
  int bits = 4;
};

std::string describe(const Format& f) {
  return std::to_string(f.bits) + " bits, groups of " + std::to_string(f.group);
}

const std::vector<Format>& formats() {
  static const std::vector<Format> all = {{32, 4}, {64, 4}, {128, 4}, {32, 8}, {64, 8}, {128, 8}};
  return all;
}

// A quantized weight built on the host: codes, scales and biases, and what they decode to.
template <class T>
struct HostWeight {
  std::int64_t n = 0;
  std::int64_t k = 0;
  Format format;
  std::vector<std::uint32_t> words;
  std::vector<T> scales;
  std::vector<T> biases;

  unsigned code(std::int64_t r, std::int64_t c) const {
    const int per_word = 32 / format.bits;
    const std::uint32_t word = words[static_cast<std::size_t>((r * k + c) / per_word)];
    return (word >> (format.bits * ((r * k + c) % per_word))) & ((1U << format.bits) - 1U);
  }
  // scale * q + bias rounded once to T, as both kernels decode it.
  double decoded(std::int64_t r, std::int64_t c) const {
    const auto g = static_cast<std::size_t>((r * k + c) / format.group);
    const float s = static_cast<float>(scales[g]);
    const float b = static_cast<float>(biases[g]);
    return static_cast<float>(T(std::fma(s, static_cast<float>(code(r, c)), b)));
  }
  ops::QuantizedWeight upload() const {
    const std::int64_t groups = k / format.group;
    return {Array::from_data(words, {n, k * format.bits / 32}),
            Array::from_data(scales, {n, groups}), Array::from_data(biases, {n, groups}),
            format.group, format.bits};
  }
};

template <class T>
HostWeight<T> random_weight(std::mt19937& rng, std::int64_t n, std::int64_t k, Format f) {
  HostWeight<T> w;
  w.n = n;
  w.k = k;
  w.format = f;
  w.words.resize(static_cast<std::size_t>(n * k * f.bits / 32));
  for (std::uint32_t& word : w.words) word = static_cast<std::uint32_t>(rng());
  // Scales and biases of a few bits, so that every decoded weight is exact in T.
  std::uniform_int_distribution<int> step(1, 8);
  std::uniform_int_distribution<int> offset(-64, 64);
  const auto groups = static_cast<std::size_t>(n * k / f.group);
  for (std::size_t g = 0; g < groups; ++g) {
    w.scales.push_back(T(static_cast<float>(step(rng)) / (f.bits == 4 ? 64.0F : 1024.0F)));
    w.biases.push_back(T(static_cast<float>(offset(rng)) / 64.0F));
  }
  return w;
}

template <class T>
class QuantizedGpu : public ::testing::Test {
 protected:
  void SetUp() override { KREG_REQUIRE_GPU(); }

  // x w^T against float64 over w's decoded values, x random.
  void check_product(const HostWeight<T>& w, std::int64_t m, bool with_bias,
                     std::int64_t x_offset = 0) {
    const auto k = static_cast<std::size_t>(w.k);
    const auto n = static_cast<std::size_t>(w.n);
    const auto rows = static_cast<std::size_t>(m);
    std::vector<T> xv;
    std::vector<double> xd;
    test::random_values(rng_, rows * (k + static_cast<std::size_t>(x_offset)), xv, xd);
    // x_offset > 0: x is columns [x_offset, x_offset + k) of a wider row-major array.
    const Array x_all = Array::from_data(xv, {m, w.k + x_offset});
    const Array x = x_offset == 0 ? x_all : x_all.slice(1, x_offset, x_offset + w.k);
    std::vector<T> bias;
    std::vector<double> bias_d(n, 0.0);
    std::optional<Array> bias_arg;
    if (with_bias) {
      test::random_values(rng_, n, bias, bias_d);
      bias_arg = Array::from_data(bias, {w.n});
    }
    test::poison(rows * n * sizeof(T), 2);
    const Array out = ops::quantized_matmul(x, w.upload(), bias_arg);
    ASSERT_EQ(out.shape(), (Shape{m, w.n}));
    const std::vector<T> got = out.to_vector<T>();
    std::vector<double> dense(n * k);
    for (std::size_t r = 0; r < n; ++r) {
      for (std::size_t c = 0; c < k; ++c) dense[r * k + c] = w.decoded(r, c);
    }
    double err = 0.0;
    double norm = 0.0;
    const std::size_t pitch = k + static_cast<std::size_t>(x_offset);
    for (std::size_t i = 0; i < rows; ++i) {
      for (std::size_t r = 0; r < n; ++r) {
        double want = bias_d[r];
        for (std::size_t c = 0; c < k; ++c) {
          want += xd[i * pitch + static_cast<std::size_t>(x_offset) + c] * dense[r * k + c];
        }
        const double g = static_cast<float>(got[i * n + r]);
        ASSERT_TRUE(std::isfinite(g))
            << describe(w.format) << " m " << m << ": (" << i << ", " << r << ") is " << g;
        err += (g - want) * (g - want);
        norm += want * want;
      }
    }
    const double limit = std::is_same_v<T, half> ? 1e-3 : 6e-3;
    EXPECT_LT(std::sqrt(err / norm), limit)
        << describe(w.format) << ", " << m << " x " << n << " x " << k;
  }

  std::mt19937 rng_{1234};
};

using HalfTypes = ::testing::Types<half, bfloat16>;
TYPED_TEST_SUITE(QuantizedGpu, HalfTypes);

TYPED_TEST(QuantizedGpu, DequantizeReadsMlxsPacking) {
  using T = TypeParam;
  for (const Format& f : formats()) {
    const HostWeight<T> w = random_weight<T>(this->rng_, 5, 256, f);
    test::poison(static_cast<std::size_t>(5 * 256) * sizeof(T), 2);
    const Array dense = ops::dequantize(w.upload());
    const std::vector<T> got = dense.to_vector<T>();
    ASSERT_EQ(got.size(), 5U * 256U);
    for (std::int64_t r = 0; r < 5; ++r) {
      for (std::int64_t c = 0; c < 256; ++c) {
        ASSERT_EQ(static_cast<float>(got[static_cast<std::size_t>(r * 256 + c)]), w.decoded(r, c))
            << describe(f) << " at (" << r << ", " << c << ")";
      }
    }
  }
}

// Each row of x is one-hot, so each element of the product is one decoded weight, exactly:
// any slip in how a lane pairs codes with x's elements shows as a wrong weight.
TYPED_TEST(QuantizedGpu, OneHotRowsPickSingleWeights) {
  using T = TypeParam;
  for (const Format& f : formats()) {
    const std::int64_t n = 40;  // two blocks, the second partial
    const std::int64_t k = 512;
    const HostWeight<T> w = random_weight<T>(this->rng_, n, k, f);
    std::uniform_int_distribution<std::int64_t> column(0, k - 1);
    for (const std::int64_t m : {1, 9, 16}) {
      std::vector<std::int64_t> hot(static_cast<std::size_t>(m));
      std::vector<T> xv(static_cast<std::size_t>(m * k), T(0.0F));
      for (std::int64_t i = 0; i < m; ++i) {
        hot[i] = column(this->rng_);
        xv[static_cast<std::size_t>(i * k + hot[i])] = T(1.0F);
      }
      test::poison(static_cast<std::size_t>(m * n) * sizeof(T), 2);
      const Array out = ops::quantized_matmul(Array::from_data(xv, {m, k}), w.upload());
      const std::vector<T> got = out.to_vector<T>();
      for (std::int64_t i = 0; i < m; ++i) {
        for (std::int64_t r = 0; r < n; ++r) {
          ASSERT_EQ(static_cast<float>(got[static_cast<std::size_t>(i * n + r)]),
                    w.decoded(r, hot[i]))
              << describe(f) << ", m " << m << ": row " << i << " (k " << hot[i] << "), column "
              << r;
        }
      }
    }
  }
}

TYPED_TEST(QuantizedGpu, DecodeRowsAgainstFloat64) {
  for (const Format& f : formats()) {
    const HostWeight<TypeParam> w = random_weight<TypeParam>(this->rng_, 1000, 1024, f);
    for (const std::int64_t m : {1, 7, 16}) this->check_product(w, m, false);
  }
  // 4096 columns: blocks of 32; a bias.
  const HostWeight<TypeParam> wide = random_weight<TypeParam>(this->rng_, 4096, 256, {64, 4});
  this->check_product(wide, 3, true);
}

TYPED_TEST(QuantizedGpu, ManyRowsAndMisalignedRowsTakeTheDequantizedPath) {
  for (const Format& f : {Format{64, 4}, Format{128, 8}}) {
    const HostWeight<TypeParam> w = random_weight<TypeParam>(this->rng_, 136, 384, f);
    this->check_product(w, 17, true);
    this->check_product(w, 70, false);
    this->check_product(w, 2, false, 3);  // x's rows start 3 elements past 16 bytes
  }
}

TYPED_TEST(QuantizedGpu, EmptyProductsGiveEmptyResultsOrTheBias) {
  using T = TypeParam;
  const HostWeight<T> w = random_weight<T>(this->rng_, 24, 128, {64, 4});
  const Array none =
      ops::quantized_matmul(Array::from_data(std::vector<T>{}, {0, 128}), w.upload());
  EXPECT_EQ(none.shape(), (Shape{0, 24}));
  EXPECT_TRUE(none.to_vector<T>().empty());
  // k = 0: the product is zero, and the bias is what remains.
  const ops::QuantizedWeight empty_k{Array::from_data(std::vector<std::uint32_t>{}, {3, 0}),
                                     Array::from_data(std::vector<T>{}, {3, 0}),
                                     Array::from_data(std::vector<T>{}, {3, 0}), 64, 4};
  const std::vector<T> bias = {T(1.0F), T(-2.0F), T(0.5F)};
  const Array out = ops::quantized_matmul(Array::from_data(std::vector<T>{}, {2, 0}), empty_k,
                                          Array::from_data(bias, {3}));
  const std::vector<T> got = out.to_vector<T>();
  ASSERT_EQ(got.size(), 6U);
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(static_cast<float>(got[i]), static_cast<float>(bias[i % 3]));
  }
}

TYPED_TEST(QuantizedGpu, QuantizeIsWithinHalfAStepWithZeroAndTheEdgeExact) {
  using T = TypeParam;
  for (const Format& f : formats()) {
    const std::int64_t n = 37;
    const std::int64_t k = 384;
    std::vector<T> wv;
    std::vector<double> wd;
    test::random_values(this->rng_, static_cast<std::size_t>(n * k), wv, wd);
    // Some exact zeros, and one group of zeros only.
    for (std::size_t i = 0; i < wv.size(); i += 13) wv[i] = T(0.0F);
    for (int i = 0; i < f.group; ++i) wv[static_cast<std::size_t>(k + i)] = T(0.0F);
    test::poison(static_cast<std::size_t>(n * k) / 2, 2);
    const ops::QuantizedWeight q = ops::quantize(Array::from_data(wv, {n, k}), f.group, f.bits);
    ASSERT_EQ(q.weight.shape(), (Shape{n, k * f.bits / 32}));
    ASSERT_EQ(q.scales.shape(), (Shape{n, k / f.group}));
    HostWeight<T> w;
    w.n = n;
    w.k = k;
    w.format = f;
    w.words = q.weight.to_vector<std::uint32_t>();
    w.scales = q.scales.to_vector<T>();
    w.biases = q.biases.to_vector<T>();
    const std::vector<T> back = ops::dequantize(q).to_vector<T>();
    for (std::int64_t g = 0; g < n * k / f.group; ++g) {
      const double s = std::abs(static_cast<float>(w.scales[static_cast<std::size_t>(g)]));
      // The edge, as quantize picks it: the minimum if its magnitude is the larger, else
      // the maximum. It is the bias, with code 0, so it decodes exactly.
      double lo = 0.0;
      double hi = 0.0;
      std::int64_t lo_at = 0;
      std::int64_t hi_at = 0;
      for (std::int64_t i = 0; i < f.group; ++i) {
        const std::int64_t e = g * f.group + i;
        const double x = static_cast<float>(wv[static_cast<std::size_t>(e)]);
        if (i == 0 || x < lo) std::tie(lo, lo_at) = std::pair{x, e};
        if (i == 0 || x > hi) std::tie(hi, hi_at) = std::pair{x, e};
        const double d = w.decoded(e / k, e % k);
        ASSERT_EQ(static_cast<float>(back[static_cast<std::size_t>(e)]), d) << describe(f);
        // Half a step where the codes reach, plus the rounding of the scale and the bias to
        // T. The codes reach from the edge to (2^bits - 1) steps away: making zero exact may
        // shrink the step, so the far extreme can lie up to about one step past the last code.
        const double slack = 0.02 * s * ((1 << f.bits) - 1) + 1e-6;
        const double b = static_cast<float>(w.biases[static_cast<std::size_t>(g)]);
        const double far =
            b + static_cast<float>(w.scales[static_cast<std::size_t>(g)]) * ((1 << f.bits) - 1);
        const bool reached = (x - b) * (x - far) <= 0.0;
        EXPECT_LE(std::abs(d - x), (reached ? 0.5 : 1.05) * s + slack)
            << describe(f) << ", group " << g << ", element " << i;
        if (x == 0.0) EXPECT_LE(std::abs(d), 0.02 * s * ((1 << f.bits) - 1)) << describe(f);
      }
      const std::int64_t edge = std::abs(lo) > std::abs(hi) ? lo_at : hi_at;
      EXPECT_EQ(w.decoded(edge / k, edge % k),
                static_cast<float>(wv[static_cast<std::size_t>(edge)]))
          << describe(f) << ", group " << g;
    }
    // The group of zeros decodes to zeros.
    for (int i = 0; i < f.group; ++i) EXPECT_EQ(w.decoded(1, i), 0.0) << describe(f);
  }
}

}  // namespace
}  // namespace kreg
