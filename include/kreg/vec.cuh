#pragma once
// Vector memory access for kreg's built-in kernels: eight elements per load or store, which
// is 16 bytes for 16-bit types and 32 bytes (two 16-byte accesses) for 32-bit ones. Kernels
// take the vector path when every pointer they touch is aligned to the vector, and a scalar
// path otherwise. Includes nothing from the toolkit, so sources compile with -minimal.

#include <kreg/half.cuh>

namespace kreg {

/// Elements per vector access.
constexpr int kVecWidth = 8;

template <class T>
struct alignas(sizeof(T) * kVecWidth) vec8 {
  T v[kVecWidth];
};

/// Whether `p` may be accessed as vec8<T>.
template <class T>
__device__ inline bool vec_aligned(const T* p) {
  return (reinterpret_cast<unsigned long long>(p) % sizeof(vec8<T>)) == 0;
}

template <class T>
__device__ inline vec8<T> load8(const T* p) {
  return *reinterpret_cast<const vec8<T>*>(p);
}

template <class T>
__device__ inline void store8(T* p, const vec8<T>& v) {
  *reinterpret_cast<vec8<T>*>(p) = v;
}

/// The grid-stride loop of an elementwise kernel over n elements: each thread takes eight
/// consecutive ones at a time, as one vector (`on_vector(i)`, elements i..i+7) when `vector`
/// and all eight exist, else one by one (`on_element(e)`).
template <class OnVector, class OnElement>
__device__ inline void for_each_vector(unsigned long long n, bool vector, OnVector on_vector,
                                       OnElement on_element) {
  const unsigned long long first =
      (static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x) * kVecWidth;
  const unsigned long long step =
      static_cast<unsigned long long>(gridDim.x) * blockDim.x * kVecWidth;
  for (unsigned long long i = first; i < n; i += step) {
    if (vector && i + kVecWidth <= n) {
      on_vector(i);
    } else {
      for (unsigned long long e = i; e < i + kVecWidth && e < n; ++e) on_element(e);
    }
  }
}

/// Arithmetic happens in float; these move values in and out of it.
__device__ inline float to_float(float x) {
  return x;
}
__device__ inline float to_float(half x) {
  return static_cast<float>(x);
}
__device__ inline float to_float(bfloat16 x) {
  return static_cast<float>(x);
}

template <class T>
__device__ inline T from_float(float x) {
  return T(x);
}

/// Combines over the warp; every lane gets the result.
template <class Op>
__device__ inline float warp_reduce(float v, Op op) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) v = op(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}

/// Combines over the block (at most 1024 threads); every thread gets the result. `scratch`
/// holds 32 floats of shared memory, free for reuse after the call returns; `identity` is
/// what a missing warp contributes.
template <class Op>
__device__ inline float block_reduce(float v, float* scratch, Op op, float identity) {
  const unsigned lane = threadIdx.x % 32;
  const unsigned warp = threadIdx.x / 32;
  v = warp_reduce(v, op);
  __syncthreads();  // scratch may still be read by a previous call
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  const unsigned warps = (blockDim.x + 31) / 32;
  return warp_reduce(lane < warps ? scratch[lane] : identity, op);
}

struct Sum {
  __device__ float operator()(float a, float b) const { return a + b; }
};
struct Max {
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};

__device__ inline float block_sum(float v, float* scratch) {
  return block_reduce(v, scratch, Sum{}, 0.0f);
}
__device__ inline float block_max(float v, float* scratch) {
  return block_reduce(v, scratch, Max{}, -__int_as_float(0x7f800000));
}

}  // namespace kreg
