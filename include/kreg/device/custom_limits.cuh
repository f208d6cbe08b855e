#pragma once
/// \file
/// MLX's `Limits<T>`, which the utilities MLX's `metal_kernel` preamble brings define and
/// reductions use as the identity of max and min: `max`, `min`, `finite_max` and
/// `finite_min` of each scalar type. For the floats `max` and `min` are the infinities and
/// `finite_max`/`finite_min` the largest finite values; for integers and bool both pairs are
/// the type's bounds.

#include <kreg/device/half.cuh>

namespace kreg::detail {

template <class T, T Max, T Min>
struct integer_limits {
  static constexpr T max = Max;
  static constexpr T min = Min;
  static constexpr T finite_max = Max;
  static constexpr T finite_min = Min;
};

template <class T, unsigned short Infinity, unsigned short Largest>
struct float16_limits {
  static constexpr T max = T::from_bits(Infinity);
  static constexpr T min = T::from_bits(Infinity | 0x8000u);
  static constexpr T finite_max = T::from_bits(Largest);
  static constexpr T finite_min = T::from_bits(Largest | 0x8000u);
};

}  // namespace kreg::detail

template <class T>
struct Limits;

template <>
struct Limits<bool> : kreg::detail::integer_limits<bool, true, false> {};
template <>
struct Limits<signed char> : kreg::detail::integer_limits<signed char, 127, -128> {};
template <>
struct Limits<char> : kreg::detail::integer_limits<char, static_cast<char>(127),
                                                    static_cast<char>(-128)> {};
template <>
struct Limits<unsigned char> : kreg::detail::integer_limits<unsigned char, 255, 0> {};
template <>
struct Limits<short> : kreg::detail::integer_limits<short, 32767, -32768> {};
template <>
struct Limits<unsigned short> : kreg::detail::integer_limits<unsigned short, 65535, 0> {};
template <>
struct Limits<int> : kreg::detail::integer_limits<int, 2147483647, -2147483647 - 1> {};
template <>
struct Limits<unsigned> : kreg::detail::integer_limits<unsigned, 4294967295u, 0> {};
template <>
struct Limits<long long>
    : kreg::detail::integer_limits<long long, 9223372036854775807LL,
                                   -9223372036854775807LL - 1> {};
template <>
struct Limits<unsigned long long>
    : kreg::detail::integer_limits<unsigned long long, 18446744073709551615ULL, 0> {};
template <>
struct Limits<long>
    : kreg::detail::integer_limits<long, sizeof(long) == 8 ? 9223372036854775807L : 2147483647L,
                                   sizeof(long) == 8 ? -9223372036854775807L - 1
                                                     : -2147483647L - 1> {};
template <>
struct Limits<unsigned long>
    : kreg::detail::integer_limits<unsigned long,
                                   sizeof(long) == 8 ? 18446744073709551615UL : 4294967295UL, 0> {
};

template <>
struct Limits<float> {
  static constexpr float max = __builtin_bit_cast(float, 0x7f800000u);
  static constexpr float min = __builtin_bit_cast(float, 0xff800000u);
  static constexpr float finite_max = 0x1.fffffep127f;
  static constexpr float finite_min = -0x1.fffffep127f;
};
template <>
struct Limits<double> {
  static constexpr double max = __builtin_bit_cast(double, 0x7ff0000000000000ull);
  static constexpr double min = __builtin_bit_cast(double, 0xfff0000000000000ull);
  static constexpr double finite_max = 0x1.fffffffffffffp1023;
  static constexpr double finite_min = -0x1.fffffffffffffp1023;
};
template <>
struct Limits<kreg::half> : kreg::detail::float16_limits<kreg::half, 0x7c00u, 0x7bffu> {};
template <>
struct Limits<kreg::bfloat16> : kreg::detail::float16_limits<kreg::bfloat16, 0x7f80u, 0x7f7fu> {};
