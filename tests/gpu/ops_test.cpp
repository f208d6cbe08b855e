// Every op and built-in kernel behind it, for every dtype and constant, on random data
// against a float64 reference computed from the same (rounded) inputs. Outputs are
// poisoned: the memory an op's output gets was filled with NaN bits just before.
#include "gpu/poison.hpp"
#include "test_support.hpp"

#include <cmath>
#include <limits>
#include <random>

namespace kreg {
namespace {

using test::expect_error;
using test::poison;

// Values in T, and the same values as doubles (after T's rounding).
template <class T>
struct Data {
  std::vector<T> values;
  std::vector<double> exact;
};

template <class T>
Data<T> random_data(std::size_t n, std::mt19937& rng, double lo = -2.0, double hi = 2.0) {
  std::uniform_real_distribution<double> dist(lo, hi);
  Data<T> d;
  for (std::size_t i = 0; i < n; ++i) {
    const T v = T(static_cast<float>(dist(rng)));
    d.values.push_back(v);
    d.exact.push_back(static_cast<double>(static_cast<float>(v)));
  }
  return d;
}

template <class T>
double tolerance() {
  if (std::is_same_v<T, float>) return 2e-6;
  if (std::is_same_v<T, half>) return 1.5e-3;
  return 1.2e-2;  // bfloat16: 8 bits of precision
}

template <class T>
::testing::AssertionResult matches(const Array& got, const std::vector<double>& want, double tol,
                                   const std::string& what) {
  const std::vector<T> values = got.to_vector<T>();
  if (values.size() != want.size()) return ::testing::AssertionFailure() << what << ": size";
  for (std::size_t i = 0; i < want.size(); ++i) {
    const auto g = static_cast<double>(static_cast<float>(values[i]));
    if (g != want[i] && !(std::abs(g - want[i]) <= tol * std::max(1.0, std::abs(want[i])))) {
      return ::testing::AssertionFailure()
             << what << ": element " << i << " is " << g << ", want " << want[i];
    }
  }
  return ::testing::AssertionSuccess();
}

template <class T>
class OpsGpu : public ::testing::Test {
 protected:
  void SetUp() override { KREG_REQUIRE_GPU(); }
  std::mt19937 rng_{2024};
};

using FloatTypes = ::testing::Types<float, half, bfloat16>;
TYPED_TEST_SUITE(OpsGpu, FloatTypes);

// A 1-D array of `n` elements starting one element into its buffer: row-contiguous but not
// aligned for vector accesses, so the kernels take their scalar path.
template <class T>
Array misaligned(const std::vector<T>& values) {
  std::vector<T> padded{T(0.0F)};
  padded.insert(padded.end(), values.begin(), values.end());
  const auto n = static_cast<std::int64_t>(values.size());
  return Array::from_data(padded, {n + 1}).slice(0, 1, n + 1);
}

TYPED_TEST(OpsGpu, ElementwiseSameShapeAndRowBroadcast) {
  using T = TypeParam;
  const Dtype dtype = dtype_v<T>;
  struct Op {
    const char* name;
    Array (*fn)(const Array&, const Array&);
    double (*ref)(double, double);
  };
  const Op ops_list[] = {
      {"add", ops::add, [](double x, double y) { return x + y; }},
      {"sub", ops::sub, [](double x, double y) { return x - y; }},
      {"mul", ops::mul, [](double x, double y) { return x * y; }},
      {"div", ops::div, [](double x, double y) { return x / y; }},
  };
  for (const auto& [rows, cols] : {std::pair{1, 1}, std::pair{1, 7}, std::pair{3, 8},
                                   std::pair{5, 13}, std::pair{37, 1000}, std::pair{2, 300001}}) {
    const std::size_t n = static_cast<std::size_t>(rows) * cols;
    const auto a = random_data<T>(n, this->rng_);
    const auto b = random_data<T>(n, this->rng_, 0.5, 2.0);  // away from 0 for div
    const auto row = random_data<T>(cols, this->rng_, 0.5, 2.0);
    const Array da = Array::from_data(a.values, {rows, cols});
    for (const Op& op : ops_list) {
      for (int form = 0; form < 3; ++form) {  // same shape, row broadcast, misaligned
        std::vector<double> want(n);
        for (std::size_t i = 0; i < n; ++i) {
          want[i] = op.ref(a.exact[i], form == 1 ? row.exact[i % cols] : b.exact[i]);
        }
        poison(n * sizeof(T));
        Array out;
        if (form == 0) out = op.fn(da, Array::from_data(b.values, {rows, cols}));
        if (form == 1) out = op.fn(da, Array::from_data(row.values, {cols}));
        if (form == 2) out = op.fn(misaligned(a.values), misaligned(b.values));
        EXPECT_TRUE(matches<T>(out, want, tolerance<T>(),
                               std::string(op.name) + " " + to_string(dtype) + " form " +
                                   std::to_string(form) + " " + std::to_string(rows) + "x" +
                                   std::to_string(cols)));
      }
    }
  }
}

TYPED_TEST(OpsGpu, ScaleAndStridedInputs) {
  using T = TypeParam;
  const auto a = random_data<T>(64 * 48, this->rng_);
  // A transposed view: the op copies it to row-major order first.
  const Array t = Array::from_data(a.values, {64, 48}).transpose();
  std::vector<double> want(a.exact.size());
  for (int i = 0; i < 48; ++i) {
    for (int j = 0; j < 64; ++j) want[i * 64 + j] = -1.5 * a.exact[j * 48 + i];
  }
  poison(want.size() * sizeof(T));
  EXPECT_TRUE(matches<T>(ops::scale(t, -1.5F), want, tolerance<T>(), "scale of a transpose"));
  for (std::size_t n : {1UL, 9UL, 100003UL}) {
    const auto x = random_data<T>(n, this->rng_);
    std::vector<double> w(n);
    for (std::size_t i = 0; i < n; ++i) w[i] = 3.0 * x.exact[i];
    poison(n * sizeof(T));
    EXPECT_TRUE(
        matches<T>(ops::scale(Array::from_data(x.values, {static_cast<std::int64_t>(n)}), 3.0F), w,
                   tolerance<T>(), "scale"));
    EXPECT_TRUE(
        matches<T>(ops::scale(misaligned(x.values), 3.0F), w, tolerance<T>(), "scale, misaligned"));
  }
}

TYPED_TEST(OpsGpu, CastsRoundTripThroughFloat) {
  using T = TypeParam;
  if constexpr (std::is_same_v<T, float>) {
    GTEST_SKIP() << "casts are between float32 and the 16-bit types";
  } else {
    for (std::size_t n : {1UL, 15UL, 4096UL, 1000003UL}) {
      std::uniform_real_distribution<float> dist(-70000.0F, 70000.0F);
      std::vector<float> f(n);
      for (float& v : f) v = dist(this->rng_);
      // float -> T: each result is the host's round-to-nearest-even of the input.
      std::vector<double> want(n);
      for (std::size_t i = 0; i < n; ++i) want[i] = static_cast<float>(T(f[i]));
      poison(n * sizeof(T));
      const Array down = ops::cast(Array::from_data(f, {static_cast<std::int64_t>(n)}), dtype_v<T>);
      const std::vector<T> got = down.to_vector<T>();
      for (std::size_t i = 0; i < n; ++i) {
        ASSERT_EQ(got[i].bits, T(f[i]).bits) << "element " << i << " (" << f[i] << ")";
      }
      // T -> float is exact.
      poison(n * sizeof(float));
      EXPECT_TRUE(matches<float>(ops::cast(down, Dtype::Float32), want, 0.0, "cast up"));
      EXPECT_TRUE(matches<float>(ops::cast(misaligned(got), Dtype::Float32), want, 0.0,
                                 "cast up, misaligned"));
    }
  }
}

TYPED_TEST(OpsGpu, RmsNormEveryConstantAndShape) {
  using T = TypeParam;
  const float eps = 1e-5F;
  for (const auto& [rows, cols] : {std::pair{1, 1}, std::pair{3, 7}, std::pair{4, 8},
                                   std::pair{64, 1000}, std::pair{5, 4096}, std::pair{2, 20000}}) {
    const std::size_t n = static_cast<std::size_t>(rows) * cols;
    const auto x = random_data<T>(n, this->rng_);
    const auto r = random_data<T>(n, this->rng_);
    const auto w = random_data<T>(cols, this->rng_, 0.5, 1.5);
    const Array dx = Array::from_data(x.values, {rows, cols});
    for (bool with_weight : {true, false}) {
      for (bool with_residual : {false, true}) {
        // h as the kernel keeps it: x + r rounded to T.
        std::vector<double> h(n);
        for (std::size_t i = 0; i < n; ++i) {
          h[i] = with_residual ? static_cast<float>(T(static_cast<float>(x.exact[i] + r.exact[i])))
                               : x.exact[i];
        }
        std::vector<double> want(n);
        for (int i = 0; i < rows; ++i) {
          double sum = 0;
          for (int c = 0; c < cols; ++c) sum += h[i * cols + c] * h[i * cols + c];
          const double inv = 1.0 / std::sqrt(sum / cols + eps);
          for (int c = 0; c < cols; ++c) {
            want[i * cols + c] = h[i * cols + c] * inv * (with_weight ? w.exact[c] : 1.0);
          }
        }
        const std::optional<Array> weight =
            with_weight ? std::optional<Array>(Array::from_data(w.values, {cols})) : std::nullopt;
        const std::string what = std::string("rms_norm ") + to_string(dtype_v<T>) + " " +
                                 std::to_string(rows) + "x" + std::to_string(cols) +
                                 (with_weight ? " weight" : "") +
                                 (with_residual ? " residual" : "");
        poison(n * sizeof(T), with_residual ? 2 : 1);
        if (with_residual) {
          auto [normed, sum] =
              ops::add_rms_norm(dx, Array::from_data(r.values, {rows, cols}), weight, eps);
          EXPECT_TRUE(matches<T>(normed, want, 2 * tolerance<T>(), what));
          EXPECT_TRUE(matches<T>(sum, h, 0.0, what + " (sum)"));
        } else {
          EXPECT_TRUE(matches<T>(ops::rms_norm(dx, weight, eps), want, 2 * tolerance<T>(), what));
        }
      }
    }
  }
  // One misaligned row.
  const auto x = random_data<T>(64, this->rng_);
  double sum = 0;
  for (double v : x.exact) sum += v * v;
  std::vector<double> want(64);
  for (int c = 0; c < 64; ++c) want[c] = x.exact[c] / std::sqrt(sum / 64 + eps);
  EXPECT_TRUE(matches<T>(ops::rms_norm(misaligned(x.values), std::nullopt, eps), want,
                         2 * tolerance<T>(), "rms_norm, misaligned"));
}

}  // namespace
}  // namespace kreg

