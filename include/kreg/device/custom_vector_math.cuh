#pragma once
/// \file
/// Metal's math on its vector types: the functions of custom_math.cuh applied per component
/// (`exp(v)`, `max(v, 0.0f)`, `clamp(v, lo, hi)`, `mix(a, b, t)`, `select(a, b, mask)`), the
/// same under `fast::` and `precise::`, and the geometric ones (`dot`, `length`,
/// `length_squared`, `distance`, `normalize`, `cross`). An argument may be a vector, a
/// swizzle of one or, beside a vector, a scalar that stands for all components. 16-bit
/// vectors compute in float and round each result back, as their scalar forms do.

#include <kreg/device/custom_math.cuh>
#include <kreg/device/custom_vector.cuh>

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)

namespace metal {
namespace vector_detail {

template <class A, class B, class C>
using result3_t = result_t<result_t<A, B>, C>;

template <class V>
using element_t = typename traits<V>::element;

/// Component k of `a`, converted to the element type of the result.
template <class T, class A>
__device__ inline T as(const A& a, int k) {
  return T(component(a, k));
}

}  // namespace vector_detail

// A function of one, two or three arguments, component by component, through `scope::fn`.
#define KREG_METAL_VECTOR_UNARY(scope, fn)                               \
  template <class A, class V = ::metal::vector_detail::result_t<A, int>> \
  __device__ inline V fn(const A& a) {                                   \
    using T = ::metal::vector_detail::element_t<V>;                      \
    V r;                                                                 \
    for (int k = 0; k < ::metal::vector_detail::traits<V>::size; ++k) {  \
      r[k] = T(scope::fn(::metal::vector_detail::component(a, k)));      \
    }                                                                    \
    return r;                                                            \
  }
#define KREG_METAL_VECTOR_BINARY(scope, fn)                                     \
  template <class A, class B, class V = ::metal::vector_detail::result_t<A, B>> \
  __device__ inline V fn(const A& a, const B& b) {                              \
    using T = ::metal::vector_detail::element_t<V>;                             \
    using ::metal::vector_detail::as;                                           \
    V r;                                                                        \
    for (int k = 0; k < ::metal::vector_detail::traits<V>::size; ++k) {         \
      r[k] = T(scope::fn(as<T>(a, k), as<T>(b, k)));                            \
    }                                                                           \
    return r;                                                                   \
  }
#define KREG_METAL_VECTOR_TERNARY(scope, fn)                                                 \
  template <class A, class B, class C, class V = ::metal::vector_detail::result3_t<A, B, C>> \
  __device__ inline V fn(const A& a, const B& b, const C& c) {                               \
    using T = ::metal::vector_detail::element_t<V>;                                          \
    using ::metal::vector_detail::as;                                                        \
    V r;                                                                                     \
    for (int k = 0; k < ::metal::vector_detail::traits<V>::size; ++k) {                      \
      r[k] = T(scope::fn(as<T>(a, k), as<T>(b, k), as<T>(c, k)));                            \
    }                                                                                        \
    return r;                                                                                \
  }

KREG_METAL_VECTOR_UNARY(::metal, abs)
KREG_METAL_VECTOR_UNARY(::metal, fabs)
KREG_METAL_VECTOR_UNARY(::metal, exp)
KREG_METAL_VECTOR_UNARY(::metal, exp2)
KREG_METAL_VECTOR_UNARY(::metal, exp10)
KREG_METAL_VECTOR_UNARY(::metal, log)
KREG_METAL_VECTOR_UNARY(::metal, log2)
KREG_METAL_VECTOR_UNARY(::metal, log10)
KREG_METAL_VECTOR_UNARY(::metal, sqrt)
KREG_METAL_VECTOR_UNARY(::metal, rsqrt)
KREG_METAL_VECTOR_UNARY(::metal, sin)
KREG_METAL_VECTOR_UNARY(::metal, cos)
KREG_METAL_VECTOR_UNARY(::metal, tan)
KREG_METAL_VECTOR_UNARY(::metal, tanh)
KREG_METAL_VECTOR_UNARY(::metal, erf)
KREG_METAL_VECTOR_UNARY(::metal, floor)
KREG_METAL_VECTOR_UNARY(::metal, ceil)
KREG_METAL_VECTOR_UNARY(::metal, round)
KREG_METAL_VECTOR_UNARY(::metal, rint)
KREG_METAL_VECTOR_UNARY(::metal, trunc)
KREG_METAL_VECTOR_UNARY(::metal, fract)
KREG_METAL_VECTOR_UNARY(::metal, sign)
KREG_METAL_VECTOR_UNARY(::metal, saturate)
KREG_METAL_VECTOR_BINARY(::metal, min)
KREG_METAL_VECTOR_BINARY(::metal, max)
KREG_METAL_VECTOR_BINARY(::metal, fmin)
KREG_METAL_VECTOR_BINARY(::metal, fmax)
KREG_METAL_VECTOR_BINARY(::metal, pow)
KREG_METAL_VECTOR_BINARY(::metal, powr)
KREG_METAL_VECTOR_BINARY(::metal, fmod)
KREG_METAL_VECTOR_BINARY(::metal, atan2)
KREG_METAL_VECTOR_BINARY(::metal, copysign)
KREG_METAL_VECTOR_BINARY(::metal, step)
KREG_METAL_VECTOR_BINARY(::metal, divide)
KREG_METAL_VECTOR_TERNARY(::metal, clamp)
KREG_METAL_VECTOR_TERNARY(::metal, mix)
KREG_METAL_VECTOR_TERNARY(::metal, fma)
KREG_METAL_VECTOR_TERNARY(::metal, smoothstep)

/// b where the mask holds, else a, component by component; a bool mask picks whole vectors.
template <class A, class B, int N, class V = vector_detail::result_t<A, B>>
__device__ inline V select(const A& a, const B& b, const vec<bool, N>& mask) {
  static_assert(vector_detail::traits<V>::size == N, "select: the mask's size differs");
  using T = vector_detail::element_t<V>;
  V r;
  for (int k = 0; k < N; ++k) {
    r[k] = mask[k] ? vector_detail::as<T>(b, k) : vector_detail::as<T>(a, k);
  }
  return r;
}
template <class A, class B, class V = vector_detail::result_t<A, B>>
__device__ inline V select(const A& a, const B& b, bool c) {
  return c ? V(b) : V(a);
}

/// The geometric functions, summed in float for 16-bit vectors.
template <class A, class B, class V = vector_detail::result_t<A, B>,
          vector_detail::when<vector_detail::is_vector<A> && vector_detail::is_vector<B>> = 0>
__device__ inline vector_detail::element_t<V> dot(const A& a, const B& b) {
  using T = vector_detail::element_t<V>;
  using K = ::kreg::detail::calc_t<T>;
  K sum = 0;
  for (int k = 0; k < vector_detail::traits<V>::size; ++k) {
    sum += K(vector_detail::component(a, k)) * K(vector_detail::component(b, k));
  }
  return T(sum);
}
template <class A, vector_detail::when<vector_detail::is_vector<A>> = 0>
__device__ inline vector_detail::element_t<A> length_squared(const A& a) {
  return dot(a, a);
}
template <class A, vector_detail::when<vector_detail::is_vector<A>> = 0>
__device__ inline vector_detail::element_t<A> length(const A& a) {
  using T = vector_detail::element_t<A>;
  return T(::metal::sqrt(::kreg::detail::calc_t<T>(dot(a, a))));
}
template <class A, class B, class V = vector_detail::result_t<A, B>,
          vector_detail::when<vector_detail::is_vector<A> && vector_detail::is_vector<B>> = 0>
__device__ inline vector_detail::element_t<V> distance(const A& a, const B& b) {
  return length(V(a) - V(b));
}
/// a / length(a); a zero vector gives NaNs, as in Metal.
template <class A, class V = vector_detail::result_t<A, int>>
__device__ inline V normalize(const A& a) {
  using T = vector_detail::element_t<V>;
  using K = ::kreg::detail::calc_t<T>;
  const K scale = ::metal::rsqrt(K(dot(a, a)));
  V r;
  for (int k = 0; k < vector_detail::traits<V>::size; ++k) {
    r[k] = T(K(vector_detail::component(a, k)) * scale);
  }
  return r;
}
template <class A, class B, class V = vector_detail::result_t<A, B>,
          vector_detail::when<vector_detail::traits<V>::size == 3> = 0>
__device__ inline V cross(const A& a, const B& b) {
  const V x = V(a);
  const V y = V(b);
  return V(x[1] * y[2] - x[2] * y[1], x[2] * y[0] - x[0] * y[2], x[0] * y[1] - x[1] * y[0]);
}

namespace fast {
KREG_METAL_VECTOR_UNARY(::metal::fast, exp)
KREG_METAL_VECTOR_UNARY(::metal::fast, exp2)
KREG_METAL_VECTOR_UNARY(::metal::fast, exp10)
KREG_METAL_VECTOR_UNARY(::metal::fast, log)
KREG_METAL_VECTOR_UNARY(::metal::fast, log2)
KREG_METAL_VECTOR_UNARY(::metal::fast, log10)
KREG_METAL_VECTOR_UNARY(::metal::fast, sin)
KREG_METAL_VECTOR_UNARY(::metal::fast, cos)
KREG_METAL_VECTOR_UNARY(::metal::fast, tan)
KREG_METAL_VECTOR_UNARY(::metal::fast, tanh)
KREG_METAL_VECTOR_UNARY(::metal::fast, sqrt)
KREG_METAL_VECTOR_UNARY(::metal::fast, rsqrt)
KREG_METAL_VECTOR_BINARY(::metal::fast, pow)
KREG_METAL_VECTOR_BINARY(::metal::fast, powr)
KREG_METAL_VECTOR_BINARY(::metal::fast, divide)
}  // namespace fast

#undef KREG_METAL_VECTOR_UNARY
#undef KREG_METAL_VECTOR_BINARY
#undef KREG_METAL_VECTOR_TERNARY

}  // namespace metal

#endif  // __CUDACC__ || __CUDACC_RTC__
