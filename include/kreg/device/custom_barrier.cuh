#pragma once
/// \file
/// Metal's barriers and memory flags, on CUDA.

#include <kreg/device/half.cuh>  // KREG_HOST_DEVICE

/// Which memory a barrier orders; combine with `|` as in Metal.
enum class mem_flags : unsigned {
  mem_none = 0,
  mem_device = 1,
  mem_threadgroup = 2,
  mem_texture = 4
};

KREG_HOST_DEVICE constexpr mem_flags operator|(mem_flags a, mem_flags b) {
  return static_cast<mem_flags>(static_cast<unsigned>(a) | static_cast<unsigned>(b));
}

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)

/// Waits for every thread of the block. Within the block __syncthreads already orders device
/// memory too; mem_device adds a fence so that the writes are also visible to other blocks
/// before any thread goes on, for code that signals other threadgroups after the barrier.
__device__ inline void threadgroup_barrier(mem_flags flags) {
  if (static_cast<unsigned>(flags) & static_cast<unsigned>(mem_flags::mem_device)) {
    __threadfence();
  }
  __syncthreads();
}

/// Waits for every lane of the warp, which is Metal's SIMD-group here.
__device__ inline void simdgroup_barrier(mem_flags) {
  __syncwarp();
}

#endif  // __CUDACC__ || __CUDACC_RTC__
