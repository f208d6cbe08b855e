#pragma once
/// Tensor-core building blocks for kernels on sm_80 and newer: asynchronous copies into shared
/// memory, `ldmatrix` fragment loads, and the m16n8k16 `mma.sync` over half or bfloat16 with
/// float accumulators. Each is one PTX instruction; the fragment layouts are the PTX ISA's.
///
/// m16n8k16, per lane (g = lane / 4, t = lane % 4):
///   A (16 x 16, row-major)  a[0]: row g,   cols 2t, 2t+1   a[1]: row g+8, cols 2t, 2t+1
///                           a[2]: row g,   cols 2t+8, +9   a[3]: row g+8, cols 2t+8, +9
///   B (16 x 8, k x n)       b[0]: rows 2t, 2t+1, col g     b[1]: rows 2t+8, 2t+9, col g
///   C (16 x 8, float)       c[0], c[1]: row g, cols 2t, 2t+1   c[2], c[3]: row g+8, same cols
/// so the C fragments of two n-tiles side by side are, packed to 16 bits, the A fragment of a
/// 16 x 16 tile: the property that lets attention keep P in registers between its two products.

#include <kreg/device/half.cuh>

namespace kreg {

/// The shared-memory address of a generic pointer into shared memory.
__device__ inline unsigned shared_address(const void* p) {
  unsigned long long a;
  asm("cvta.to.shared.u64 %0, %1;" : "=l"(a) : "l"(p));
  return static_cast<unsigned>(a);
}

/// Copies 16 bytes from global to shared memory without passing through registers; with
/// `valid` false it writes 16 zero bytes and reads nothing (`src` must still be a global
/// address).
__device__ inline void copy_async16(unsigned dst, const void* src, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(dst), "l"(src),
               "r"(valid ? 16 : 0)
               : "memory");
}

/// Closes the group of copies issued since the last commit.
__device__ inline void copy_async_commit() {
  asm volatile("cp.async.commit_group;" ::: "memory");
}

/// Waits until at most `Pending` committed groups are still in flight (this thread's).
template <int Pending>
__device__ inline void copy_async_wait() {
  asm volatile("cp.async.wait_group %0;" ::"n"(Pending) : "memory");
}

/// Four 8 x 8 matrices of 16-bit elements; lanes 8i to 8i+7 give the row addresses of matrix
/// i, and each lane gets, of every matrix, row lane / 4, elements 2 (lane % 4) and the next.
__device__ inline void load_matrix_x4(unsigned (&r)[4], unsigned address) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(address));
}

/// The same, each matrix transposed: a lane gets column lane / 4, rows 2 (lane % 4) and the
/// next, which is the B fragment of a k x n tile stored row by row.
__device__ inline void load_matrix_x4_trans(unsigned (&r)[4], unsigned address) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(address));
}

/// c += a b over one m16n8k16 tile.
__device__ inline void mma_16816(float (&c)[4], const unsigned (&a)[4], unsigned b0, unsigned b1,
                                 bfloat16 /*type*/) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

__device__ inline void mma_16816(float (&c)[4], const unsigned (&a)[4], unsigned b0, unsigned b1,
                                 half /*type*/) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

/// Two floats rounded to one 32-bit pair, `lo` in the low half (the element at the lower
/// index).
__device__ inline unsigned pack2(float lo, float hi, bfloat16 /*type*/) {
  unsigned r;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}

__device__ inline unsigned pack2(float lo, float hi, half /*type*/) {
  unsigned r;
  asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}

}  // namespace kreg