namespace kreg {
namespace {

template <class T>
class RowOpsGpu : public ::testing::Test {
 protected:
  void SetUp() override { KREG_REQUIRE_GPU(); }
  std::mt19937 rng_{77};
};
TYPED_TEST_SUITE(RowOpsGpu, FloatTypes);

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr float kInfF = std::numeric_limits<float>::infinity();

const std::pair<int, int> kRowShapes[] = {{1, 1},     {3, 7},    {4, 8},
                                          {64, 1000}, {5, 4096}, {2, 40000}};

TYPED_TEST(RowOpsGpu, SoftmaxWithScaleAndMasks) {
  using T = TypeParam;
  for (const auto& [rows, cols] : kRowShapes) {
    const std::size_t n = static_cast<std::size_t>(rows) * cols;
    const auto x = random_data<T>(n, this->rng_, -4.0, 4.0);
    auto full = random_data<T>(n, this->rng_, -1.0, 1.0);
    for (std::size_t i = 0; i < n; i += 3) {  // some excluded elements
      full.values[i] = T(-kInfF);
      full.exact[i] = -kInf;
    }
    const auto row = random_data<T>(cols, this->rng_, -1.0, 1.0);
    const float scale = 0.7F;
    for (int form = 0; form < 3; ++form) {  // no mask, full mask, one-row mask
      std::vector<double> want(n);
      for (int r = 0; r < rows; ++r) {
        std::vector<double> logits(cols);
        double top = -kInf;
        for (int c = 0; c < cols; ++c) {
          const std::size_t i = static_cast<std::size_t>(r) * cols + c;
          logits[c] = x.exact[i] * scale + (form == 1   ? full.exact[i]
                                            : form == 2 ? row.exact[c]
                                                        : 0.0);
          top = std::max(top, logits[c]);
        }
        double sum = 0;
        for (int c = 0; c < cols; ++c) sum += top == -kInf ? 0.0 : std::exp(logits[c] - top);
        for (int c = 0; c < cols; ++c) {
          want[static_cast<std::size_t>(r) * cols + c] =
              top == -kInf ? 0.0 : std::exp(logits[c] - top) / sum;
        }
      }
      std::optional<Array> mask;
      if (form == 1) mask = Array::from_data(full.values, {rows, cols});
      if (form == 2) mask = Array::from_data(row.values, {cols});
      poison(n * sizeof(T));
      const Array out = ops::softmax(Array::from_data(x.values, {rows, cols}), scale, mask);
      EXPECT_TRUE(matches<T>(out, want, 4 * tolerance<T>() + 1e-6,
                             "softmax " + std::to_string(rows) + "x" + std::to_string(cols) +
                                 " form " + std::to_string(form)));
    }
  }
  // One misaligned row, and a row that is entirely masked out.
  const auto x = random_data<T>(64, this->rng_);
  double top = -kInf;
  for (double v : x.exact) top = std::max(top, v);
  double sum = 0;
  for (double v : x.exact) sum += std::exp(v - top);
  std::vector<double> want(64);
  for (int c = 0; c < 64; ++c) want[c] = std::exp(x.exact[c] - top) / sum;
  EXPECT_TRUE(matches<T>(ops::softmax(misaligned(x.values)), want, 4 * tolerance<T>() + 1e-6,
                         "softmax, misaligned"));
  const Array dead = Array::from_data(std::vector<T>(16, T(-kInfF)), {16});
  EXPECT_TRUE(matches<T>(ops::softmax(dead), std::vector<double>(16, 0.0), 0.0, "all -inf"));
  // Rows where some threads hold only -inf (every other run of 512 elements), in registers
  // and in the long-row loop.
  for (const int cols : {4096, 40000}) {
    auto y = random_data<T>(cols, this->rng_);
    for (int c = 0; c < cols; ++c) {
      if ((c / 512) % 2 == 0) {
        y.values[c] = T(-kInfF);
        y.exact[c] = -kInf;
      }
    }
    double best = -kInf;
    for (double v : y.exact) best = std::max(best, v);
    double total = 0;
    for (double v : y.exact) total += std::exp(v - best);
    std::vector<double> expect(cols);
    for (int c = 0; c < cols; ++c) expect[c] = std::exp(y.exact[c] - best) / total;
    poison(cols * sizeof(T));
    EXPECT_TRUE(matches<T>(ops::softmax(Array::from_data(y.values, {cols})), expect,
                           4 * tolerance<T>() + 1e-6, "half -inf, " + std::to_string(cols)));
  }
}

TYPED_TEST(RowOpsGpu, SwigluAndGelu) {
  using T = TypeParam;
  for (std::size_t n : {1UL, 13UL, 4096UL, 1000003UL}) {
    const auto a = random_data<T>(n, this->rng_, -5.0, 5.0);
    const auto b = random_data<T>(n, this->rng_);
    const auto shape = Shape{static_cast<std::int64_t>(n)};
    std::vector<double> want(n);
    for (std::size_t i = 0; i < n; ++i)
      want[i] = a.exact[i] / (1.0 + std::exp(-a.exact[i])) * b.exact[i];
    poison(n * sizeof(T));
    EXPECT_TRUE(matches<T>(
        ops::swiglu(Array::from_data(a.values, shape), Array::from_data(b.values, shape)), want,
        2 * tolerance<T>() + 1e-6, "swiglu"));
    EXPECT_TRUE(matches<T>(ops::swiglu(misaligned(a.values), misaligned(b.values)), want,
                           2 * tolerance<T>() + 1e-6, "swiglu, misaligned"));
    for (bool tanh_form : {false, true}) {
      for (std::size_t i = 0; i < n; ++i) {
        const double v = a.exact[i];
        want[i] = tanh_form
                      ? 0.5 * v * (1.0 + std::tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)))
                      : 0.5 * v * std::erfc(-v / std::sqrt(2.0));
      }
      poison(n * sizeof(T));
      EXPECT_TRUE(matches<T>(ops::gelu(Array::from_data(a.values, shape), tanh_form), want,
                             2 * tolerance<T>() + 1e-6, tanh_form ? "gelu tanh" : "gelu erf"));
    }
  }
  // The erf form's negative tail, to relative precision: values down to about 1e-30 for
  // float32 and bfloat16, and to half's smallest normal number (near gelu(-4.2)).
  {
    std::vector<T> x;
    for (int i = 0; i <= 176; ++i) x.push_back(T(-12.0F + 0.0625F * static_cast<float>(i)));
    const std::vector<T> got = ops::gelu(Array::from_data(x, {static_cast<std::int64_t>(x.size())}))
                                   .template to_vector<T>();
    const double smallest = std::is_same_v<T, half> ? 6.2e-5 : 1.2e-38;
    const double bound = std::is_same_v<T, float> ? 2e-5 : tolerance<T>();
    int checked = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
      const double v = static_cast<float>(x[i]);
      const double want = 0.5 * v * std::erfc(-v / std::sqrt(2.0));
      if (std::abs(want) < smallest) continue;
      ++checked;
      EXPECT_NEAR(static_cast<float>(got[i]) / want, 1.0, bound)
          << "gelu(" << v << ") = " << static_cast<float>(got[i]);
    }
    EXPECT_GE(checked, (std::is_same_v<T, half> ? 45 : 177));
  }
}

