// Reductions over the last dimension, one block per row, accumulated in float:
//   row_sum, row_max -> float32;  argmax -> int64, the first index of the largest value
//   (NaN is never the largest).
// kreg:entry row_sum_f32=row_reduce<float, 0>
// kreg:entry row_sum_f16=row_reduce<kreg::half, 0>
// kreg:entry row_sum_bf16=row_reduce<kreg::bfloat16, 0>
// kreg:entry row_max_f32=row_reduce<float, 1>
// kreg:entry row_max_f16=row_reduce<kreg::half, 1>
// kreg:entry row_max_bf16=row_reduce<kreg::bfloat16, 1>
// kreg:entry argmax_f32=argmax<float>
// kreg:entry argmax_f16=argmax<kreg::half>
// kreg:entry argmax_bf16=argmax<kreg::bfloat16>
#include <kreg/contracts/reduce.cuh>
#include <kreg/device/kernel.cuh>
#include <kreg/device/vec.cuh>

// The op launches up to 1024 threads a block; the bound keeps every size launchable.
template <typename T, int Op>
__global__ void __launch_bounds__(1024)
    row_reduce(const T* __restrict__ x, float* __restrict__ out, unsigned cols) {
  KREG_SIGNATURE((row_reduce<T, Op>), kreg::contracts::reduce::RowReduce<T>);
  using namespace kreg;
  __shared__ float scratch[32];
  const T* xr = x + static_cast<unsigned long long>(blockIdx.x) * cols;
  const float identity = Op == 0 ? 0.0f : negative_infinity();
  float acc = identity;
  auto take = [&](float v) { acc = Op == 0 ? acc + v : fmaxf(acc, v); };
  if (cols % kVecWidth == 0 && vec_aligned(xr)) {
    for (unsigned c = threadIdx.x * kVecWidth; c < cols; c += blockDim.x * kVecWidth) {
      const vec8<T> v = load8(xr + c);
#pragma unroll
      for (int k = 0; k < kVecWidth; ++k) take(to_float(v.v[k]));
    }
  } else {
    for (unsigned c = threadIdx.x; c < cols; c += blockDim.x) take(to_float(xr[c]));
  }
  const float total = Op == 0 ? block_sum(acc, scratch) : block_max(acc, scratch);
  if (threadIdx.x == 0) out[blockIdx.x] = total;
}

// Combines (value, index) pairs over the warp: the larger value wins, on a tie the lower
// index. Every lane gets the result.
__device__ inline void warp_argmax(float& best, unsigned& index) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) {
    const float w = __shfl_xor_sync(0xffffffffu, best, offset);
    const unsigned j = __shfl_xor_sync(0xffffffffu, index, offset);
    if (w > best || (w == best && j < index)) {
      best = w;
      index = j;
    }
  }
}

// The op launches up to 1024 threads a block; the bound keeps every size launchable.
template <typename T>
__global__ void __launch_bounds__(1024)
    argmax(const T* __restrict__ x, long long* __restrict__ out, unsigned cols) {
  KREG_SIGNATURE(argmax<T>, kreg::contracts::reduce::Argmax<T>);
  using namespace kreg;
  __shared__ float best_values[32];
  __shared__ unsigned best_indices[32];
  const T* xr = x + static_cast<unsigned long long>(blockIdx.x) * cols;
  float best = negative_infinity();
  unsigned index = 0xffffffffu;
  for (unsigned c = threadIdx.x; c < cols; c += blockDim.x) {
    const float v = to_float(xr[c]);
    if (v > best || (index == 0xffffffffu && v == best)) {
      best = v;
      index = c;
    }
  }
  warp_argmax(best, index);
  const unsigned lane = threadIdx.x % 32;
  const unsigned warp = threadIdx.x / 32;
  if (lane == 0) {
    best_values[warp] = best;
    best_indices[warp] = index;
  }
  __syncthreads();
  if (warp == 0) {
    const unsigned warps = (blockDim.x + 31) / 32;
    best = lane < warps ? best_values[lane] : negative_infinity();
    index = lane < warps ? best_indices[lane] : 0xffffffffu;
    warp_argmax(best, index);
    // A row of NaNs has no largest value: index 0, as a convention.
    if (lane == 0) out[blockIdx.x] = index == 0xffffffffu ? 0 : static_cast<long long>(index);
  }
}
