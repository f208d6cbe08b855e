#pragma once
/// \file
/// Metal's SIMD-group functions on CUDA warps of 32 lanes, over the full warp.

#include <kreg/device/custom_float16.cuh>
#include <kreg/device/custom_traits.cuh>
#include <kreg/device/custom_types.cuh>

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)

namespace kreg {
namespace detail {

constexpr unsigned full_warp = 0xffffffffu;

enum class shuffle_kind { index, up, down, xor_mask };

template <shuffle_kind K, class W>
__device__ inline auto shuffle_word(W w, unsigned arg) {
  if constexpr (K == shuffle_kind::index)
    return __shfl_sync(full_warp, w, static_cast<int>(arg));
  else if constexpr (K == shuffle_kind::up)
    return __shfl_up_sync(full_warp, w, arg);
  else if constexpr (K == shuffle_kind::down)
    return __shfl_down_sync(full_warp, w, arg);
  else
    return __shfl_xor_sync(full_warp, w, static_cast<int>(arg));
}

// CUDA shuffles 32- and 64-bit registers, so 16-bit floats travel as their bits. Narrow
// integers promote to int and come back by a cast.
template <shuffle_kind K, class T>
__device__ inline T shuffle(T v, unsigned arg) {
  if constexpr (is_float16<T>) {
    const unsigned w = shuffle_word<K>(static_cast<unsigned>(v.bits), arg);
    return T::from_bits(static_cast<unsigned short>(w));
  } else {
    return static_cast<T>(shuffle_word<K>(v, arg));
  }
}

// A butterfly leaves the result in every lane, as Metal's simd_* reductions do. Each lane
// combines the same pairs, so floating-point results agree across lanes too.
template <class T, class Combine>
__device__ inline T butterfly(T v, Combine combine) {
#pragma unroll
  for (unsigned offset = 16; offset > 0; offset /= 2) {
    v = combine(v, shuffle<shuffle_kind::xor_mask>(v, offset));
  }
  return v;
}

}  // namespace detail
}  // namespace kreg

template <class T>
__device__ inline T simd_shuffle(T v, unsigned lane) {
  return kreg::detail::shuffle<kreg::detail::shuffle_kind::index>(v, lane);
}
template <class T>
__device__ inline T simd_broadcast(T v, unsigned lane) {
  return kreg::detail::shuffle<kreg::detail::shuffle_kind::index>(v, lane);
}
/// Lanes below `delta` keep their own value, as in Metal.
template <class T>
__device__ inline T simd_shuffle_up(T v, unsigned delta) {
  return kreg::detail::shuffle<kreg::detail::shuffle_kind::up>(v, delta);
}
/// Lanes at or above 32 - `delta` keep their own value, as in Metal.
template <class T>
__device__ inline T simd_shuffle_down(T v, unsigned delta) {
  return kreg::detail::shuffle<kreg::detail::shuffle_kind::down>(v, delta);
}
template <class T>
__device__ inline T simd_shuffle_xor(T v, unsigned mask) {
  return kreg::detail::shuffle<kreg::detail::shuffle_kind::xor_mask>(v, mask);
}

template <class T>
__device__ inline T simd_sum(T v) {
  return kreg::detail::butterfly(v, [](T a, T b) { return static_cast<T>(a + b); });
}
template <class T>
__device__ inline T simd_prod(T v) {
  return kreg::detail::butterfly(v, [](T a, T b) { return static_cast<T>(a * b); });
}
template <class T>
__device__ inline T simd_max(T v) {
  return kreg::detail::butterfly(v, [](T a, T b) { return b > a ? b : a; });
}
template <class T>
__device__ inline T simd_min(T v) {
  return kreg::detail::butterfly(v, [](T a, T b) { return b < a ? b : a; });
}

#endif  // __CUDACC__ || __CUDACC_RTC__