TYPED_TEST(RowOpsGpu, EmbeddingGather) {
  using T = TypeParam;
  for (const auto& [vocab, cols] : {std::pair{10, 1}, std::pair{100, 7}, std::pair{1000, 4096}}) {
    const auto table = random_data<T>(static_cast<std::size_t>(vocab) * cols, this->rng_);
    std::uniform_int_distribution<int> pick(-2, vocab + 1);  // a few ids outside the table
    for (Dtype id_type : {Dtype::Int32, Dtype::Int64}) {
      const int count = 257;
      std::vector<std::int64_t> ids(count);
      for (auto& id : ids) id = pick(this->rng_);
      const Array id_array =
          id_type == Dtype::Int32
              ? Array::from_data(std::vector<std::int32_t>(ids.begin(), ids.end()), {count})
              : Array::from_data(ids, {count});
      std::vector<double> want(static_cast<std::size_t>(count) * cols, 0.0);
      for (int r = 0; r < count; ++r) {
        if (ids[r] < 0 || ids[r] >= vocab) continue;
        for (int c = 0; c < cols; ++c)
          want[static_cast<std::size_t>(r) * cols + c] = table.exact[ids[r] * cols + c];
      }
      poison(want.size() * sizeof(T));
      const Array out = ops::embedding(Array::from_data(table.values, {vocab, cols}), id_array);
      EXPECT_EQ(out.shape(), (Shape{count, cols}));
      EXPECT_TRUE(matches<T>(out, want, 0.0, "embedding " + std::to_string(cols)));
    }
  }
}

