// Metal's math names and MLX's indexing helpers in custom kernels on the GPU: each function
// on random inputs against a float64 reference, in float, half and bfloat16; the special
// values Metal defines; elem_to_loc over transposed and sliced views. Outputs are poisoned
// (init_value NaN) so that an unwritten element shows.
#include "gpu/device_buffer.hpp"
#include "test_support.hpp"

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace kreg {
namespace {

using test::close_to;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr int kCount = 4099;  // not a multiple of the threadgroup

struct Range {
  double lo, hi;
};

// One function: its call over x, y and z (inputs a, b, c, of the type T under test), where
// each input's values come from, and what it should give.
struct Case {
  const char* call;
  Range x, y = {-2, 2}, z = {0, 1};
  double (*want)(double x, double y, double z);
  double fast_tolerance = 0;  // 0: no fast:: form
};

const Range kAny{-2, 2};
const Range kPositive{0.1, 4};
const Range kUnit{-0.9, 0.9};

double sign_of(double v) {
  return v > 0 ? 1.0 : v < 0 ? -1.0 : v == 0 ? v : 0.0;
}

const std::vector<Case>& cases() {
  static const std::vector<Case> all = {
      {"exp(x)", kAny, kAny, kAny, [](double x, double, double) { return std::exp(x); }, 1e-5},
      {"exp2(x)", kAny, kAny, kAny, [](double x, double, double) { return std::exp2(x); }, 1e-5},
      {"exp10(x)", kAny, kAny, kAny, [](double x, double, double) { return std::pow(10.0, x); },
       1e-5},
      {"log(x)", kPositive, kAny, kAny, [](double x, double, double) { return std::log(x); }, 1e-5},
      {"log2(x)", kPositive, kAny, kAny, [](double x, double, double) { return std::log2(x); },
       1e-5},
      {"log10(x)", kPositive, kAny, kAny, [](double x, double, double) { return std::log10(x); },
       1e-5},
      {"pow(x, y)", kPositive, kAny, kAny,
       [](double x, double y, double) { return std::pow(x, y); }, 1e-5},
      {"powr(x, y)", kPositive, kAny, kAny,
       [](double x, double y, double) { return std::pow(x, y); }, 1e-5},
      {"sqrt(x)", {0, 4}, kAny, kAny, [](double x, double, double) { return std::sqrt(x); }, 1e-5},
      {"rsqrt(x)", kPositive, kAny, kAny, [](double x, double, double) { return 1 / std::sqrt(x); },
       1e-5},
      {"sin(x)", {-3, 3}, kAny, kAny, [](double x, double, double) { return std::sin(x); }, 1e-5},
      {"cos(x)", {-3, 3}, kAny, kAny, [](double x, double, double) { return std::cos(x); }, 1e-5},
      {"tan(x)",
       {-1.2, 1.2},
       kAny,
       kAny,
       [](double x, double, double) { return std::tan(x); },
       1e-5},
      {"asin(x)", kUnit, kAny, kAny, [](double x, double, double) { return std::asin(x); }},
      {"acos(x)", kUnit, kAny, kAny, [](double x, double, double) { return std::acos(x); }},
      {"atan(x)", {-3, 3}, kAny, kAny, [](double x, double, double) { return std::atan(x); }},
      {"atan2(x, y)", kAny, kAny, kAny,
       [](double x, double y, double) { return std::atan2(x, y); }},
      {"sinh(x)", kAny, kAny, kAny, [](double x, double, double) { return std::sinh(x); }},
      {"cosh(x)", kAny, kAny, kAny, [](double x, double, double) { return std::cosh(x); }},
      {"tanh(x)", kAny, kAny, kAny, [](double x, double, double) { return std::tanh(x); }, 1e-3},
      {"asinh(x)", {-3, 3}, kAny, kAny, [](double x, double, double) { return std::asinh(x); }},
      {"acosh(x)", {1.1, 4}, kAny, kAny, [](double x, double, double) { return std::acosh(x); }},
      {"atanh(x)", kUnit, kAny, kAny, [](double x, double, double) { return std::atanh(x); }},
      {"cbrt(x)", {-3, 3}, kAny, kAny, [](double x, double, double) { return std::cbrt(x); }},
      {"erf(x)", kAny, kAny, kAny, [](double x, double, double) { return std::erf(x); }},
      {"abs(x)", kAny, kAny, kAny, [](double x, double, double) { return std::abs(x); }},
      {"fabs(x)", kAny, kAny, kAny, [](double x, double, double) { return std::fabs(x); }},
      {"sign(x)", kAny, kAny, kAny, [](double x, double, double) { return sign_of(x); }},
      {"fract(x)", {-3, 3}, kAny, kAny, [](double x, double, double) { return x - std::floor(x); }},
      {"trunc(x)", {-3, 3}, kAny, kAny, [](double x, double, double) { return std::trunc(x); }},
      {"round(x)", {-3, 3}, kAny, kAny, [](double x, double, double) { return std::round(x); }},
      {"rint(x)", {-3, 3}, kAny, kAny, [](double x, double, double) { return std::nearbyint(x); }},
      {"floor(x)", {-3, 3}, kAny, kAny, [](double x, double, double) { return std::floor(x); }},
      {"ceil(x)", {-3, 3}, kAny, kAny, [](double x, double, double) { return std::ceil(x); }},
      {"saturate(x)",
       {-1, 2},
       kAny,
       kAny,
       [](double x, double, double) { return std::fmin(std::fmax(x, 0.0), 1.0); }},
      {"fmod(x, y)",
       {-3, 3},
       {0.5, 2},
       kAny,
       [](double x, double y, double) { return std::fmod(x, y); }},
      {"copysign(x, y)", kAny, kAny, kAny,
       [](double x, double y, double) { return std::copysign(x, y); }},
      {"min(x, y)", kAny, kAny, kAny, [](double x, double y, double) { return std::fmin(x, y); }},
      {"max(x, y)", kAny, kAny, kAny, [](double x, double y, double) { return std::fmax(x, y); }},
      {"fmin(x, y)", kAny, kAny, kAny, [](double x, double y, double) { return std::fmin(x, y); }},
      {"fmax(x, y)", kAny, kAny, kAny, [](double x, double y, double) { return std::fmax(x, y); }},
      {"step(x, y)", kAny, kAny, kAny,
       [](double x, double y, double) { return y < x ? 0.0 : 1.0; }},
      {"divide(x, y)",
       kAny,
       {0.5, 2},
       kAny,
       [](double x, double y, double) { return x / y; },
       1e-5},
      {"ldexp(x, 3)", kAny, kAny, kAny, [](double x, double, double) { return std::ldexp(x, 3); }},
      {"fma(x, y, z)", kAny, kAny, kAny,
       [](double x, double y, double z) { return std::fma(x, y, z); }},
      {"mix(x, y, z)", kAny, kAny, kAny,
       [](double x, double y, double z) { return x + (y - x) * z; }},
      {"clamp(x, T(-0.5f), T(0.5f))", kAny, kAny, kAny,
       [](double x, double, double) { return std::fmin(std::fmax(x, -0.5), 0.5); }},
      {"smoothstep(T(-1), T(1), x)", kAny, kAny, kAny,
       [](double x, double, double) {
         const double t = std::fmin(std::fmax((x + 1) / 2, 0.0), 1.0);
         return t * t * (3 - 2 * t);
       }},
      {"select(x, y, x > y)", kAny, kAny, kAny,
       [](double x, double y, double) { return x > y ? y : x; }},
  };
  return all;
}

// The 16-bit types round each input on the host; the reference takes the rounded values.
template <class T>
std::vector<T> random_values(Range range, std::mt19937& rng) {
  std::uniform_real_distribution<double> dist(range.lo, range.hi);
  std::vector<T> out(kCount);
  for (T& v : out) v = T(static_cast<float>(dist(rng)));
  return out;
}

template <class T>
void check_case(const Case& c, const char* prefix, double tolerance, Dtype dtype,
                std::mt19937& rng) {
  const auto x = random_values<T>(c.x, rng);
  const auto y = random_values<T>(c.y, rng);
  const auto z = random_values<T>(c.z, rng);
  const std::string body =
      "uint i = thread_position_in_grid.x;\n"
      "auto x = a[i];\n"
      "auto y = b[i];\n"
      "auto z = c[i];\n"
      "using T = decltype(x);\n"
      "out[i] = " +
      std::string(prefix) + c.call + ";";
  const CustomKernel kernel("math", {"a", "b", "c"}, {"out"}, body);
  ApplyOptions options;
  options.init_value = kNaN;
  const std::vector<Array> out = kernel.apply(
      {Array::from_data(x, {kCount}), Array::from_data(y, {kCount}), Array::from_data(z, {kCount})},
      {OutputSpec{{kCount}, dtype}}, Dim3{kCount}, Dim3{256}, options);
  std::vector<double> want(kCount);
  for (int i = 0; i < kCount; ++i) {
    want[i] = c.want(static_cast<float>(x[i]), static_cast<float>(y[i]), static_cast<float>(z[i]));
  }
  EXPECT_TRUE(close_to(out[0].to_vector<T>(), want, tolerance))
      << prefix << c.call << " on " << to_string(dtype);
}

class CustomMathGpu : public ::testing::Test {
 protected:
  void SetUp() override { KREG_REQUIRE_GPU(); }
  std::mt19937 rng_{7};
};

TEST_F(CustomMathGpu, EachFunctionInFloat) {
  for (const Case& c : cases()) {
    check_case<float>(c, "metal::", 2e-6, Dtype::Float32, rng_);
    if (c.fast_tolerance > 0)
      check_case<float>(c, "fast::", c.fast_tolerance, Dtype::Float32, rng_);
  }
}

// Computed in float and rounded once to the 16-bit type: within about half its ulp.
TEST_F(CustomMathGpu, EachFunctionInHalf) {
  for (const Case& c : cases()) {
    check_case<half>(c, "metal::", 1e-3, Dtype::Float16, rng_);
    if (c.fast_tolerance > 0) {
      check_case<half>(c, "fast::", 1e-3 + c.fast_tolerance, Dtype::Float16, rng_);
    }
  }
}

TEST_F(CustomMathGpu, EachFunctionInBfloat16) {
  for (const Case& c : cases()) {
    check_case<bfloat16>(c, "metal::", 8e-3, Dtype::BFloat16, rng_);
    if (c.fast_tolerance > 0) {
      check_case<bfloat16>(c, "fast::", 8e-3 + c.fast_tolerance, Dtype::BFloat16, rng_);
    }
  }
}

// What Metal defines at the edges: sign and saturate of NaN are 0, sign keeps a zero's sign,
// clamp of NaN is the lower bound, fract stays below 1, powr of a negative base is NaN.
TEST_F(CustomMathGpu, SpecialValues) {
  const std::vector<float> x = {std::nanf(""), -0.0f, 0.0f, -1e-9f, INFINITY, -1.0f, 2.5f};
  // Column 7 takes fract of a half of v * 1e5: -1e-4 for element 3, whose fract rounds to 1.
  const std::string body =
      "uint i = thread_position_in_grid.x;\n"
      "float v = a[i];\n"
      "out[i * 8 + 0] = sign(v);\n"
      "out[i * 8 + 1] = saturate(v);\n"
      "out[i * 8 + 2] = clamp(v, 0.0f, 1.0f);\n"
      "out[i * 8 + 3] = fract(v);\n"
      "out[i * 8 + 4] = powr(v, 2.0f);\n"
      "out[i * 8 + 5] = metal::isnan(v) + 2 * metal::isinf(v) + 4 * metal::isfinite(v);\n"
      "out[i * 8 + 6] = metal::signbit(sign(v));\n"
      "out[i * 8 + 7] = float(fract(float16_t(v * 1e5f)));\n";
  const CustomKernel kernel("edges", {"a"}, {"out"}, body);
  const int n = static_cast<int>(x.size());
  ApplyOptions options;
  options.init_value = kNaN;
  auto out =
      kernel.apply({Array::from_data(x, {n})}, {OutputSpec{{std::int64_t{n} * 8}, Dtype::Float32}},
                   Dim3{static_cast<unsigned>(n)}, Dim3{32}, options);
  const std::vector<float> got = out[0].to_vector<float>();
  const auto at = [&](int i, int k) { return got[i * 8 + k]; };
  // NaN
  EXPECT_EQ(at(0, 0), 0.0f);
  EXPECT_EQ(at(0, 1), 0.0f);
  EXPECT_EQ(at(0, 2), 0.0f);
  EXPECT_TRUE(std::isnan(at(0, 3)));
  EXPECT_EQ(at(0, 5), 1.0f);
  // -0 and +0
  EXPECT_EQ(at(1, 0), 0.0f);
  EXPECT_EQ(at(1, 6), 1.0f);
  EXPECT_EQ(at(2, 6), 0.0f);
  // A tiny negative value: fract just below 1, in float and in half.
  EXPECT_EQ(at(3, 3), 0x1.fffffep-1f);
  EXPECT_EQ(at(3, 7), 0x1.ffcp-1f);
  EXPECT_EQ(at(3, 0), -1.0f);
  // Infinity
  EXPECT_EQ(at(4, 1), 1.0f);
  EXPECT_EQ(at(4, 5), 2.0f);
  // -1: powr is NaN, pow would not be.
  EXPECT_TRUE(std::isnan(at(5, 4)));
  EXPECT_EQ(at(5, 2), 0.0f);
  EXPECT_EQ(at(6, 3), 0.5f);
  EXPECT_FLOAT_EQ(at(6, 4), 6.25f);
  EXPECT_EQ(at(6, 5), 4.0f);
}

TEST_F(CustomMathGpu, IntegersAndMixedTypes) {
  const std::vector<std::int32_t> x = {-7, 0, 3, 12, -1};
  const std::string body =
      "uint i = thread_position_in_grid.x;\n"
      "int v = a[i];\n"
      "float16_t h = float16_t(float(v) * 0.25f);\n"
      "out[i * 5 + 0] = clamp(v, -2, 5);\n"
      "out[i * 5 + 1] = abs(v) + abs(uint(v));\n"
      "out[i * 5 + 2] = select(v, 100, v > 0);\n"
      "out[i * 5 + 3] = int(metal::max(h, 0.0f) * 4);\n"
      "out[i * 5 + 4] = int(float(min(h, 1)) * 4);\n";
  const CustomKernel kernel("ints", {"a"}, {"out"}, body);
  const int n = static_cast<int>(x.size());
  ApplyOptions options;
  options.init_value = -12345;
  auto out =
      kernel.apply({Array::from_data(x, {n})}, {OutputSpec{{std::int64_t{n} * 5}, Dtype::Int32}},
                   Dim3{static_cast<unsigned>(n)}, Dim3{32}, options);
  const std::vector<std::int32_t> got = out[0].to_vector<std::int32_t>();
  for (int i = 0; i < n; ++i) {
    const int v = x[i];
    EXPECT_EQ(got[i * 5 + 0], std::min(std::max(v, -2), 5)) << v;
    EXPECT_EQ(got[i * 5 + 1], static_cast<std::int32_t>(std::abs(v) + static_cast<unsigned>(v)))
        << v;
    EXPECT_EQ(got[i * 5 + 2], v > 0 ? 100 : v) << v;
    EXPECT_EQ(got[i * 5 + 3], std::max(v, 0)) << v;
    EXPECT_EQ(got[i * 5 + 4], std::min(v, 4)) << v;
  }
}

// Row-major listing of a view whose element 0 is values[offset].
std::vector<double> gather(const std::vector<float>& values, const Array& view,
                           std::int64_t offset) {
  const Shape& shape = view.shape();
  const auto& strides = view.strides();
  std::vector<double> out;
  std::vector<std::int64_t> index(shape.size(), 0);
  for (std::int64_t n = 0; n < view.size(); ++n) {
    std::int64_t at = offset;
    for (std::size_t d = 0; d < shape.size(); ++d) at += index[d] * strides[d];
    out.push_back(values[at]);
    for (std::size_t d = shape.size(); d-- > 0;) {
      if (++index[d] < shape[d]) break;
      index[d] = 0;
    }
  }
  return out;
}

class ElemToLocGpu : public CustomMathGpu {
 protected:
  // Runs `body` with ensure_row_contiguous off, over `grid`, and compares with the view.
  void expect_view(const char* body, const Array& view, std::int64_t offset, Dim3 grid,
                   Dim3 threadgroup) {
    ASSERT_FALSE(view.is_row_contiguous());
    CustomKernelOptions kernel_options;
    kernel_options.ensure_row_contiguous = false;
    const CustomKernel kernel("view", {"a"}, {"out"}, body, kernel_options);
    ApplyOptions options;
    options.init_value = kNaN;
    auto out = kernel.apply({view}, {OutputSpec{view.shape(), Dtype::Float32}}, grid, threadgroup,
                            options);
    EXPECT_TRUE(close_to(out[0].to_vector<float>(), gather(values_, view, offset), 0)) << body;
  }
  std::vector<float> values_ = test::random_vector<float>(std::size_t{4} * 5 * 6 * 7, rng_);
};

TEST_F(ElemToLocGpu, FlatIndexOverTransposedAndSlicedViews) {
  const char* body =
      "uint i = thread_position_in_grid.x;\n"
      "out[i] = a[elem_to_loc(i, a_shape, a_strides, a_ndim)];";
  const Array base = Array::from_data(values_, {4, 5, 6, 7});
  const Array permuted = base.transpose({3, 1, 0, 2});
  expect_view(body, permuted, 0, Dim3{840}, Dim3{128});
  const Array sliced = base.slice(3, 2, 7, 2).slice(1, 1, 5, 3);
  expect_view(body, sliced, 1 * 42 + 2, Dim3{static_cast<unsigned>(sliced.size())}, Dim3{64});
  // 64-bit offsets from a 32-bit index.
  expect_view(
      "uint i = thread_position_in_grid.x;\n"
      "out[i] = a[elem_to_loc<int64_t>(i, a_shape, a_strides, a_ndim)];",
      permuted, 0, Dim3{840}, Dim3{128});
}

TEST_F(ElemToLocGpu, GridPositionForms) {
  // 3-D: x walks the last dimension, z the first.
  const Array cube = Array::from_data(values_, {4, 5, 42}).transpose({2, 0, 1});  // 42 x 4 x 5
  const char* by_position =
      "uint3 p = thread_position_in_grid;\n"
      "out[(p.z * 4 + p.y) * 5 + p.x] = a[elem_to_loc(p, a_shape, a_strides, a_ndim)];";
  expect_view(by_position, cube, 0, Dim3{5, 4, 42}, Dim3{5, 4, 8});
  expect_view(
      "uint3 p = thread_position_in_grid;\n"
      "out[(p.z * 4 + p.y) * 5 + p.x] = a[elem_to_loc_3(p, a_strides)];",
      cube, 0, Dim3{5, 4, 42}, Dim3{5, 4, 8});
  const Array matrix = Array::from_data(values_, {20, 42}).transpose();  // 42 x 20
  expect_view(
      "uint3 p = thread_position_in_grid;\n"
      "out[p.y * 20 + p.x] = a[elem_to_loc_2(p, a_strides)];",
      matrix, 0, Dim3{20, 42}, Dim3{16, 16});
  const Array stepped = Array::from_data(values_, {840}).slice(0, 1, 840, 3);
  expect_view(
      "uint i = thread_position_in_grid.x;\n"
      "out[i] = a[elem_to_loc_1(i, a_strides[0])];",
      stepped, 1, Dim3{static_cast<unsigned>(stepped.size())}, Dim3{128});
}

TEST_F(CustomMathGpu, Ceildiv) {
  const CustomKernel kernel("ceil", {"a"}, {"out"},
                            "uint i = thread_position_in_grid.x; out[i] = ceildiv(i, 3) + a[0];");
  ApplyOptions options;
  options.init_value = -1;
  auto out = kernel.apply({Array::from_data<std::int32_t>({0}, {1})},
                          {OutputSpec{{100}, Dtype::Int32}}, Dim3{100}, Dim3{32}, options);
  const std::vector<std::int32_t> got = out[0].to_vector<std::int32_t>();
  for (int i = 0; i < 100; ++i) EXPECT_EQ(got[i], (i + 2) / 3) << i;
}

}  // namespace
}  // namespace kreg
