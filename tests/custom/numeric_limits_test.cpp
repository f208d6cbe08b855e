// Metal's numeric_limits (kreg/device/custom_numeric_limits.cuh) on the host, against the
// C++ library's for the types both have and against the formats' bit patterns for the 16-bit
// floats. The header is device code that also compiles as host C++.
#include <kreg/device/custom_numeric_limits.cuh>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace kreg {
namespace {

template <class T>
void expect_like_std() {
  using M = metal::numeric_limits<T>;
  using S = std::numeric_limits<T>;
  EXPECT_TRUE(M::is_specialized);
  EXPECT_EQ(M::is_signed, S::is_signed);
  EXPECT_EQ(M::is_integer, S::is_integer);
  EXPECT_EQ(M::has_infinity, S::has_infinity);
  EXPECT_EQ(M::has_quiet_NaN, S::has_quiet_NaN);
  EXPECT_EQ(M::digits, S::digits);
  EXPECT_EQ(M::min(), S::min());
  EXPECT_EQ(M::max(), S::max());
  EXPECT_EQ(M::lowest(), S::lowest());
  EXPECT_EQ(M::epsilon(), S::epsilon());
  EXPECT_EQ(M::denorm_min(), S::denorm_min());
  if constexpr (S::has_infinity) {
    EXPECT_EQ(M::infinity(), S::infinity());
    EXPECT_TRUE(std::isnan(M::quiet_NaN()));
  }
}

TEST(NumericLimits, TheTypesTheCppLibraryHasAgreeWithIt) {
  expect_like_std<bool>();
  expect_like_std<char>();
  expect_like_std<signed char>();
  expect_like_std<unsigned char>();
  expect_like_std<short>();
  expect_like_std<unsigned short>();
  expect_like_std<int>();
  expect_like_std<unsigned>();
  expect_like_std<long>();
  expect_like_std<unsigned long>();
  expect_like_std<long long>();
  expect_like_std<unsigned long long>();
  expect_like_std<float>();
  expect_like_std<double>();
  constexpr float infinity = metal::numeric_limits<float>::infinity();  // usable in constants
  EXPECT_TRUE(std::isinf(infinity));
}

template <class T>
void expect_16_bit(int digits, float min, float max, float epsilon) {
  using M = metal::numeric_limits<T>;
  EXPECT_TRUE(M::is_signed);
  EXPECT_FALSE(M::is_integer);
  EXPECT_EQ(M::digits, digits);
  EXPECT_EQ(float(M::min()), min);
  EXPECT_EQ(float(M::max()), max);
  EXPECT_EQ(float(M::lowest()), -max);
  EXPECT_EQ(float(M::epsilon()), epsilon);
  // The next value after 1 is 1 + epsilon, and 1 + epsilon / 2 rounds back to 1.
  EXPECT_EQ(float(T(1.0F + epsilon)), 1.0F + epsilon);
  EXPECT_EQ(float(T(1.0F + epsilon / 2)), 1.0F);
  // max is finite and the largest: doubling it overflows to infinity.
  EXPECT_TRUE(std::isinf(float(T(float(M::max()) * 2))));
  EXPECT_EQ(float(M::infinity()), std::numeric_limits<float>::infinity());
  EXPECT_EQ(float(-M::infinity()), -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(float(M::quiet_NaN())));
  EXPECT_GT(float(M::denorm_min()), 0.0F);
  EXPECT_LT(float(M::denorm_min()), min);
  EXPECT_EQ(float(T(float(M::denorm_min()) / 4)), 0.0F);
}

TEST(NumericLimits, SixteenBitFloatsFromTheirFormats) {
  expect_16_bit<half>(11, 0x1p-14F, 65504.0F, 0x1p-10F);
  expect_16_bit<bfloat16>(8, 0x1p-126F, 0x1.fep127F, 0x1p-7F);
}

TEST(NumericLimits, ATypeWithoutLimitsSaysSo) {
  struct Other {};
  EXPECT_FALSE(metal::numeric_limits<Other>::is_specialized);
}

}  // namespace
}  // namespace kreg
