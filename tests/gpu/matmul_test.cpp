// ops::matmul on random inputs against a float64 product of the same (rounded) values: each
// operand K-major or MN-major (a transposed view read in place), strided views copied first,
// bias, every epilogue and both output dtypes, on the kernels the op picks from (for m <= 16
// the one-row kernel, the streaming one on sm_90, the skinny one elsewhere; the tensor-map one
// on sm_90 for rows on 16 bytes, the tile one for the rest: odd k, odd m and n). Outputs are
// poisoned first, so an unwritten element fails.
#include "gpu/poison.hpp"
#include "test_support.hpp"

#include <cmath>
#include <random>

namespace kreg {
namespace {

struct Case {
  int m = 64;
  int n = 64;
  int k = 64;
  bool a_by_m = false;  // a is the transpose of a [k, m] array
  bool b_by_k = true;   // b is the transpose of an [n, k] array (a linear layer's weight)
  bool bias = false;
  ops::Epilogue epilogue = ops::Epilogue::None;
  bool float_out = false;
  int check_every = 1;  // rows of the reference computed: every this many, and the last
};

std::string describe(const Case& c) {
  return std::to_string(c.m) + " x " + std::to_string(c.n) + " x " + std::to_string(c.k) +
         (c.a_by_m ? ", a M-major" : ", a K-major") + (c.b_by_k ? ", b K-major" : ", b N-major") +
         (c.bias ? ", bias" : "") + ", epilogue " + std::to_string(static_cast<int>(c.epilogue)) +
         (c.float_out ? ", float32 out" : "");
}

// Every epilogue the ops take.
constexpr ops::Epilogue kEpilogues[] = {ops::Epilogue::None,     ops::Epilogue::Gelu,
                                        ops::Epilogue::GeluTanh, ops::Epilogue::Silu,
                                        ops::Epilogue::SiluGate, ops::Epilogue::Residual};

double activate(ops::Epilogue e, double x, double other) {
  const double silu = x / (1.0 + std::exp(-x));
  switch (e) {
    case ops::Epilogue::None: return x;
    case ops::Epilogue::Gelu: return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
    case ops::Epilogue::GeluTanh:
      return 0.5 * x * (1.0 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
    case ops::Epilogue::Silu: return silu;
    case ops::Epilogue::SiluGate: return silu * other;
    case ops::Epilogue::Residual: return x + other;
  }
  return x;
}

template <class T>
class MatmulGpu : public ::testing::Test {
 protected:
  void SetUp() override { KREG_REQUIRE_GPU(); }

  void check(const Case& c) {
    const auto m = static_cast<std::size_t>(c.m);
    const auto n = static_cast<std::size_t>(c.n);
    const auto k = static_cast<std::size_t>(c.k);
    std::vector<T> av;
    std::vector<T> bv;
    std::vector<double> ax;  // a as [m, k]
    std::vector<double> bx;  // b as [k, n]
    test::random_values(rng_, m * k, av, ax);
    test::random_values(rng_, k * n, bv, bx);
    // The stored layouts: a [m, k] or [k, m], b [k, n] or [n, k].
    std::vector<T> a_store(av.size());
    std::vector<T> b_store(bv.size());
    for (std::size_t i = 0; i < m; ++i) {
      for (std::size_t p = 0; p < k; ++p) a_store[c.a_by_m ? p * m + i : i * k + p] = av[i * k + p];
    }
    for (std::size_t p = 0; p < k; ++p) {
      for (std::size_t j = 0; j < n; ++j) b_store[c.b_by_k ? j * k + p : p * n + j] = bv[p * n + j];
    }
    const std::int64_t mi = c.m;
    const std::int64_t ni = c.n;
    const std::int64_t ki = c.k;
    const Array a = c.a_by_m ? Array::from_data(a_store, {ki, mi}).transpose()
                             : Array::from_data(a_store, {mi, ki});
    const Array b = c.b_by_k ? Array::from_data(b_store, {ni, ki}).transpose()
                             : Array::from_data(b_store, {ki, ni});
    ops::MatmulOptions options;
    std::vector<T> bias;
    std::vector<double> bias_x(n, 0.0);
    if (c.bias) {
      test::random_values(rng_, n, bias, bias_x);
      options.bias = Array::from_data(bias, {ni});
    }
    std::vector<T> other;
    std::vector<double> other_x(m * n, 0.0);
    const bool reads_other =
        c.epilogue == ops::Epilogue::SiluGate || c.epilogue == ops::Epilogue::Residual;
    if (reads_other) {
      test::random_values(rng_, m * n, other, other_x);
      options.other = Array::from_data(other, {mi, ni});
    }
    options.epilogue = c.epilogue;
    if (c.float_out) options.out_dtype = Dtype::Float32;
    test::poison(m * n * (c.float_out ? 4 : sizeof(T)), 2);
    const Array out = ops::matmul(a, b, options);
    ASSERT_EQ(out.shape(), (Shape{mi, ni})) << describe(c);
    ASSERT_EQ(out.dtype(), c.float_out ? Dtype::Float32 : a.dtype()) << describe(c);
    std::vector<double> got(m * n);
    if (c.float_out) {
      const std::vector<float> v = out.to_vector<float>();
      for (std::size_t i = 0; i < v.size(); ++i) got[i] = v[i];
    } else {
      const std::vector<T> v = out.to_vector<T>();
      for (std::size_t i = 0; i < v.size(); ++i) got[i] = static_cast<float>(v[i]);
    }
    expect_close(c, ax, bx, bias_x, other_x, got);
  }

  void expect_close(const Case& c, const std::vector<double>& ax, const std::vector<double>& bx,
                    const std::vector<double>& bias_x, const std::vector<double>& other_x,
                    const std::vector<double>& got) {
    const auto n = static_cast<std::size_t>(c.n);
    const auto k = static_cast<std::size_t>(c.k);
    double err = 0.0;
    double norm = 0.0;
    std::vector<double> row(n);
    for (int i = 0; i < c.m; ++i) {
      if (i % c.check_every != 0 && i != c.m - 1) continue;
      std::fill(row.begin(), row.end(), 0.0);
      for (std::size_t p = 0; p < k; ++p) {
        const double x = ax[i * k + p];
        const double* brow = &bx[p * n];
        for (std::size_t j = 0; j < n; ++j) row[j] += x * brow[j];
      }
      for (std::size_t j = 0; j < n; ++j) {
        const double want = activate(c.epilogue, row[j] + bias_x[j], other_x[i * n + j]);
        const double g = got[i * n + j];
        ASSERT_TRUE(std::isfinite(g)) << describe(c) << ": (" << i << ", " << j << ") is " << g;
        err += (g - want) * (g - want);
        norm += want * want;
      }
    }
    // Rounding the result to 16 bits bounds the error: 2^-9 of each element for bfloat16.
    const double limit = c.float_out ? 1e-4 : (std::is_same_v<T, half> ? 1e-3 : 6e-3);
    const double relative = norm > 0 ? std::sqrt(err / norm) : std::sqrt(err);
    EXPECT_LT(relative, limit) << describe(c);
  }

  std::mt19937 rng_{91};
};

using HalfTypes = ::testing::Types<half, bfloat16>;
TYPED_TEST_SUITE(MatmulGpu, HalfTypes);

TYPED_TEST(MatmulGpu, EveryLayoutOfBothOperands) {
  for (const bool a_by_m : {false, true}) {
    for (const bool b_by_k : {false, true}) {
      Case c;
      c.m = 300;   // a partial tile of rows
      c.n = 520;   // and of columns
      c.k = 1000;  // and a partial last step of k
      c.a_by_m = a_by_m;
      c.b_by_k = b_by_k;
      this->check(c);
    }
  }
}

TYPED_TEST(MatmulGpu, WideTilesOnALargeProduct) {
  for (const bool b_by_k : {false, true}) {
    Case c;
    c.m = 2048;  // 16 x 9 tiles of 128 x 256: enough for the wide tile
    c.n = 2304;
    c.k = 512;
    c.b_by_k = b_by_k;
    c.check_every = 61;
    this->check(c);
  }
}

TYPED_TEST(MatmulGpu, DecodeRowsAgainstAWeight) {
  for (const int m : {1, 2, 7, 8, 9, 16}) {
    Case c;
    c.m = m;
    c.n = 1000;  // blocks of 16 columns, the last partial
    c.k = 2056;  // not a multiple of a warp's 64
    this->check(c);
  }
  Case c;  // blocks of 32 columns
  c.m = 12;
  c.n = 4096;
  c.k = 264;
  this->check(c);
}

// On sm_90 2 to 16 rows take the streaming kernel: k cut into ranges whose sums a second
// kernel adds and finishes (bias, every epilogue, float32 out, an odd n), or one range whose
// blocks finish their own columns.
TYPED_TEST(MatmulGpu, FewRowsEveryEpilogueWithAndWithoutRangesOfK) {
  for (const auto& [m, n, k] : {std::tuple{5, 131, 1032}, std::tuple{16, 1001, 128}}) {
    for (const ops::Epilogue e : kEpilogues) {
      Case c;
      c.m = m;
      c.n = n;
      c.k = k;
      c.bias = true;
      c.epilogue = e;
      this->check(c);
    }
    Case c;
    c.m = m;
    c.n = n;
    c.k = k;
    c.bias = true;
    c.float_out = true;
    this->check(c);
  }
  Case c;  // many ranges, each of the 4 tiles of k the op allows at least
  c.m = 2;
  c.n = 64;
  c.k = 8192;
  this->check(c);
}

// One row takes the one-row kernel: fewer windows of k than warps (k = 8), a partial last
// window, partial blocks of 16 columns, bias, every epilogue and float32 out.
TYPED_TEST(MatmulGpu, OneRowEveryEpilogueAndPartialWindows) {
  for (const auto& [n, k] : {std::pair{1, 8}, std::pair{17, 264}, std::pair{1000, 2056},
                             std::pair{48, 4104}, std::pair{2050, 520}}) {
    Case c;
    c.m = 1;
    c.n = n;
    c.k = k;
    this->check(c);
  }
  for (const ops::Epilogue e : kEpilogues) {
    Case c;
    c.m = 1;
    c.n = 33;
    c.k = 776;
    c.bias = true;
    c.epilogue = e;
    this->check(c);
  }
  Case c;
  c.m = 1;
  c.n = 130;
  c.k = 1032;
  c.bias = true;
  c.float_out = true;
  this->check(c);
}

// B's rows further apart than k: a slice of a wider weight, read where it lies.
TYPED_TEST(MatmulGpu, OneRowAgainstASliceOfAWiderWeight) {
  using T = TypeParam;
  std::vector<T> av;
  std::vector<T> wv;
  std::vector<double> ax;
  std::vector<double> wx;
  constexpr int kN = 40;
  constexpr int kWide = 1024;
  constexpr int kK = 520;
  test::random_values(this->rng_, kK, av, ax);
  test::random_values(this->rng_, static_cast<std::size_t>(kN) * kWide, wv, wx);
  const Array w = Array::from_data(wv, {kN, kWide}).slice(1, 256, 256 + kK);
  test::poison(kN * sizeof(T), 2);
  const std::vector<T> got =
      ops::matmul(Array::from_data(av, {1, kK}), w.transpose()).template to_vector<T>();
  ASSERT_EQ(got.size(), static_cast<std::size_t>(kN));
  double err = 0.0;
  double norm = 0.0;
  for (int j = 0; j < kN; ++j) {
    double want = 0.0;
    for (int p = 0; p < kK; ++p) want += ax[p] * wx[static_cast<std::size_t>(j) * kWide + 256 + p];
    const double g = static_cast<float>(got[j]);
    err += (g - want) * (g - want);
    norm += want * want;
  }
  EXPECT_LT(std::sqrt(err / norm), 6e-3);
}

TYPED_TEST(MatmulGpu, OddSizesTakeTheTileKernel) {
  for (const auto& [m, n, k] : {std::tuple{1, 1, 1}, std::tuple{7, 7, 7}, std::tuple{7, 130, 4099},
                                std::tuple{33, 77, 130}, std::tuple{129, 65, 31}}) {
    for (const bool b_by_k : {false, true}) {
      Case c;
      c.m = m;
      c.n = n;
      c.k = k;
      c.b_by_k = b_by_k;
      c.a_by_m = m == 129;
      this->check(c);
    }
  }
}

TYPED_TEST(MatmulGpu, BiasAndEveryEpilogueOnEachKernel) {
  for (const ops::Epilogue e : kEpilogues) {
    for (const auto& [m, n, k] :
         {std::tuple{5, 96, 256}, std::tuple{200, 136, 192}, std::tuple{20, 36, 70}}) {
      Case c;
      c.m = m;
      c.n = n;
      c.k = k;
      c.bias = true;
      c.epilogue = e;
      this->check(c);
    }
  }
}

TYPED_TEST(MatmulGpu, Float32OutOnEachKernel) {
  for (const auto& [m, n, k] :
       {std::tuple{3, 64, 512}, std::tuple{256, 256, 256}, std::tuple{31, 33, 35}}) {
    Case c;
    c.m = m;
    c.n = n;
    c.k = k;
    c.float_out = true;
    c.bias = true;
    this->check(c);
  }
}

TYPED_TEST(MatmulGpu, LeadingDimensionsOfAAreRows) {
  using T = TypeParam;
  std::vector<T> av;
  std::vector<T> bv;
  std::vector<double> ax;
  std::vector<double> bx;
  test::random_values(this->rng_, 2 * 3 * 64, av, ax);
  test::random_values(this->rng_, 64 * 40, bv, bx);
  const Array a3 = Array::from_data(av, {2, 3, 64});
  const Array b = Array::from_data(bv, {64, 40});
  const Array out3 = ops::matmul(a3, b);
  ASSERT_EQ(out3.shape(), (Shape{2, 3, 40}));
  const Array out2 = ops::matmul(Array::from_data(av, {6, 64}), b);
  const std::vector<T> v3 = out3.to_vector<T>();
  const std::vector<T> v2 = out2.to_vector<T>();
  ASSERT_EQ(v3.size(), v2.size());
  for (std::size_t i = 0; i < v3.size(); ++i) {
    EXPECT_EQ(static_cast<float>(v3[i]), static_cast<float>(v2[i])) << i;
  }
}

TYPED_TEST(MatmulGpu, StridedViewsAreCopiedAndSlicesReadInPlace) {
  using T = TypeParam;
  std::vector<T> av;
  std::vector<T> bv;
  std::vector<double> ax;
  std::vector<double> bx;
  test::random_values(this->rng_, 40 * 128, av, ax);
  test::random_values(this->rng_, 64 * 48, bv, bx);
  const Array a_all = Array::from_data(av, {40, 128});
  // Every second column: no stride is 1. Rows 8 to 40 of a: a slice read where it lies.
  const Array a_cols = a_all.slice(1, 0, 128, 2);
  const Array a_rows = a_all.slice(0, 8, 40).slice(1, 0, 64);
  const Array b = Array::from_data(bv, {64, 48});
  for (const auto& [view, first_row, step] :
       {std::tuple{&a_cols, 0, 2}, std::tuple{&a_rows, 8, 1}}) {
    const Array out = ops::matmul(*view, b);
    const std::vector<T> got = out.to_vector<T>();
    const int rows = static_cast<int>(view->shape()[0]);
    double err = 0.0;
    double norm = 0.0;
    for (int i = 0; i < rows; ++i) {
      for (int j = 0; j < 48; ++j) {
        double want = 0.0;
        for (int p = 0; p < 64; ++p) {
          want += ax[static_cast<std::size_t>(first_row + i) * 128 +
                     static_cast<std::size_t>(p) * step] *
                  bx[static_cast<std::size_t>(p) * 48 + j];
        }
        const double g = static_cast<float>(got[static_cast<std::size_t>(i) * 48 + j]);
        err += (g - want) * (g - want);
        norm += want * want;
      }
    }
    EXPECT_LT(std::sqrt(err / norm), 6e-3) << "step " << step;
  }
}

TYPED_TEST(MatmulGpu, EmptyKGivesTheBiasAndEmptyMGivesNothing) {
  using T = TypeParam;
  const std::vector<T> bias = {T(1.0F), T(-2.0F), T(0.5F)};
  ops::MatmulOptions options;
  options.bias = Array::from_data(bias, {3});
  const Array out = ops::matmul(Array::from_data(std::vector<T>{}, {2, 0}),
                                Array::from_data(std::vector<T>{}, {0, 3}), options);
  const std::vector<T> got = out.to_vector<T>();
  ASSERT_EQ(got.size(), 6U);
  for (int i = 0; i < 6; ++i)
    EXPECT_EQ(static_cast<float>(got[i]), static_cast<float>(bias[i % 3]));
  const Array none = ops::matmul(Array::from_data(std::vector<T>{}, {0, 8}),
                                 Array::from_data(std::vector<T>(8 * 3, T(1.0F)), {8, 3}));
  EXPECT_EQ(none.shape(), (Shape{0, 3}));
  EXPECT_TRUE(none.to_vector<T>().empty());
}

}  // namespace
}  // namespace kreg
