// ops::ggml_matmul on the GPU, for both of llama.cpp's formats it reads (Q8_0, Q4_K) and both
// 16-bit dtypes of x: one-hot rows of x pick single weights out, exactly as llama.cpp's
// dequantize_row computes them (any slip in which code, scale or min a lane pairs with x's
// elements shows as a wrong weight); products against a float64 reference of the same decoded
// weights, for m from 1 to 40 (several passes over w), odd n and batched x. Outputs are
// poisoned first.
#include "gpu/poison.hpp"
#include "test_support.hpp"

#include <cmath>
#include <cstring>
#include <random>

namespace kreg {
namespace {

using ops::GgmlFormat;

const char* name(GgmlFormat f) {
  return f == GgmlFormat::Q8_0 ? "Q8_0" : "Q4_K";
}

// A weight in a GGML format built on the host, and what each of its weights decodes to in
// float, written the way llama.cpp's dequantize_row walks a block.
struct HostGgml {
  std::int64_t n = 0;
  std::int64_t k = 0;
  GgmlFormat format = GgmlFormat::Q8_0;
  std::int64_t row_bytes = 0;
  std::vector<std::uint8_t> bytes;
  std::vector<float> decoded;  // [n, k]

  ops::GgmlWeight upload() const { return {Array::from_data(bytes, {n, row_bytes}), format}; }
};

float half_at(const std::uint8_t* p) {
  std::uint16_t bits = 0;
  std::memcpy(&bits, p, 2);
  return static_cast<float>(half::from_bits(bits));
}

// A float16 of a few significant bits, so that sums stay far from rounding trouble.
void put_half(std::uint8_t* p, float value) {
  const std::uint16_t bits = half(value).bits;
  std::memcpy(p, &bits, 2);
}

HostGgml random_ggml(std::mt19937& rng, std::int64_t n, std::int64_t k, GgmlFormat format) {
  HostGgml w;
  w.n = n;
  w.k = k;
  w.format = format;
  w.row_bytes = ops::ggml_row_bytes(format, k);
  w.bytes.resize(static_cast<std::size_t>(n * w.row_bytes));
  for (std::uint8_t& b : w.bytes) b = static_cast<std::uint8_t>(rng());
  std::uniform_int_distribution<int> steps(1, 16);
  w.decoded.resize(static_cast<std::size_t>(n * k));
  for (std::int64_t r = 0; r < n; ++r) {
    std::uint8_t* row = w.bytes.data() + r * w.row_bytes;
    float* out = w.decoded.data() + r * k;
    if (format == GgmlFormat::Q8_0) {
      for (std::int64_t b = 0; b < k / 32; ++b) {
        std::uint8_t* block = row + 34 * b;
        put_half(block, static_cast<float>(steps(rng)) / 2048.0F);
        const float d = half_at(block);
        for (int l = 0; l < 32; ++l) {
          *out++ = d * static_cast<float>(static_cast<std::int8_t>(block[2 + l]));
        }
      }
      continue;
    }
    for (std::int64_t b = 0; b < k / 256; ++b) {
      std::uint8_t* block = row + 144 * b;
      put_half(block, static_cast<float>(steps(rng)) / 4096.0F);
      put_half(block + 2, static_cast<float>(steps(rng)) / 8192.0F);
      const float d = half_at(block);
      const float dmin = half_at(block + 2);
      const std::uint8_t* s = block + 4;
      const auto scale_min = [s](int j, int& sc, int& m) {
        if (j < 4) {
          sc = s[j] & 63;
          m = s[j + 4] & 63;
        } else {
          sc = (s[j + 4] & 0x0f) | ((s[j - 4] >> 6) << 4);
          m = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
        }
      };
      const std::uint8_t* q = block + 16;
      for (int chunk = 0; chunk < 4; ++chunk, q += 32) {
        int sc1 = 0;
        int m1 = 0;
        int sc2 = 0;
        int m2 = 0;
        scale_min(2 * chunk, sc1, m1);
        scale_min(2 * chunk + 1, sc2, m2);
        const float d1 = d * static_cast<float>(sc1);
        const float o1 = dmin * static_cast<float>(m1);
        const float d2 = d * static_cast<float>(sc2);
        const float o2 = dmin * static_cast<float>(m2);
        for (int l = 0; l < 32; ++l) *out++ = d1 * static_cast<float>(q[l] & 0x0f) - o1;
        for (int l = 0; l < 32; ++l) *out++ = d2 * static_cast<float>(q[l] >> 4) - o2;
      }
    }
  }
  return w;
}

template <class T>
class GgmlGpu : public ::testing::Test {
 protected:
  void SetUp() override { KREG_REQUIRE_GPU(); }

