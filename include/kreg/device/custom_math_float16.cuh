#pragma once
/// \file
/// The 16-bit forms of Metal's math functions that CUDA has for float only (exp, min, ...),
/// for `kreg::half` (Metal's `half`, `float16_t`) and `kreg::bfloat16` (`bfloat16_t`), in
/// `metal::` and `metal::fast::`. Each computes in float and rounds the result back to the
/// argument's type, as Metal returns it. A 16-bit value with a float gives float, as in
/// custom_math.cuh.
///
/// A part of its own because it costs compile time that kernels using no 16-bit type need
/// not pay; without it a 16-bit argument goes to CUDA's float function and the result stays
/// float.

#include <kreg/device/custom_float16.cuh>
#include <kreg/device/custom_math.cuh>

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)

// Template heads: one 16-bit argument; two scalars, at least one of them 16-bit.
#define KREG_METAL_16 template <class T, ::kreg::detail::when<::kreg::detail::is_float16<T>> = 0>
#define KREG_METAL_16_PAIR                                              \
  template <class A, class B, class R = ::kreg::detail::common_t<A, B>, \
            ::kreg::detail::when<::kreg::detail::any_float16<A, B>> = 0>

// A 16-bit form of a function of floats.
#define KREG_METAL_UNARY_16(name, fn)           \
  KREG_METAL_16 __device__ inline T name(T x) { \
    return T(fn(static_cast<float>(x)));        \
  }
#define KREG_METAL_BINARY_16(name, fn)                    \
  KREG_METAL_16_PAIR __device__ inline R name(A a, B b) { \
    using C = ::kreg::detail::calc_t<R>;                  \
    return R(fn(C(a), C(b)));                             \
  }

namespace metal {

KREG_METAL_UNARY_16(abs, ::fabs)
KREG_METAL_UNARY_16(acos, ::acos)
KREG_METAL_UNARY_16(acosh, ::acosh)
KREG_METAL_UNARY_16(asin, ::asin)
KREG_METAL_UNARY_16(asinh, ::asinh)
KREG_METAL_UNARY_16(atan, ::atan)
KREG_METAL_UNARY_16(atanh, ::atanh)
KREG_METAL_UNARY_16(cbrt, ::cbrt)
KREG_METAL_UNARY_16(ceil, ::ceil)
KREG_METAL_UNARY_16(cos, ::cos)
KREG_METAL_UNARY_16(cosh, ::cosh)
KREG_METAL_UNARY_16(erf, ::erf)
KREG_METAL_UNARY_16(exp, ::exp)
KREG_METAL_UNARY_16(exp10, ::exp10)
KREG_METAL_UNARY_16(exp2, ::exp2)
KREG_METAL_UNARY_16(fabs, ::fabs)
KREG_METAL_UNARY_16(floor, ::floor)
KREG_METAL_UNARY_16(log, ::log)
KREG_METAL_UNARY_16(log10, ::log10)
KREG_METAL_UNARY_16(log2, ::log2)
KREG_METAL_UNARY_16(rint, ::rint)
KREG_METAL_UNARY_16(round, ::round)
KREG_METAL_UNARY_16(rsqrt, ::rsqrt)
KREG_METAL_UNARY_16(sin, ::sin)
KREG_METAL_UNARY_16(sinh, ::sinh)
KREG_METAL_UNARY_16(sqrt, ::sqrt)
KREG_METAL_UNARY_16(tan, ::tan)
KREG_METAL_UNARY_16(tanh, ::tanh)
KREG_METAL_UNARY_16(trunc, ::trunc)

KREG_METAL_BINARY_16(atan2, ::atan2)
KREG_METAL_BINARY_16(copysign, ::copysign)
KREG_METAL_BINARY_16(fmax, ::fmax)
KREG_METAL_BINARY_16(fmin, ::fmin)
KREG_METAL_BINARY_16(fmod, ::fmod)
KREG_METAL_BINARY_16(pow, ::pow)
// Metal's min and max on floating point are its fmin and fmax, as CUDA's are.
KREG_METAL_BINARY_16(max, ::fmax)
KREG_METAL_BINARY_16(min, ::fmin)

KREG_METAL_16 __device__ inline T ldexp(T x, int e) {
  return T(::ldexp(static_cast<float>(x), e));
}
template <class A, class B, class C, class R = ::kreg::detail::common3_t<A, B, C>,
          ::kreg::detail::when<::kreg::detail::is_float16<A> || ::kreg::detail::is_float16<B> ||
                               ::kreg::detail::is_float16<C>> = 0>
__device__ inline R fma(A a, B b, C c) {
  using K = ::kreg::detail::calc_t<R>;
  return R(::fma(K(a), K(b), K(c)));
}

namespace fast {

KREG_METAL_UNARY_16(exp, fast::exp)
KREG_METAL_UNARY_16(exp2, fast::exp2)
KREG_METAL_UNARY_16(exp10, fast::exp10)
KREG_METAL_UNARY_16(log, fast::log)
KREG_METAL_UNARY_16(log2, fast::log2)
KREG_METAL_UNARY_16(log10, fast::log10)
KREG_METAL_UNARY_16(sin, fast::sin)
KREG_METAL_UNARY_16(cos, fast::cos)
KREG_METAL_UNARY_16(tan, fast::tan)
KREG_METAL_UNARY_16(tanh, fast::tanh)
KREG_METAL_UNARY_16(sqrt, fast::sqrt)
KREG_METAL_UNARY_16(rsqrt, fast::rsqrt)
KREG_METAL_BINARY_16(pow, fast::pow)
KREG_METAL_BINARY_16(powr, fast::powr)
KREG_METAL_BINARY_16(divide, fast::divide)

}  // namespace fast
}  // namespace metal

#undef KREG_METAL_16
#undef KREG_METAL_16_PAIR
#undef KREG_METAL_UNARY_16
#undef KREG_METAL_BINARY_16

#endif  // __CUDACC__ || __CUDACC_RTC__
