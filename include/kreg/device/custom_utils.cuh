#pragma once
/// \file
/// The indexing helpers that MLX's preamble gives `metal_kernel` bodies: `elem_to_loc`, its
/// fixed-dimension forms `elem_to_loc_1`, `_2` and `_3`, and `ceildiv`, with MLX's
/// signatures. Shapes and strides may be the generated `a_shape` and `a_strides`
/// (`kreg::value_array`s), pointers or arrays; strides count elements.

#include <kreg/device/custom_traits.cuh>
#include <kreg/device/custom_types.cuh>

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)

/// Where element `elem` of a row-major walk over `shape` lies in memory laid out by
/// `strides`: the offset from element 0, in elements. The index type follows `elem`
/// (`elem_to_loc<int64_t>(i, ...)` for 64-bit offsets from a 32-bit index).
template <class IdxT = int64_t, class Shape, class Strides,
          kreg::detail::when<kreg::detail::is_integer<IdxT>> = 0>
__device__ inline IdxT elem_to_loc(IdxT elem, const Shape& shape, const Strides& strides,
                                   int ndim) {
  IdxT loc = 0;
  for (int d = ndim - 1; d >= 0 && elem > 0; --d) {
    loc += (elem % shape[d]) * IdxT(strides[d]);
    elem /= shape[d];
  }
  return loc;
}

/// The same for a grid position: x walks the last dimension, y the one before it, and z all
/// the others, row-major.
template <class IdxT = int64_t, class Elem, class Shape, class Strides,
          kreg::detail::when<!kreg::detail::is_integer<Elem>> = 0>
__device__ inline IdxT elem_to_loc(Elem elem, const Shape& shape, const Strides& strides,
                                   int ndim) {
  IdxT loc = elem.x * IdxT(strides[ndim - 1]);
  if (ndim > 1) loc += elem.y * IdxT(strides[ndim - 2]);
  auto rest = elem.z;
  for (int d = ndim - 3; d >= 0; --d) {
    loc += (rest % shape[d]) * IdxT(strides[d]);
    rest /= shape[d];
  }
  return loc;
}

/// One dimension: `elem` times its stride.
template <class IdxT = int64_t>
__device__ inline IdxT elem_to_loc_1(uint elem, int64_t stride) {
  return elem * IdxT(stride);
}

/// Two dimensions of a grid position (uint2 or uint3): x walks the last.
template <class IdxT = int64_t, class Elem, class Strides>
__device__ inline IdxT elem_to_loc_2(Elem elem, const Strides& strides) {
  return elem.x * IdxT(strides[1]) + elem.y * IdxT(strides[0]);
}

/// Three dimensions of a grid position: x walks the last, z the first.
template <class IdxT = int64_t, class Elem, class Strides>
__device__ inline IdxT elem_to_loc_3(Elem elem, const Strides& strides) {
  return elem.x * IdxT(strides[2]) + elem.y * IdxT(strides[1]) + elem.z * IdxT(strides[0]);
}

/// n / m rounded up, for positive integers.
template <class T, class U,
          kreg::detail::when<kreg::detail::is_integer<T> && kreg::detail::is_integer<U>> = 0>
__device__ inline T ceildiv(T n, U m) {
  return static_cast<T>((n + m - 1) / m);
}

#endif  // __CUDACC__ || __CUDACC_RTC__
