#pragma once
/// \file
/// Metal's `numeric_limits<T>` (from <metal_types>), with std::numeric_limits' members, for
/// the scalar types a custom kernel sees: bool, the integers, float, double, `half` and
/// `bfloat`. For the float types `min()` is the smallest positive normal value and `lowest()`
/// the most negative finite one; `infinity()`, `quiet_NaN()` and `epsilon()` are zero for the
/// integers, as in C++. In namespace `metal`, reached unqualified through `using namespace
/// metal;` as MLX's preamble has it.

#include <kreg/device/half.cuh>

namespace kreg::detail {

template <class T, bool Signed, T Min, T Max>
struct integer_numeric_limits {
  static constexpr bool is_specialized = true;
  static constexpr bool is_signed = Signed;
  static constexpr bool is_integer = true;
  static constexpr bool is_exact = true;
  static constexpr bool has_infinity = false;
  static constexpr bool has_quiet_NaN = false;
  // Value bits: all of them, less the sign's; bool has one.
  static constexpr int digits = sizeof(T) == 1 && Max == T(1) ? 1 : int(sizeof(T) * 8) - Signed;
  KREG_HOST_DEVICE static constexpr T min() noexcept { return Min; }
  KREG_HOST_DEVICE static constexpr T max() noexcept { return Max; }
  KREG_HOST_DEVICE static constexpr T lowest() noexcept { return Min; }
  KREG_HOST_DEVICE static constexpr T epsilon() noexcept { return T(0); }
  KREG_HOST_DEVICE static constexpr T infinity() noexcept { return T(0); }
  KREG_HOST_DEVICE static constexpr T quiet_NaN() noexcept { return T(0); }
  KREG_HOST_DEVICE static constexpr T denorm_min() noexcept { return T(0); }
};

// A float type's limits, from the bit patterns of its values in `Bits`, its unsigned word:
// the smallest normal, the largest finite, the distance from 1 to the next value, infinity,
// the quiet NaN, and the sign bit (the lowest value is the largest with it set).
template <class T, class Bits, int Digits, Bits Min, Bits Max, Bits Epsilon, Bits Infinity,
          Bits NaN, Bits Sign>
struct float_numeric_limits {
  static constexpr bool is_specialized = true;
  static constexpr bool is_signed = true;
  static constexpr bool is_integer = false;
  static constexpr bool is_exact = false;
  static constexpr bool has_infinity = true;
  static constexpr bool has_quiet_NaN = true;
  static constexpr int digits = Digits;
  KREG_HOST_DEVICE static constexpr T min() noexcept { return from(Min); }
  KREG_HOST_DEVICE static constexpr T max() noexcept { return from(Max); }
  KREG_HOST_DEVICE static constexpr T lowest() noexcept { return from(Bits(Max | Sign)); }
  KREG_HOST_DEVICE static constexpr T epsilon() noexcept { return from(Epsilon); }
  KREG_HOST_DEVICE static constexpr T infinity() noexcept { return from(Infinity); }
  KREG_HOST_DEVICE static constexpr T quiet_NaN() noexcept { return from(NaN); }
  KREG_HOST_DEVICE static constexpr T denorm_min() noexcept { return from(Bits(1)); }

 private:
  KREG_HOST_DEVICE static constexpr T from(Bits bits) noexcept {
    if constexpr (sizeof(T) == 2) {
      return T::from_bits(bits);
    } else {
      return __builtin_bit_cast(T, bits);
    }
  }
};

constexpr bool kCharSigned = char(-1) < char(0);

}  // namespace kreg::detail

namespace metal {

template <class T>
struct numeric_limits {
  static constexpr bool is_specialized = false;
};

template <>
struct numeric_limits<bool> : kreg::detail::integer_numeric_limits<bool, false, false, true> {};
template <>
struct numeric_limits<char>
    : kreg::detail::integer_numeric_limits<char, kreg::detail::kCharSigned,
                                           char(kreg::detail::kCharSigned ? -128 : 0),
                                           char(kreg::detail::kCharSigned ? 127 : 255)> {};
template <>
struct numeric_limits<signed char>
    : kreg::detail::integer_numeric_limits<signed char, true, -128, 127> {};
template <>
struct numeric_limits<unsigned char>
    : kreg::detail::integer_numeric_limits<unsigned char, false, 0, 255> {};
template <>
struct numeric_limits<short> : kreg::detail::integer_numeric_limits<short, true, -32768, 32767> {};
template <>
struct numeric_limits<unsigned short>
    : kreg::detail::integer_numeric_limits<unsigned short, false, 0, 65535> {};
template <>
struct numeric_limits<int>
    : kreg::detail::integer_numeric_limits<int, true, -2147483647 - 1, 2147483647> {};
template <>
struct numeric_limits<unsigned>
    : kreg::detail::integer_numeric_limits<unsigned, false, 0, 4294967295u> {};
template <>
struct numeric_limits<long long>
    : kreg::detail::integer_numeric_limits<long long, true, -9223372036854775807LL - 1,
                                           9223372036854775807LL> {};
template <>
struct numeric_limits<unsigned long long>
    : kreg::detail::integer_numeric_limits<unsigned long long, false, 0, 18446744073709551615ULL> {
};
template <>
struct numeric_limits<long>
    : kreg::detail::integer_numeric_limits<
          long, true, sizeof(long) == 8 ? -9223372036854775807L - 1 : -2147483647L - 1,
          sizeof(long) == 8 ? 9223372036854775807L : 2147483647L> {};
template <>
struct numeric_limits<unsigned long>
    : kreg::detail::integer_numeric_limits<
          unsigned long, false, 0, sizeof(long) == 8 ? 18446744073709551615UL : 4294967295UL> {};

template <>
struct numeric_limits<float>
    : kreg::detail::float_numeric_limits<float, unsigned, 24, 0x00800000u, 0x7f7fffffu, 0x34000000u,
                                         0x7f800000u, 0x7fc00000u, 0x80000000u> {};
template <>
struct numeric_limits<double>
    : kreg::detail::float_numeric_limits<double, unsigned long long, 53, 0x0010000000000000ull,
                                         0x7fefffffffffffffull, 0x3cb0000000000000ull,
                                         0x7ff0000000000000ull, 0x7ff8000000000000ull,
                                         0x8000000000000000ull> {};
template <>
struct numeric_limits<kreg::half>
    : kreg::detail::float_numeric_limits<kreg::half, unsigned short, 11, 0x0400, 0x7bff, 0x1400,
                                         0x7c00, 0x7e00, 0x8000> {};
template <>
struct numeric_limits<kreg::bfloat16>
    : kreg::detail::float_numeric_limits<kreg::bfloat16, unsigned short, 8, 0x0080, 0x7f7f, 0x3c00,
                                         0x7f80, 0x7fc0, 0x8000> {};

}  // namespace metal

using namespace metal;