TYPED_TEST(RowOpsGpu, RowSumMaxAndArgmax) {
  using T = TypeParam;
  for (const auto& [rows, cols] : kRowShapes) {
    const std::size_t n = static_cast<std::size_t>(rows) * cols;
    const auto x = random_data<T>(n, this->rng_);
    std::vector<double> sums(rows, 0.0);
    std::vector<double> maxes(rows, -kInf);
    std::vector<std::int64_t> args(rows, 0);
    for (int r = 0; r < rows; ++r) {
      for (int c = 0; c < cols; ++c) {
        const double v = x.exact[static_cast<std::size_t>(r) * cols + c];
        sums[r] += v;
        if (v > maxes[r]) {
          maxes[r] = v;
          args[r] = c;
        }
      }
    }
    const Array dx = Array::from_data(x.values, {rows, cols});
    poison(rows * sizeof(float));
    EXPECT_TRUE(
        matches<float>(ops::row_sum(dx), sums, 1e-5 * std::sqrt(double(cols)) + 1e-6, "row_sum"));
    EXPECT_TRUE(matches<float>(ops::row_max(dx), maxes, 0.0, "row_max"));
    EXPECT_EQ(ops::argmax(dx).to_vector<std::int64_t>(), args) << rows << "x" << cols;
    EXPECT_EQ(ops::argmax(dx).shape(), (Shape{rows}));
  }
}

