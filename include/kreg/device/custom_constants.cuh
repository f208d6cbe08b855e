#pragma once
/// \file
/// Metal's float constants (`M_PI_F`, `INFINITY`, `FLT_MAX`, ...), which Metal has as macros.
/// Here they are variables of namespace `metal`, reached unqualified through
/// `using namespace metal;` as in custom_math.cuh, so that they cannot clash with a header's
/// own macros: where a macro of the name exists already it stays in charge, and one defined later
/// takes the name over from there on. A part of its own because twenty namespace-scope
/// variables cost about a millisecond of every compile that includes them.

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)

namespace metal {

#ifndef INFINITY
constexpr float INFINITY = __builtin_bit_cast(float, 0x7f800000u);
#endif
#ifndef NAN
constexpr float NAN = __builtin_bit_cast(float, 0x7fc00000u);
#endif
#ifndef HUGE_VALF
constexpr float HUGE_VALF = __builtin_bit_cast(float, 0x7f800000u);
#endif
#ifndef MAXFLOAT
constexpr float MAXFLOAT = 0x1.fffffep127f;
#endif
#ifndef FLT_MAX
constexpr float FLT_MAX = 0x1.fffffep127f;
#endif
#ifndef FLT_MIN
constexpr float FLT_MIN = 0x1p-126f;
#endif
#ifndef FLT_EPSILON
constexpr float FLT_EPSILON = 0x1p-23f;
#endif
#ifndef M_E_F
constexpr float M_E_F = 2.71828182845904523536f;
#endif
#ifndef M_LOG2E_F
constexpr float M_LOG2E_F = 1.44269504088896340736f;
#endif
#ifndef M_LOG10E_F
constexpr float M_LOG10E_F = 0.434294481903251827651f;
#endif
#ifndef M_LN2_F
constexpr float M_LN2_F = 0.693147180559945309417f;
#endif
#ifndef M_LN10_F
constexpr float M_LN10_F = 2.30258509299404568402f;
#endif
#ifndef M_PI_F
constexpr float M_PI_F = 3.14159265358979323846f;
#endif
#ifndef M_PI_2_F
constexpr float M_PI_2_F = 1.57079632679489661923f;
#endif
#ifndef M_PI_4_F
constexpr float M_PI_4_F = 0.785398163397448309616f;
#endif
#ifndef M_1_PI_F
constexpr float M_1_PI_F = 0.318309886183790671538f;
#endif
#ifndef M_2_PI_F
constexpr float M_2_PI_F = 0.636619772367581343076f;
#endif
#ifndef M_2_SQRTPI_F
constexpr float M_2_SQRTPI_F = 1.12837916709551257390f;
#endif
#ifndef M_SQRT2_F
constexpr float M_SQRT2_F = 1.41421356237309504880f;
#endif
#ifndef M_SQRT1_2_F
constexpr float M_SQRT1_2_F = 0.707106781186547524401f;
#endif

}  // namespace metal

using namespace metal;

#endif  // __CUDACC__ || __CUDACC_RTC__