  // x w^T for x of `batch` [m, k] blocks, against float64 over w's decoded weights.
  void check_product(const HostGgml& w, std::int64_t m, std::int64_t batch = 1) {
    const auto k = static_cast<std::size_t>(w.k);
    const auto n = static_cast<std::size_t>(w.n);
    const auto rows = static_cast<std::size_t>(batch * m);
    std::vector<T> xv;
    std::vector<double> xd;
    test::random_values(rng_, rows * k, xv, xd);
    const Array x =
        batch == 1 ? Array::from_data(xv, {m, w.k}) : Array::from_data(xv, {batch, m, w.k});
    test::poison(rows * n * sizeof(T), 2);
    const Array out = ops::ggml_matmul(x, w.upload());
    ASSERT_EQ(out.shape(), batch == 1 ? (Shape{m, w.n}) : (Shape{batch, m, w.n}));
    const std::vector<T> got = out.to_vector<T>();
    double err = 0.0;
    double norm = 0.0;
    for (std::size_t i = 0; i < rows; ++i) {
      for (std::size_t r = 0; r < n; ++r) {
        double want = 0.0;
        for (std::size_t c = 0; c < k; ++c) want += xd[i * k + c] * w.decoded[r * k + c];
        const double g = static_cast<float>(got[i * n + r]);
        ASSERT_TRUE(std::isfinite(g))
            << name(w.format) << " m " << m << ": (" << i << ", " << r << ") is " << g;
        err += (g - want) * (g - want);
        norm += want * want;
      }
    }
    const double limit = std::is_same_v<T, half> ? 1e-3 : 6e-3;
    EXPECT_LT(std::sqrt(err / norm), limit)
        << name(w.format) << ", " << batch << " x " << m << " x " << n << " x " << k;
  }

  std::mt19937 rng_{4321};
};

using HalfTypes = ::testing::Types<half, bfloat16>;
TYPED_TEST_SUITE(GgmlGpu, HalfTypes);

TYPED_TEST(GgmlGpu, OneHotRowsPickSingleWeightsAsLlamaCppDecodesThem) {
  using T = TypeParam;
  for (const GgmlFormat f : {GgmlFormat::Q8_0, GgmlFormat::Q4_K}) {
    const std::int64_t n = 21;    // blocks of 8 and of 16 columns, the last partial
    const std::int64_t k = 2048;  // 64 Q8_0 blocks a row (two steps of a warp), 8 Q4_K blocks
    const HostGgml w = random_ggml(this->rng_, n, k, f);
    std::uniform_int_distribution<std::int64_t> column(0, k - 1);
    for (const std::int64_t m : {1, 16, 19}) {
      std::vector<std::int64_t> hot(static_cast<std::size_t>(m));
      std::vector<T> xv(static_cast<std::size_t>(m * k), T(0.0F));
      for (std::int64_t i = 0; i < m; ++i) {
        hot[i] = column(this->rng_);
        xv[static_cast<std::size_t>(i * k + hot[i])] = T(1.0F);
      }
      test::poison(static_cast<std::size_t>(m * n) * sizeof(T), 2);
      const std::vector<T> got =
          ops::ggml_matmul(Array::from_data(xv, {m, k}), w.upload()).template to_vector<T>();
      for (std::int64_t i = 0; i < m; ++i) {
        for (std::int64_t r = 0; r < n; ++r) {
          const auto want =
              static_cast<float>(T(w.decoded[static_cast<std::size_t>(r * k + hot[i])]));
          ASSERT_EQ(static_cast<float>(got[static_cast<std::size_t>(i * n + r)]), want)
              << name(f) << ", m " << m << ": row " << i << " (k " << hot[i] << "), column " << r;
        }
      }
    }
  }
}

TYPED_TEST(GgmlGpu, ProductsAgainstFloat64) {
  for (const GgmlFormat f : {GgmlFormat::Q8_0, GgmlFormat::Q4_K}) {
    const HostGgml w = random_ggml(this->rng_, 333, 4096, f);
    for (const std::int64_t m : {1, 7, 16, 17, 40}) this->check_product(w, m);
    this->check_product(w, 3, 2);  // batched x [2, 3, k]
  }
  // One block a row; one column; rows whose blocks do not fill a warp's last step (a step is
  // 1024 weights), with one and with more rows of x.
  for (const std::int64_t m : {1, 5}) {
    this->check_product(random_ggml(this->rng_, 64, 32, GgmlFormat::Q8_0), m);
    this->check_product(random_ggml(this->rng_, 1, 256, GgmlFormat::Q4_K), m);
    this->check_product(random_ggml(this->rng_, 37, 4128, GgmlFormat::Q8_0), m);
    this->check_product(random_ggml(this->rng_, 37, 2304, GgmlFormat::Q4_K), m);
  }
}

TYPED_TEST(GgmlGpu, NoRowsIsAnEmptyResult) {
  using T = TypeParam;
  const HostGgml w = random_ggml(this->rng_, 9, 256, GgmlFormat::Q4_K);
  const Array out = ops::ggml_matmul(Array::from_data(std::vector<T>{}, {0, 256}), w.upload());
  EXPECT_EQ(out.shape(), (Shape{0, 9}));
  EXPECT_TRUE(out.to_vector<T>().empty());
}

}  // namespace
}  // namespace kreg