TYPED_TEST(RowOpsGpu, GemvAgainstFloat64) {
  using T = TypeParam;
  for (const auto& [rows, cols] :
       {std::pair{1, 1}, std::pair{7, 13}, std::pair{33, 4096}, std::pair{1000, 1000}}) {
    const auto w = random_data<T>(static_cast<std::size_t>(rows) * cols, this->rng_);
    const auto x = random_data<float>(cols, this->rng_);
    std::vector<double> want(rows, 0.0);
    for (int r = 0; r < rows; ++r) {
      for (int c = 0; c < cols; ++c)
        want[r] += w.exact[static_cast<std::size_t>(r) * cols + c] * x.exact[c];
    }
    poison(rows * sizeof(float));
    EXPECT_TRUE(matches<float>(
        ops::gemv(Array::from_data(w.values, {rows, cols}), Array::from_data(x.values, {cols})),
        want, 1e-5 * std::sqrt(double(cols)) + 1e-6,
        "gemv " + std::to_string(rows) + "x" + std::to_string(cols)));
  }
}

}  // namespace
}  // namespace kreg

namespace kreg {
namespace {

template <class T>
class MoreOpsGpu : public ::testing::Test {
 protected:
  void SetUp() override { KREG_REQUIRE_GPU(); }
  std::mt19937 rng_{5};
};
TYPED_TEST_SUITE(MoreOpsGpu, FloatTypes);

TYPED_TEST(MoreOpsGpu, LayerNormEveryConstantAndShape) {
  using T = TypeParam;
  const float eps = 1e-5F;
  for (const auto& [rows, cols] : {std::pair{1, 1}, std::pair{3, 7}, std::pair{64, 1000},
                                   std::pair{5, 4096}, std::pair{2, 40000}}) {
    const std::size_t n = static_cast<std::size_t>(rows) * cols;
    const auto x = random_data<T>(n, this->rng_, 3.0, 5.0);  // a large mean
    const auto w = random_data<T>(cols, this->rng_, 0.5, 1.5);
    const auto b = random_data<T>(cols, this->rng_);
    for (int form = 0; form < 3; ++form) {  // weight and bias, weight only, neither
      std::vector<double> want(n);
      for (int r = 0; r < rows; ++r) {
        double mean = 0;
        for (int c = 0; c < cols; ++c) mean += x.exact[static_cast<std::size_t>(r) * cols + c];
        mean /= cols;
        double var = 0;
        for (int c = 0; c < cols; ++c) {
          const double d = x.exact[static_cast<std::size_t>(r) * cols + c] - mean;
          var += d * d;
        }
        const double inv = 1.0 / std::sqrt(var / cols + eps);
        for (int c = 0; c < cols; ++c) {
          double v = (x.exact[static_cast<std::size_t>(r) * cols + c] - mean) * inv;
          if (form <= 1) v *= w.exact[c];
          if (form == 0) v += b.exact[c];
          want[static_cast<std::size_t>(r) * cols + c] = v;
        }
      }
      const std::optional<Array> weight =
          form <= 1 ? std::optional<Array>(Array::from_data(w.values, {cols})) : std::nullopt;
      const std::optional<Array> bias =
          form == 0 ? std::optional<Array>(Array::from_data(b.values, {cols})) : std::nullopt;
      poison(n * sizeof(T));
      EXPECT_TRUE(
          matches<T>(ops::layer_norm(Array::from_data(x.values, {rows, cols}), weight, bias, eps),
                     want, 4 * tolerance<T>() + 1e-5,
                     "layer_norm " + std::to_string(rows) + "x" + std::to_string(cols) + " form " +
                         std::to_string(form)));
    }
  }
}

TYPED_TEST(MoreOpsGpu, TransposeAndPermute021) {
  using T = TypeParam;
  for (const auto& [batch, rows, cols] : {std::tuple{1, 1, 1}, std::tuple{1, 33, 65},
                                          std::tuple{3, 100, 7}, std::tuple{2, 512, 1024}}) {
    const std::size_t n = static_cast<std::size_t>(batch) * rows * cols;
    const auto x = random_data<T>(n, this->rng_);
    std::vector<double> want(n);
    for (int b = 0; b < batch; ++b) {
      for (int i = 0; i < rows; ++i) {
        for (int j = 0; j < cols; ++j) {
          want[(static_cast<std::size_t>(b) * cols + j) * rows + i] =
              x.exact[(static_cast<std::size_t>(b) * rows + i) * cols + j];
        }
      }
    }
    poison(n * sizeof(T));
    const Array permuted = ops::permute021(Array::from_data(x.values, {batch, rows, cols}));
    EXPECT_EQ(permuted.shape(), (Shape{batch, cols, rows}));
    EXPECT_TRUE(matches<T>(permuted, want, 0.0, "permute021"));
    if (batch == 1) {
      const Array t = ops::transpose(Array::from_data(x.values, {rows, cols}));
      EXPECT_EQ(t.shape(), (Shape{cols, rows}));
      EXPECT_TRUE(matches<T>(t, want, 0.0, "transpose"));
    }
  }
}

TYPED_TEST(MoreOpsGpu, RopeBothLayoutsWithPositionsAndOffsets) {
  using T = TypeParam;
  const int tokens = 37;
  std::vector<std::int32_t> positions(tokens);
  std::uniform_int_distribution<int> pick(0, 4096);
  for (auto& p : positions) p = pick(this->rng_);
  // Heads whose pairs fill whole vectors in both layouts, in one layout only, in neither;
  // and a head too long for the kernel's table of angles.
  for (const auto& [heads, head_dim] : {std::pair{4, 64}, std::pair{3, 2}, std::pair{2, 10},
                                        std::pair{3, 24}, std::pair{1, 2050}}) {
    const std::size_t n = static_cast<std::size_t>(tokens) * heads * head_dim;
    const auto x = random_data<T>(n, this->rng_);
    for (bool neox : {false, true}) {
      for (bool explicit_positions : {false, true}) {
        const std::int64_t offset = 100;
        std::vector<double> want(n);
        for (int t = 0; t < tokens; ++t) {
          const double pos = explicit_positions ? positions[t] : static_cast<double>(offset + t);
          for (int h = 0; h < heads; ++h) {
            const std::size_t at = (static_cast<std::size_t>(t) * heads + h) * head_dim;
            for (int i = 0; i < head_dim / 2; ++i) {
              const double angle = pos * std::pow(10000.0, -2.0 * i / head_dim);
              const int a = neox ? i : 2 * i;
              const int b = neox ? i + head_dim / 2 : 2 * i + 1;
              want[at + a] = x.exact[at + a] * std::cos(angle) - x.exact[at + b] * std::sin(angle);
              want[at + b] = x.exact[at + a] * std::sin(angle) + x.exact[at + b] * std::cos(angle);
            }
          }
        }
        const Array dx = Array::from_data(x.values, {tokens, heads, head_dim});
        poison(n * sizeof(T));
        const Array out = explicit_positions
                              ? ops::rope(dx, Array::from_data(positions, {tokens}), 10000.0F, neox)
                              : ops::rope(dx, offset, 10000.0F, neox);
        // Angles up to 4096 radians in float carry about 5e-4 of absolute error.
        EXPECT_TRUE(matches<T>(out, want, 4 * tolerance<T>() + 2e-3,
                               "rope " + std::to_string(heads) + "x" + std::to_string(head_dim) +
                                   (neox ? " neox" : "") +
                                   (explicit_positions ? " positions" : " offset")));
      }
    }
  }
}

// The transpose kernels move opaque words: one per element size, each checked bit for bit,
// with shapes that take the packed path for every size, for some sizes only, and for none.
template <class T>
void check_integer_transpose(std::mt19937& rng) {
  for (const auto& [batch, rows, cols] : {std::tuple{1, 64, 128}, std::tuple{2, 66, 130},
                                          std::tuple{1, 33, 65}, std::tuple{3, 260, 4}}) {
    const std::size_t n = static_cast<std::size_t>(batch) * rows * cols;
    std::vector<T> x(n);
    std::uniform_int_distribution<long long> dist(std::numeric_limits<T>::min(),
                                                  std::numeric_limits<T>::max());
    for (T& v : x) v = static_cast<T>(dist(rng));
    std::vector<T> want(n);
    for (int b = 0; b < batch; ++b) {
      for (int i = 0; i < rows; ++i) {
        for (int j = 0; j < cols; ++j) {
          want[(static_cast<std::size_t>(b) * cols + j) * rows + i] =
              x[(static_cast<std::size_t>(b) * rows + i) * cols + j];
        }
      }
    }
    poison(n * sizeof(T));
    const Array out = ops::permute021(Array::from_data(x, {batch, rows, cols}));
    EXPECT_EQ(out.to_vector<T>(), want)
        << sizeof(T) << "-byte elements, " << batch << "x" << rows << "x" << cols;
  }
}

TEST(OpsGpuTranspose, ReshapeOfAViewCopiesItInRowMajorOrder) {
  KREG_REQUIRE_GPU();
  const Array a = Array::from_data<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  const Array r = ops::scale(a, 1.0F).transpose().reshape({6});  // pending, then a view
  EXPECT_EQ(r.to_vector<float>(), (std::vector<float>{1, 4, 2, 5, 3, 6}));
  const Array pending = ops::scale(a, 2.0F).reshape({3, 2});  // a view of pending work
  EXPECT_FALSE(pending.is_evaluated());
  EXPECT_EQ(pending.to_vector<float>(), (std::vector<float>{2, 4, 6, 8, 10, 12}));
}

TEST(OpsGpuTranspose, EveryElementSizeBitForBit) {
  KREG_REQUIRE_GPU();
  std::mt19937 rng(5);
  check_integer_transpose<std::int8_t>(rng);
  check_integer_transpose<std::uint16_t>(rng);
  check_integer_transpose<std::int32_t>(rng);
  check_integer_transpose<std::int64_t>(rng);
}

TEST(OpsGpuBuiltins, AUsersKernelOfTheSameNameDoesNotReplaceThem) {
  KREG_REQUIRE_GPU();
  // Users' kernels named like the op's kernel and the copy that makes a view contiguous;
  // each would leave its output unwritten.
  Registry& reg = device_registry(0);
  reg.register_source("users_names", R"(
extern "C" __global__ void add_f32(const float*, const float*, float*, unsigned long long) {}
extern "C" __global__ void strided_copy_4() {})");
  EXPECT_EQ(reg.compile("add_f32").source_name(), "users_names");
  const Array a = Array::from_data<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  poison(6 * sizeof(float), 4);
  const Array sum = ops::add(a.transpose(), a.transpose());  // a view: copied first
  EXPECT_EQ(sum.to_vector<float>(), (std::vector<float>{2, 8, 4, 10, 6, 12}));
  // Leaves the shared registry as other tests expect it.
  reg.register_source("users_names", "extern \"C\" __global__ void users_names_only() {}");
}

}  // namespace
}  // namespace kreg
