// Metal's math names (kreg/device/custom_math.cuh) in custom-kernel bodies: each form compiles
// through CustomKernel with NVRTC for sm_90, returns the type Metal gives it, and pulls the
// math part in only when the body names it. Needs no GPU.
#include "test_support.hpp"

#include <string>
#include <vector>

namespace kreg {
namespace {

using test::contains;
using test::custom_compile_error;

constexpr const char* kMathInclude = "#include <kreg/device/custom_math.cuh>";
constexpr const char* kUtilsInclude = "#include <kreg/device/custom_utils.cuh>";

Array input_of(Dtype dtype, std::int64_t n = 64) {
  switch (dtype) {
    case Dtype::Float16: return Array::from_data(std::vector<half>(n, half(0.5f)), {n});
    case Dtype::BFloat16: return Array::from_data(std::vector<bfloat16>(n, bfloat16(0.5f)), {n});
    case Dtype::Int32: return Array::from_data(std::vector<std::int32_t>(n, 1), {n});
    case Dtype::UInt32: return Array::from_data(std::vector<std::uint32_t>(n, 1), {n});
    case Dtype::Int64: return Array::from_data(std::vector<std::int64_t>(n, 1), {n});
    default: return Array::from_data(std::vector<float>(n, 0.5f), {n});
  }
}

// Compiles `body` over inputs a and b of `dtype` and an output of `out_dtype`.
std::string compile_error(const std::string& body, Dtype dtype, Dtype out_dtype,
                          const CustomKernelOptions& options = {}) {
  const CustomKernel kernel("math", {"a", "b"}, {"out"}, body, options);
  return custom_compile_error(kernel, {input_of(dtype), input_of(dtype)},
                              {OutputSpec{{64}, out_dtype}});
}

// A body that evaluates each expression and asserts its type is `type`.
std::string typed_body(const std::vector<std::string>& expressions, const std::string& type) {
  std::string body =
      "uint i = thread_position_in_grid.x;\n"
      "auto x = a[i];\n"
      "auto y = b[i];\n"
      "using T = decltype(x);\n"
      "float acc = 0;\n";
  for (const std::string& e : expressions) {
    body.append("acc += float(").append(e).append(");\n");
    body.append("static_assert(kreg::detail::is_same<decltype(").append(e).append("), ");
    body.append(type).append(">, \"").append(e).append("\");\n");
  }
  return body + "out[i] = acc;\n";
}

std::vector<std::string> with_prefix(const std::string& prefix,
                                     const std::vector<std::string>& calls) {
  std::vector<std::string> out;
  out.reserve(calls.size());
  for (const std::string& call : calls) out.push_back(prefix + call);
  return out;
}

// Every floating-point function of the part, each as it returns its argument's type.
const std::vector<std::string> kFloatCalls = {
    "exp(x)",         "exp2(x)",      "exp10(x)",
    "log(x)",         "log2(x)",      "log10(x)",
    "pow(x, y)",      "powr(x, y)",   "sqrt(x)",
    "rsqrt(x)",       "sin(x)",       "cos(x)",
    "tan(x)",         "asin(x)",      "acos(x)",
    "atan(x)",        "atan2(x, y)",  "sinh(x)",
    "cosh(x)",        "tanh(x)",      "asinh(x)",
    "acosh(x)",       "atanh(x)",     "cbrt(x)",
    "erf(x)",         "abs(x)",       "fabs(x)",
    "sign(x)",        "step(x, y)",   "smoothstep(x, y, x)",
    "mix(x, y, x)",   "fract(x)",     "trunc(x)",
    "round(x)",       "rint(x)",      "floor(x)",
    "ceil(x)",        "fmod(x, y)",   "ldexp(x, 2)",
    "copysign(x, y)", "fma(x, y, x)", "min(x, y)",
    "max(x, y)",      "fmin(x, y)",   "fmax(x, y)",
    "clamp(x, y, x)", "saturate(x)",  "select(x, y, true)",
    "divide(x, y)"};
// What metal::fast:: has an intrinsic for; the rest of it is metal::'s.
const std::vector<std::string> kFastCalls = {
    "exp(x)",    "exp2(x)",    "exp10(x)",     "log(x)",   "log2(x)",       "log10(x)",
    "pow(x, y)", "powr(x, y)", "sin(x)",       "cos(x)",   "tan(x)",        "tanh(x)",
    "sqrt(x)",   "rsqrt(x)",   "divide(x, y)", "floor(x)", "clamp(x, y, x)"};
const std::vector<std::string> kPredicates = {"isnan(x)", "isinf(x)", "isfinite(x)", "signbit(x)"};

TEST(MetalMath, MetalExpCompilesInEachNamespace) {
  for (const char* call :
       {"metal::exp(a[i])", "metal::precise::exp(a[i])", "metal::fast::exp(a[i])"}) {
    const std::string body =
        std::string("uint i = thread_position_in_grid.x; out[i] = ") + call + ";";
    EXPECT_EQ(compile_error(body, Dtype::Float32, Dtype::Float32), "") << call;
  }
}

// MLX's preamble says `using namespace metal;`, and so does the part; a header that says it
// again changes nothing.
TEST(MetalMath, FastAndPreciseUnqualified) {
  const std::string body =
      "uint i = thread_position_in_grid.x;\n"
      "out[i] = fast::exp(a[i]) + precise::sqrt(b[i]) + exp(a[i]) + clamp(a[i], 0.0f, 1.0f);";
  CustomKernelOptions with_using;
  with_using.header = "using namespace metal;";
  EXPECT_EQ(compile_error(body, Dtype::Float32, Dtype::Float32, with_using), "");
  EXPECT_EQ(compile_error(body, Dtype::Float32, Dtype::Float32), "");
}

TEST(MetalMath, WholeSetOnEachFloatTypeReturnsThatType) {
  for (const auto& [dtype, type] :
       {std::pair{Dtype::Float32, "float"}, std::pair{Dtype::Float16, "kreg::half"},
        std::pair{Dtype::BFloat16, "kreg::bfloat16"}}) {
    for (const char* prefix : {"metal::", "metal::precise::", ""}) {
      EXPECT_EQ(compile_error(typed_body(with_prefix(prefix, kFloatCalls), type), dtype, dtype), "")
          << type << ", " << prefix;
    }
    for (const char* prefix : {"metal::fast::", "fast::"}) {
      EXPECT_EQ(compile_error(typed_body(with_prefix(prefix, kFastCalls), type), dtype, dtype), "")
          << type << ", " << prefix;
    }
    EXPECT_EQ(compile_error(typed_body(with_prefix("metal::", kPredicates), "bool"), dtype, dtype),
              "")
        << type;
  }
}

TEST(MetalMath, IntegerMinMaxClampAbsSelect) {
  const std::vector<std::string> calls = {"min(x, y)", "max(x, y)", "clamp(x, y, x)", "abs(x)",
                                          "select(x, y, x < y)"};
  for (const auto& [dtype, type] :
       {std::pair{Dtype::Int32, "int32_t"}, std::pair{Dtype::UInt32, "uint32_t"},
        std::pair{Dtype::Int64, "int64_t"}}) {
    for (const char* prefix : {"metal::", ""}) {
      EXPECT_EQ(compile_error(typed_body(with_prefix(prefix, calls), type), dtype, Dtype::Float32),
                "")
          << type << ", " << prefix;
    }
  }
}

// A 16-bit value with a float gives float, as Metal promotes; with an integer it stays 16-bit;
// half with bfloat16 gives float.
TEST(MetalMath, MixedArgumentsResolveWithoutAmbiguity) {
  const std::string body =
      "uint i = thread_position_in_grid.x;\n"
      "float16_t h = a[i];\n"
      "bfloat16_t g = bfloat16_t(b[i]);\n"
      "static_assert(kreg::detail::is_same<decltype(metal::max(h, 0.0f)), float>, \"\");\n"
      "static_assert(kreg::detail::is_same<decltype(max(0.0f, h)), float>, \"\");\n"
      "static_assert(kreg::detail::is_same<decltype(min(h, 1)), float16_t>, \"\");\n"
      "static_assert(kreg::detail::is_same<decltype(min(h, g)), float>, \"\");\n"
      "static_assert(kreg::detail::is_same<decltype(clamp(h, 0, 1)), float16_t>, \"\");\n"
      "static_assert(kreg::detail::is_same<decltype(clamp(h, 0.0f, 1.0f)), float>, \"\");\n"
      "static_assert(kreg::detail::is_same<decltype(mix(h, h, 0.5f)), float>, \"\");\n"
      "static_assert(kreg::detail::is_same<decltype(pow(h, 2.0f)), float>, \"\");\n"
      "static_assert(kreg::detail::is_same<decltype(select(h, 0, true)), float16_t>, \"\");\n"
      "static_assert(kreg::detail::is_same<decltype(clamp(a[i], 0, 1)), float16_t>, \"\");\n"
      "static_assert(kreg::detail::is_same<decltype(fast::exp(h)), float16_t>, \"\");\n"
      "static_assert(kreg::detail::is_same<decltype(clamp(1.0f, 0, 2)), float>, \"\");\n"
      "out[i] = metal::max(h, 0.0f) + min(h, g) + clamp(h, 0, 1);";
  EXPECT_EQ(compile_error(body, Dtype::Float16, Dtype::Float32), "");
}

TEST(MetalMath, Constants) {
  const std::string body =
      "uint i = thread_position_in_grid.x;\n"
      "static_assert(INFINITY > FLT_MAX && HUGE_VALF == INFINITY, \"\");\n"
      "static_assert(MAXFLOAT == FLT_MAX && FLT_MIN > 0 && FLT_EPSILON > 0, \"\");\n"
      "static_assert(M_PI_F > 3.14159f && M_PI_F < 3.1416f && M_E_F > 2.718f, \"\");\n"
      "static_assert(M_SQRT2_F * M_SQRT1_2_F > 0.99999f, \"\");\n"
      "out[i] = isnan(NAN) ? a[i] * M_PI_F + M_PI_2_F + M_PI_4_F + M_1_PI_F + M_2_PI_F + "
      "M_2_SQRTPI_F + M_LN2_F + M_LN10_F + M_LOG2E_F + M_LOG10E_F : INFINITY;";
  EXPECT_EQ(compile_error(body, Dtype::Float32, Dtype::Float32), "");
}

// The part's forms are templates, so a header's own non-template helpers of the same names
// win over them instead of making calls ambiguous.
TEST(MetalMath, AHeadersOwnHelpersStillWin) {
  CustomKernelOptions options;
  options.header =
      "__device__ inline float clamp(float x, float lo, float hi) { return x < lo ? lo : x > hi "
      "? hi : x; }\n"
      "__device__ inline float sign(float x) { return x < 0 ? -1.0f : 1.0f; }\n"
      "__device__ inline int ceildiv(int n, int m) { return (n + m - 1) / m; }\n";
  const std::string body =
      "uint i = thread_position_in_grid.x;\n"
      "out[i] = clamp(a[i], 0.0f, 1.0f) + sign(b[i]) + ceildiv(5, 2) + metal::exp(a[i]);";
  EXPECT_EQ(compile_error(body, Dtype::Float32, Dtype::Float32, options), "");
}

// CUDA's own float functions and Metal's, side by side and unqualified.
TEST(MetalMath, CudaAndMetalNamesSideBySide) {
  const std::string body =
      "uint i = thread_position_in_grid.x;\n"
      "float v = expf(a[i]) + sqrtf(b[i]) + __expf(a[i]) + fminf(a[i], b[i]);\n"
      "out[i] = v + mix(a[i], b[i], 0.5f) + simd_sum(a[i]);";
  EXPECT_EQ(compile_error(body, Dtype::Float32, Dtype::Float32), "");
}

TEST(MetalMath, TheMathPartComesOnlyWithItsNames) {
  const auto source = [](const std::string& body) {
    const CustomKernel kernel("math", {"a"}, {"out"}, body);
    return kernel.generated_source({input_of(Dtype::Float32)}, {OutputSpec{{64}, Dtype::Float32}});
  };
  const std::string trivial = source("uint i = thread_position_in_grid.x; out[i] = 2 * a[i];");
  EXPECT_FALSE(contains(trivial, kMathInclude)) << trivial;
  EXPECT_FALSE(contains(trivial, kUtilsInclude)) << trivial;
  EXPECT_FALSE(contains(trivial, "custom_traits")) << trivial;
  // CUDA has these for float itself, and whole words only count.
  for (const char* body : {"out[0] = exp(a[0]) + min(a[0], 1.0f) + sqrtf(a[0]);",
                           "int mixed = 1, stepping = 2; unsigned signed_ = 3; out[0] = mixed;",
                           "out[0] = a[0]; // metals, fastest, precisely",
                           "float step = 0.5f, sign = -1; bool fast = true;\n"
                           "out[0] = fast ? a[0] * step * sign : 0;"}) {
    EXPECT_FALSE(contains(source(body), kMathInclude)) << body;
  }
  for (const char* body :
       {"out[0] = metal::exp(a[0]);", "out[0] = fast::exp(a[0]);", "out[0] = precise::sqrt(a[0]);",
        "out[0] = clamp (a[0], 0.0f, 1.0f);", "out[0] = metal :: exp(a[0]);",
        "out[0] = select(a[0], 1.0f, true);", "out[0] = saturate(a[0]);",
        "out[0] = mix(a[0], 1.0f, 0.5f);", "out[0] = step(0.f, a[0]);",
        "out[0] = smoothstep(0.f, 1.f, a[0]);", "out[0] = fract(a[0]);", "out[0] = sign(a[0]);",
        "out[0] = powr(a[0], 2.f);"}) {
    EXPECT_TRUE(contains(source(body), kMathInclude)) << body;
  }
  // The constants are a part of their own.
  const std::string constants = "#include <kreg/device/custom_constants.cuh>";
  EXPECT_FALSE(contains(source("out[0] = metal::exp(a[0]);"), constants));
  for (const char* body : {"out[0] = M_PI_F;", "out[0] = INFINITY;", "out[0] = FLT_MAX;"}) {
    EXPECT_TRUE(contains(source(body), constants)) << body;
    EXPECT_FALSE(contains(source(body), kMathInclude)) << body;
  }
  // The 16-bit forms come only with a 16-bit type.
  const std::string f16 = "#include <kreg/device/custom_math_float16.cuh>";
  EXPECT_FALSE(contains(source("out[0] = metal::exp(a[0]);"), f16));
  EXPECT_TRUE(contains(source("out[0] = metal::exp(float16_t(a[0]));"), f16));
  const CustomKernel on_half("math", {"a"}, {"out"}, "out[0] = metal::exp(a[0]);");
  EXPECT_TRUE(contains(
      on_half.generated_source({input_of(Dtype::Float16)}, {OutputSpec{{64}, Dtype::Float16}}),
      f16));
  CustomKernelOptions in_header;
  in_header.header = "__device__ inline float f(float x) { return metal::exp(x); }";
  const CustomKernel with_header("math", {"a"}, {"out"}, "out[0] = f(a[0]);", in_header);
  EXPECT_TRUE(contains(
      with_header.generated_source({input_of(Dtype::Float32)}, {OutputSpec{{64}, Dtype::Float32}}),
      kMathInclude));
}

}  // namespace
}  // namespace kreg
