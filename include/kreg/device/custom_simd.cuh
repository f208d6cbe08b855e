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

// This thread's lane in its warp.
__device__ inline unsigned lane_id() {
  unsigned lane;
  asm("mov.u32 %0, %%laneid;" : "=r"(lane));
  return lane;
}

// Lane i gets combine(v[0], ..., v[i]), in log2(32) steps of shuffles up.
template <class T, class Combine>
__device__ inline T inclusive_scan(T v, Combine combine) {
  const unsigned lane = lane_id();
#pragma unroll
  for (unsigned offset = 1; offset < 32; offset *= 2) {
    const T below = shuffle<shuffle_kind::up>(v, offset);
    if (lane >= offset) v = combine(below, v);
  }
  return v;
}

// Lane i gets combine(v[0], ..., v[i - 1]); lane 0 gets `identity`.
template <class T, class Combine>
__device__ inline T exclusive_scan(T v, Combine combine, T identity) {
  const T inclusive = inclusive_scan(v, combine);
  const T below = shuffle<shuffle_kind::up>(inclusive, 1);
  return lane_id() == 0 ? identity : below;
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

template <class T>
__device__ inline T simd_product(T v) {
  return simd_prod(v);
}
/// Bitwise reductions, for integers.
template <class T>
__device__ inline T simd_and(T v) {
  return kreg::detail::butterfly(v, [](T a, T b) { return static_cast<T>(a & b); });
}
template <class T>
__device__ inline T simd_or(T v) {
  return kreg::detail::butterfly(v, [](T a, T b) { return static_cast<T>(a | b); });
}
template <class T>
__device__ inline T simd_xor(T v) {
  return kreg::detail::butterfly(v, [](T a, T b) { return static_cast<T>(a ^ b); });
}

/// Scans over the lanes in order: lane i combines lanes 0 to i (inclusive) or 0 to i - 1
/// (exclusive; lane 0 gets 0 for a sum, 1 for a product).
template <class T>
__device__ inline T simd_prefix_inclusive_sum(T v) {
  return kreg::detail::inclusive_scan(v, [](T a, T b) { return static_cast<T>(a + b); });
}
template <class T>
__device__ inline T simd_prefix_exclusive_sum(T v) {
  return kreg::detail::exclusive_scan(
      v, [](T a, T b) { return static_cast<T>(a + b); }, static_cast<T>(0));
}
template <class T>
__device__ inline T simd_prefix_inclusive_product(T v) {
  return kreg::detail::inclusive_scan(v, [](T a, T b) { return static_cast<T>(a * b); });
}
template <class T>
__device__ inline T simd_prefix_exclusive_product(T v) {
  return kreg::detail::exclusive_scan(
      v, [](T a, T b) { return static_cast<T>(a * b); }, static_cast<T>(1));
}

/// Lane (i + delta) % 32's value, and (i - delta) % 32's.
template <class T>
__device__ inline T simd_shuffle_rotate_down(T v, unsigned delta) {
  return simd_shuffle(v, (kreg::detail::lane_id() + delta) % 32);
}
template <class T>
__device__ inline T simd_shuffle_rotate_up(T v, unsigned delta) {
  return simd_shuffle(v, (kreg::detail::lane_id() + 32 - delta % 32) % 32);
}

/// Votes over the warp. Metal's simd_ballot returns a simd_vote; here its bits, lane i in
/// bit i.
__device__ inline bool simd_all(bool p) {
  return __all_sync(kreg::detail::full_warp, p) != 0;
}
__device__ inline bool simd_any(bool p) {
  return __any_sync(kreg::detail::full_warp, p) != 0;
}
__device__ inline unsigned long long simd_ballot(bool p) {
  return __ballot_sync(kreg::detail::full_warp, p);
}

/// The same names under `metal::`.
namespace metal {
using ::simd_all;
using ::simd_and;
using ::simd_any;
using ::simd_ballot;
using ::simd_broadcast;
using ::simd_max;
using ::simd_min;
using ::simd_or;
using ::simd_prefix_exclusive_product;
using ::simd_prefix_exclusive_sum;
using ::simd_prefix_inclusive_product;
using ::simd_prefix_inclusive_sum;
using ::simd_prod;
using ::simd_product;
using ::simd_shuffle;
using ::simd_shuffle_down;
using ::simd_shuffle_rotate_down;
using ::simd_shuffle_rotate_up;
using ::simd_shuffle_up;
using ::simd_shuffle_xor;
using ::simd_sum;
using ::simd_xor;
}  // namespace metal

#endif  // __CUDACC__ || __CUDACC_RTC__
