#pragma once
/// \file
/// Metal's math library on CUDA: `metal::`, `metal::precise::` and `metal::fast::`, and
/// `using namespace metal;` as MLX's preamble has it, so that bodies written for
/// `metal_kernel` compile whether they qualify the names or not. Metal's float constants are
/// in custom_constants.cuh.
///
/// `metal::` is precise here, the same as `metal::precise::`: CUDA's accurate functions
/// (`expf`, `sqrtf`, ...). Metal's default depends on its fast-math switch; results that
/// agree with a CPU reference are the safer default. `fast::` maps onto CUDA's intrinsics
/// (`__expf`, `__sinf`, ...), with their larger errors and narrower ranges.
///
/// For float and double, `metal::` brings in CUDA's own overloads by using-declarations: an
/// unqualified call then finds one function, not two equal ones in two namespaces. What CUDA
/// lacks (clamp, mix, ...) are templates limited to Metal's scalar types, 16-bit ones
/// included. A template loses a tie to a non-template, so a kernel's own
/// `clamp(float, float, float)` still wins over this one. The 16-bit forms of the functions
/// CUDA has for float are in custom_math_float16.cuh, which kernels that use no 16-bit type
/// need not compile.
///
/// Where a 16-bit value meets a float the result is float (Metal promotes), with an integer
/// it stays 16-bit, and half with bfloat16 gives float.
///
/// Includes nothing from the toolkit: NVRTC declares CUDA's math functions itself.

#include <kreg/device/custom_traits.cuh>

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)

namespace kreg {
namespace detail {

template <class T>
constexpr bool is_real = is_floating<T> || is_float16<T>;
template <class T>
constexpr bool is_scalar = is_real<T> || is_integer<T>;

// The type of a Metal expression that mixes two scalars (see the file comment).
template <class A, class B, bool A16 = is_float16<A>, bool B16 = is_float16<B>>
struct mixed {
  using type = typename pick<is_same<A, B>, A, decltype(A() + B())>::type;
};
template <class A, class B>
struct mixed<A, B, true, false> {
  using type = typename pick<is_floating<B>, B, A>::type;
};
template <class A, class B>
struct mixed<A, B, false, true> {
  using type = typename pick<is_floating<A>, A, B>::type;
};
template <class A, class B>
struct mixed<A, B, true, true> {
  using type = typename pick<is_same<A, B>, A, float>::type;
};

/// Leaves a function out (by substitution failure) unless both are scalars.
template <class A, class B>
using common_t = typename enable_if<is_scalar<A> && is_scalar<B>, mixed<A, B>>::type::type;
template <class A, class B, class C>
using common3_t = common_t<common_t<A, B>, C>;

/// What a result of type T is computed in: 16-bit types go through float.
template <class T>
using calc_t = typename pick<is_float16<T>, float, T>::type;

template <class A, class B>
constexpr bool any_float16 = is_float16<A> || is_float16<B>;

template <class T>
__device__ inline T quiet_nan() {
  if constexpr (sizeof(T) == 4)
    return __int_as_float(0x7fc00000);
  else
    return __longlong_as_double(0x7ff8000000000000ll);
}

// The largest value below one: where Metal's fract stops.
template <class T>
__device__ inline T below_one() {
  if constexpr (is_same<T, float>)
    return 0x1.fffffep-1f;
  else if constexpr (is_same<T, double>)
    return 0x1.fffffffffffffp-1;
  else if constexpr (is_same<T, half>)
    return T::from_bits(0x3bff);
  else
    return T::from_bits(0x3f7f);
}

}  // namespace detail
}  // namespace kreg

// Template heads for the forms below: arguments of Metal's floating-point types, with
// double, and integers mixed in.
#define KREG_METAL_REAL template <class T, ::kreg::detail::when<::kreg::detail::is_real<T>> = 0>
#define KREG_METAL_REAL_PAIR                                            \
  template <class A, class B, class R = ::kreg::detail::common_t<A, B>, \
            ::kreg::detail::when<::kreg::detail::is_real<R>> = 0>

