#pragma once
/// Global loads with a cache policy, for kernels bound by reading memory once.

namespace kreg {

/// 16 bytes that are read once (a weight matrix in decode): past L1, so the inputs that
/// every block shares stay there.
__device__ inline uint4 load_stream(const void* p) {
  uint4 r;
  asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
               : "l"(p));
  return r;
}

/// 16 bytes that many blocks read (the activations in decode): through L1.
__device__ inline uint4 load_shared_by_blocks(const void* p) {
  return __ldg(static_cast<const uint4*>(p));
}

}  // namespace kreg
