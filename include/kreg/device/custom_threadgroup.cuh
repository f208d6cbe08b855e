#pragma once
/// \file
/// Threadgroup arrays in dynamic shared memory, for kernels whose `threadgroup` arrays add up
/// to more than the 48 KiB a kernel may hold statically (Metal bodies assume up to 32 KiB, and
/// headers may ask more). Code generation turns each `threadgroup T name[N];` of such a body
/// into a reference to `N` elements carved from the top of the block's dynamic shared memory,
/// below the previous array; the launch adds their bytes after the caller's own dynamic
/// shared memory, which stays at the bottom where `extern __shared__` arrays start.

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)

namespace kreg {
namespace detail {

/// The end of the block's dynamic shared memory, aligned down to 16 bytes.
__device__ inline unsigned char* dynamic_shared_end() {
  extern __shared__ __align__(16) unsigned char kreg_dynamic_shared[];
  unsigned bytes = 0;
  asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(bytes));
  return kreg_dynamic_shared + (bytes & ~15u);
}

/// The array `A` (`float[16384]`) just below `end`, which moves down past it, 16-aligned.
template <class A>
__device__ inline A* carve(unsigned char*& end) {
  end -= (sizeof(A) + 15) & ~static_cast<decltype(sizeof(A))>(15);
  return reinterpret_cast<A*>(end);
}

}  // namespace detail
}  // namespace kreg

#endif  // __CUDACC__ || __CUDACC_RTC__