namespace metal {

using ::abs;
using ::acos;
using ::acosh;
using ::asin;
using ::asinh;
using ::atan;
using ::atan2;
using ::atanh;
using ::cbrt;
using ::ceil;
using ::copysign;
using ::cos;
using ::cosh;
using ::erf;
using ::exp;
using ::exp10;
using ::exp2;
using ::fabs;
using ::floor;
using ::fma;
using ::fmax;
using ::fmin;
using ::fmod;
using ::ldexp;
using ::log;
using ::log10;
using ::log2;
using ::max;
using ::min;
using ::pow;
using ::rint;
using ::round;
using ::rsqrt;
using ::sin;
using ::sinh;
using ::sqrt;
using ::tan;
using ::tanh;
using ::trunc;

// Metal's predicates give bool; CUDA's give int for float and double. An unqualified call
// on a float still finds CUDA's, as a non-template wins the tie.
KREG_METAL_REAL __device__ inline bool isnan(T x) {
  return ::isnan(static_cast<::kreg::detail::calc_t<T>>(x));
}
KREG_METAL_REAL __device__ inline bool isinf(T x) {
  return ::isinf(static_cast<::kreg::detail::calc_t<T>>(x));
}
KREG_METAL_REAL __device__ inline bool isfinite(T x) {
  return ::isfinite(static_cast<::kreg::detail::calc_t<T>>(x));
}
KREG_METAL_REAL __device__ inline bool signbit(T x) {
  return ::signbit(static_cast<::kreg::detail::calc_t<T>>(x));
}
/// Unsigned integers are their own absolute value; CUDA has abs for signed ones only.
template <class T, ::kreg::detail::when<::kreg::detail::is_unsigned_integer<T>> = 0>
__device__ inline T abs(T x) {
  return x;
}

// What CUDA lacks, for every floating-point type.

/// x - floor(x), never 1: small negative x would round up to it.
KREG_METAL_REAL __device__ inline T fract(T x) {
  using K = ::kreg::detail::calc_t<T>;
  const K f = static_cast<K>(x);
  const T r = T(f - ::floor(f));
  const T top = ::kreg::detail::below_one<T>();
  return static_cast<K>(r) >= static_cast<K>(top) ? top : r;
}

/// 1 or -1 by the sign; zeros keep theirs, and NaN gives 0, as in Metal.
KREG_METAL_REAL __device__ inline T sign(T x) {
  using K = ::kreg::detail::calc_t<T>;
  const K v = static_cast<K>(x);
  return T(v > K(0) ? K(1) : v < K(0) ? K(-1) : v == K(0) ? v : K(0));
}

/// Clamps to [0, 1]; NaN gives 0.
KREG_METAL_REAL __device__ inline T saturate(T x) {
  using K = ::kreg::detail::calc_t<T>;
  return T(::fmin(::fmax(static_cast<K>(x), K(0)), K(1)));
}

/// 0 where x < edge, else 1.
KREG_METAL_REAL_PAIR __device__ inline R step(A edge, B x) {
  using K = ::kreg::detail::calc_t<R>;
  return R(K(x) < K(edge) ? K(0) : K(1));
}

/// x to the power y for x >= 0; NaN for negative x, which Metal leaves undefined.
KREG_METAL_REAL_PAIR __device__ inline R powr(A x, B y) {
  using K = ::kreg::detail::calc_t<R>;
  return R(K(x) < K(0) ? ::kreg::detail::quiet_nan<K>() : ::pow(K(x), K(y)));
}

KREG_METAL_REAL_PAIR __device__ inline R divide(A x, B y) {
  using K = ::kreg::detail::calc_t<R>;
  return R(K(x) / K(y));
}

/// x + (y - x) * a.
template <class A, class B, class C, class R = ::kreg::detail::common3_t<A, B, C>,
          ::kreg::detail::when<::kreg::detail::is_real<R>> = 0>
__device__ inline R mix(A x, B y, C a) {
  using K = ::kreg::detail::calc_t<R>;
  return R(K(x) + (K(y) - K(x)) * K(a));
}

/// The Hermite step between edge0 and edge1: 0 below, 1 above, smooth in between.
template <class A, class B, class C, class R = ::kreg::detail::common3_t<A, B, C>,
          ::kreg::detail::when<::kreg::detail::is_real<R>> = 0>
__device__ inline R smoothstep(A edge0, B edge1, C x) {
  using K = ::kreg::detail::calc_t<R>;
  const K t = ::fmin(::fmax((K(x) - K(edge0)) / (K(edge1) - K(edge0)), K(0)), K(1));
  return R(t * t * (K(3) - K(2) * t));
}

/// min(max(x, lo), hi), for integers too; a NaN x gives lo, as fmin(fmax(x, lo), hi) does.
template <class A, class B, class C, class R = ::kreg::detail::common3_t<A, B, C>>
__device__ inline R clamp(A x, B lo, C hi) {
  using K = ::kreg::detail::calc_t<R>;
  if constexpr (::kreg::detail::is_real<R>) {
    return R(::fmin(::fmax(K(x), K(lo)), K(hi)));
  } else {
    const R v = R(x) < R(lo) ? R(lo) : R(x);
    return R(hi) < v ? R(hi) : v;
  }
}

/// Metal's select: b where c holds, else a.
template <class A, class B, class R = ::kreg::detail::common_t<A, B>>
__device__ inline R select(A a, B b, bool c) {
  return c ? R(b) : R(a);
}

/// Full precision: the same functions as metal:: itself.
namespace precise {
using namespace metal;
}  // namespace precise

/// CUDA's fast intrinsics. What has none (floor, abs, ...) is metal::'s own.
namespace fast {
using namespace metal;

__device__ inline float exp(float x) {
  return __expf(x);
}
__device__ inline float exp2(float x) {
  return exp2f(x);  // already the hardware's ex2, to 2 ulp
}
__device__ inline float exp10(float x) {
  return __exp10f(x);
}
__device__ inline float log(float x) {
  return __logf(x);
}
__device__ inline float log2(float x) {
  return __log2f(x);
}
__device__ inline float log10(float x) {
  return __log10f(x);
}
__device__ inline float pow(float x, float y) {
  return __powf(x, y);
}
__device__ inline float powr(float x, float y) {
  return __powf(x, y);  // NaN for negative x, through the logarithm
}
__device__ inline float sin(float x) {
  return __sinf(x);
}
__device__ inline float cos(float x) {
  return __cosf(x);
}
__device__ inline float tan(float x) {
  return __tanf(x);
}
__device__ inline float tanh(float x) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 750
  float y;
  asm("tanh.approx.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
#else
  return ::tanhf(x);
#endif
}
__device__ inline float sqrt(float x) {
  float y;
  asm("sqrt.approx.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}
__device__ inline float rsqrt(float x) {
  return ::rsqrtf(x);
}
__device__ inline float divide(float x, float y) {
  return __fdividef(x, y);
}

}  // namespace fast
}  // namespace metal

#undef KREG_METAL_REAL
#undef KREG_METAL_REAL_PAIR

// As MLX's preamble does: bodies call exp, clamp, fast::exp and precise::sqrt unqualified.
using namespace metal;

#endif  // __CUDACC__ || __CUDACC_RTC__
