// Every op and built-in kernel behind it, for every dtype and constant, on random data
// against a float64 reference computed from the same (rounded) inputs. Outputs are
// poisoned: the memory an op's output gets was filled with NaN bits just before.
#include "test_support.hpp"

#include <cmath>
#include <random>

namespace kreg {
namespace {

using test::expect_error;

// Released memory is reused, last in first out, for the next allocation of the same size on
// the same stream; so filling `count` blocks of `bytes` and releasing them poisons the next
// outputs of that size.
void poison(std::size_t bytes, int count = 1) {
  static const CustomKernel fill("poison_bytes", {"a"}, {"out"},
                                 "uint i = thread_position_in_grid.x; out[i] = 0xff + a[0] * 0;");
  std::vector<Array> blocks;
  for (int i = 0; i < count; ++i) {
    ApplyOptions options;
    options.init_value = 255;
    blocks.push_back(fill.apply({Array::from_data<std::uint8_t>({0}, {1})},
                                {OutputSpec{{static_cast<std::int64_t>(bytes)}, Dtype::UInt8}},
                                Dim3{1}, Dim3{1}, options)[0]);
  }
  eval(blocks);
}

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
