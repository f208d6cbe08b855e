#pragma once
/// \file
/// Metal's `as_type<T>(x)`: the bits of `x` read as a `T` of the same size (a float's bits
/// as a uint, a uint2 as a half4 ...), as a bit copy, with no conversion of the value.

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)

template <class To, class From>
__device__ inline To as_type(const From& from) {
  static_assert(sizeof(To) == sizeof(From), "as_type: the two types differ in size");
  // The device compiler reads a union through its other member as the same bits.
  union {
    From from;
    To to;
  } bits{from};
  return bits.to;
}

namespace metal {
using ::as_type;
}  // namespace metal

#endif  // __CUDACC__ || __CUDACC_RTC__
