#pragma once
/// Warpgroup matrix multiplies (wgmma, sm_90a): four consecutive warps, starting at a warp
/// index divisible by four, issue one m64nNk16 product together. A comes from registers, laid
/// out per warp as the A fragment of mma.sync m16n8k16 (warp w of the group holds rows 16w to
/// 16w + 15); B comes from shared memory through a descriptor; the float accumulators, N / 8
/// groups of four a thread, are laid out per warp as mma.sync's C fragments side by side.
///
/// Only for code compiled for sm_90a (`__CUDA_ARCH_FEAT_SM90_ALL`); see `// kreg:arch-specific`.

#include <kreg/device/half.cuh>

namespace kreg {

/// A shared-memory operand laid out in the 128-byte swizzle: rows of 128 bytes, each row's
/// 16-byte chunks permuted by the row's index modulo 8 (chunk c at c ^ (row % 8)), in atoms of
/// eight rows that start on 1024-byte boundaries. `leading` and `stride` are the byte offsets
/// the PTX ISA names: for a K-major operand `stride` is 1024 (the next eight rows) and
/// `leading` unused; for an MN-major one `leading` steps to the next 64 elements along MN and
/// `stride` to the next eight along K.
__device__ inline unsigned long long smem_descriptor(unsigned address, unsigned leading,
                                                     unsigned stride) {
  return static_cast<unsigned long long>((address & 0x3ffff) >> 4) |
         static_cast<unsigned long long>((leading & 0x3ffff) >> 4) << 16 |
         static_cast<unsigned long long>((stride & 0x3ffff) >> 4) << 32 |
         1ull << 62;  // 128-byte swizzle
}

/// Orders this thread's register writes before the warpgroup's next products read them.
__device__ inline void wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
}

/// Closes the group of products issued since the last commit.
__device__ inline void wgmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}

/// Waits until at most `Pending` committed groups are still running.
template <int Pending>
__device__ inline void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(Pending) : "memory");
}

/// Shared memory written by ordinary stores or cp.async, made visible to the products (the
/// async proxy) that read it after the next barrier.
__device__ inline void fence_async_shared() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

/// Keeps the compiler from moving reads or writes of an accumulator across a wait, or writes
/// (a rescale) past the wgmma_fence that must follow them when called before it.
template <int Groups>
__device__ inline void wgmma_hold(float (&d)[Groups][4]) {
#pragma unroll
  for (int g = 0; g < Groups; ++g) {
    asm volatile("" : "+f"(d[g][0]), "+f"(d[g][1]), "+f"(d[g][2]), "+f"(d[g][3])::"memory");
  }
}

/// The same for A fragments in registers, so that their writes stay before the wgmma_fence
/// that must follow them (the fence names no register).
template <int Steps>
__device__ inline void wgmma_hold(unsigned (&a)[Steps][4]) {
#pragma unroll
  for (int s = 0; s < Steps; ++s) {
    asm volatile("" : "+r"(a[s][0]), "+r"(a[s][1]), "+r"(a[s][2]), "+r"(a[s][3])::"memory");
  }
}

/// d (+)= a b for one m64nNk16 tile, N of 32, 64, 128 or 256; `accumulate` false overwrites d.
/// `TransposeB` 1 reads B as MN-major (N contiguous), 0 as K-major.
template <int N, int TransposeB>
struct Wgmma;

// One product's asm for an N and an element type: the accumulators are operands 0 to N/2 - 1,
// then A's four registers, B's descriptor, whether to accumulate and the transpose flag.
#define KREG_WGMMA_RUN(N, TYPE, PTX)                                                           \
  __device__ static void run(float(&d)[N / 8][4], const unsigned(&a)[4], unsigned long long b, \
                             bool accumulate, TYPE /*type*/) {                                 \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %" KREG_WGMMA_AT(N, 5) ", 0;\n"        \
                 "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32." PTX "." PTX " {"         \
                 KREG_WGMMA_D##N "}, {%" KREG_WGMMA_AT(N, 0) ", %" KREG_WGMMA_AT(N, 1)      \
                 ", %" KREG_WGMMA_AT(N, 2) ", %" KREG_WGMMA_AT(N, 3) "}, %"                  \
                 KREG_WGMMA_AT(N, 4) ", p, 1, 1, %" KREG_WGMMA_AT(N, 6) ";\n}"              \
                 : KREG_WGMMA_OUT##N                                                        \
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b),                      \
                   "r"(accumulate ? 1 : 0), "n"(TransposeB));    \
  }

#define KREG_WGMMA_D32 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15"
#define KREG_WGMMA_OUT32                                                                        \
  "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), "+f"(d[1][0]), "+f"(d[1][1]),     \
      "+f"(d[1][2]), "+f"(d[1][3]), "+f"(d[2][0]), "+f"(d[2][1]), "+f"(d[2][2]), "+f"(d[2][3]), \
      "+f"(d[3][0]), "+f"(d[3][1]), "+f"(d[3][2]), "+f"(d[3][3])
#define KREG_WGMMA_AT_32_0 "16"
#define KREG_WGMMA_AT_32_1 "17"
#define KREG_WGMMA_AT_32_2 "18"
#define KREG_WGMMA_AT_32_3 "19"
#define KREG_WGMMA_AT_32_4 "20"
#define KREG_WGMMA_AT_32_5 "21"
#define KREG_WGMMA_AT_32_6 "22"
#define KREG_WGMMA_D64                                                                         \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, " \
  "%20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
#define KREG_WGMMA_OUT64                                                                        \
  "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), "+f"(d[1][0]), "+f"(d[1][1]),     \
      "+f"(d[1][2]), "+f"(d[1][3]), "+f"(d[2][0]), "+f"(d[2][1]), "+f"(d[2][2]), "+f"(d[2][3]), \
      "+f"(d[3][0]), "+f"(d[3][1]), "+f"(d[3][2]), "+f"(d[3][3]), "+f"(d[4][0]), "+f"(d[4][1]), \
      "+f"(d[4][2]), "+f"(d[4][3]), "+f"(d[5][0]), "+f"(d[5][1]), "+f"(d[5][2]), "+f"(d[5][3]), \
      "+f"(d[6][0]), "+f"(d[6][1]), "+f"(d[6][2]), "+f"(d[6][3]), "+f"(d[7][0]), "+f"(d[7][1]), \
      "+f"(d[7][2]), "+f"(d[7][3])
#define KREG_WGMMA_AT_64_0 "32"
#define KREG_WGMMA_AT_64_1 "33"
#define KREG_WGMMA_AT_64_2 "34"
#define KREG_WGMMA_AT_64_3 "35"
#define KREG_WGMMA_AT_64_4 "36"
#define KREG_WGMMA_AT_64_5 "37"
#define KREG_WGMMA_AT_64_6 "38"
#define KREG_WGMMA_D128                                                                        \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, " \
  "%20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, " \
  "%38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, " \
  "%56, %57, %58, %59, %60, %61, %62, %63"
#define KREG_WGMMA_OUT128                                                                         \
  "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), "+f"(d[1][0]), "+f"(d[1][1]),       \
      "+f"(d[1][2]), "+f"(d[1][3]), "+f"(d[2][0]), "+f"(d[2][1]), "+f"(d[2][2]), "+f"(d[2][3]),   \
      "+f"(d[3][0]), "+f"(d[3][1]), "+f"(d[3][2]), "+f"(d[3][3]), "+f"(d[4][0]), "+f"(d[4][1]),   \
      "+f"(d[4][2]), "+f"(d[4][3]), "+f"(d[5][0]), "+f"(d[5][1]), "+f"(d[5][2]), "+f"(d[5][3]),   \
      "+f"(d[6][0]), "+f"(d[6][1]), "+f"(d[6][2]), "+f"(d[6][3]), "+f"(d[7][0]), "+f"(d[7][1]),   \
      "+f"(d[7][2]), "+f"(d[7][3]), "+f"(d[8][0]), "+f"(d[8][1]), "+f"(d[8][2]), "+f"(d[8][3]),   \
      "+f"(d[9][0]), "+f"(d[9][1]), "+f"(d[9][2]), "+f"(d[9][3]), "+f"(d[10][0]), "+f"(d[10][1]), \
      "+f"(d[10][2]), "+f"(d[10][3]), "+f"(d[11][0]), "+f"(d[11][1]), "+f"(d[11][2]),             \
      "+f"(d[11][3]), "+f"(d[12][0]), "+f"(d[12][1]), "+f"(d[12][2]), "+f"(d[12][3]),             \
      "+f"(d[13][0]), "+f"(d[13][1]), "+f"(d[13][2]), "+f"(d[13][3]), "+f"(d[14][0]),             \
      "+f"(d[14][1]), "+f"(d[14][2]), "+f"(d[14][3]), "+f"(d[15][0]), "+f"(d[15][1]),             \
      "+f"(d[15][2]), "+f"(d[15][3])
#define KREG_WGMMA_AT_128_0 "64"
#define KREG_WGMMA_AT_128_1 "65"
#define KREG_WGMMA_AT_128_2 "66"
#define KREG_WGMMA_AT_128_3 "67"
#define KREG_WGMMA_AT_128_4 "68"
#define KREG_WGMMA_AT_128_5 "69"
#define KREG_WGMMA_AT_128_6 "70"
#define KREG_WGMMA_D256                                                                            \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, "     \
  "%20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, "     \
  "%38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, "     \
  "%56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, "     \
  "%74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, "     \
  "%92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, " \
  "%109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, "     \
  "%124, %125, %126, %127"
#define KREG_WGMMA_OUT256                                                                         \
  "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), "+f"(d[1][0]), "+f"(d[1][1]),       \
      "+f"(d[1][2]), "+f"(d[1][3]), "+f"(d[2][0]), "+f"(d[2][1]), "+f"(d[2][2]), "+f"(d[2][3]),   \
      "+f"(d[3][0]), "+f"(d[3][1]), "+f"(d[3][2]), "+f"(d[3][3]), "+f"(d[4][0]), "+f"(d[4][1]),   \
      "+f"(d[4][2]), "+f"(d[4][3]), "+f"(d[5][0]), "+f"(d[5][1]), "+f"(d[5][2]), "+f"(d[5][3]),   \
      "+f"(d[6][0]), "+f"(d[6][1]), "+f"(d[6][2]), "+f"(d[6][3]), "+f"(d[7][0]), "+f"(d[7][1]),   \
      "+f"(d[7][2]), "+f"(d[7][3]), "+f"(d[8][0]), "+f"(d[8][1]), "+f"(d[8][2]), "+f"(d[8][3]),   \
      "+f"(d[9][0]), "+f"(d[9][1]), "+f"(d[9][2]), "+f"(d[9][3]), "+f"(d[10][0]), "+f"(d[10][1]), \
      "+f"(d[10][2]), "+f"(d[10][3]), "+f"(d[11][0]), "+f"(d[11][1]), "+f"(d[11][2]),             \
      "+f"(d[11][3]), "+f"(d[12][0]), "+f"(d[12][1]), "+f"(d[12][2]), "+f"(d[12][3]),             \
      "+f"(d[13][0]), "+f"(d[13][1]), "+f"(d[13][2]), "+f"(d[13][3]), "+f"(d[14][0]),             \
      "+f"(d[14][1]), "+f"(d[14][2]), "+f"(d[14][3]), "+f"(d[15][0]), "+f"(d[15][1]),             \
      "+f"(d[15][2]), "+f"(d[15][3]), "+f"(d[16][0]), "+f"(d[16][1]), "+f"(d[16][2]),             \
      "+f"(d[16][3]), "+f"(d[17][0]), "+f"(d[17][1]), "+f"(d[17][2]), "+f"(d[17][3]),             \
      "+f"(d[18][0]), "+f"(d[18][1]), "+f"(d[18][2]), "+f"(d[18][3]), "+f"(d[19][0]),             \
      "+f"(d[19][1]), "+f"(d[19][2]), "+f"(d[19][3]), "+f"(d[20][0]), "+f"(d[20][1]),             \
      "+f"(d[20][2]), "+f"(d[20][3]), "+f"(d[21][0]), "+f"(d[21][1]), "+f"(d[21][2]),             \
      "+f"(d[21][3]), "+f"(d[22][0]), "+f"(d[22][1]), "+f"(d[22][2]), "+f"(d[22][3]),             \
      "+f"(d[23][0]), "+f"(d[23][1]), "+f"(d[23][2]), "+f"(d[23][3]), "+f"(d[24][0]),             \
      "+f"(d[24][1]), "+f"(d[24][2]), "+f"(d[24][3]), "+f"(d[25][0]), "+f"(d[25][1]),             \
      "+f"(d[25][2]), "+f"(d[25][3]), "+f"(d[26][0]), "+f"(d[26][1]), "+f"(d[26][2]),             \
      "+f"(d[26][3]), "+f"(d[27][0]), "+f"(d[27][1]), "+f"(d[27][2]), "+f"(d[27][3]),             \
      "+f"(d[28][0]), "+f"(d[28][1]), "+f"(d[28][2]), "+f"(d[28][3]), "+f"(d[29][0]),             \
      "+f"(d[29][1]), "+f"(d[29][2]), "+f"(d[29][3]), "+f"(d[30][0]), "+f"(d[30][1]),             \
      "+f"(d[30][2]), "+f"(d[30][3]), "+f"(d[31][0]), "+f"(d[31][1]), "+f"(d[31][2]),             \
      "+f"(d[31][3])
#define KREG_WGMMA_AT_256_0 "128"
#define KREG_WGMMA_AT_256_1 "129"
#define KREG_WGMMA_AT_256_2 "130"
#define KREG_WGMMA_AT_256_3 "131"
#define KREG_WGMMA_AT_256_4 "132"
#define KREG_WGMMA_AT_256_5 "133"
#define KREG_WGMMA_AT_256_6 "134"
#define KREG_WGMMA_AT(N, k) KREG_WGMMA_AT_##N##_##k

template <int TransposeB>
struct Wgmma<32, TransposeB> {
  KREG_WGMMA_RUN(32, bfloat16, "bf16")
  KREG_WGMMA_RUN(32, half, "f16")
};

template <int TransposeB>
struct Wgmma<64, TransposeB> {
  KREG_WGMMA_RUN(64, bfloat16, "bf16")
  KREG_WGMMA_RUN(64, half, "f16")
};

template <int TransposeB>
struct Wgmma<128, TransposeB> {
  KREG_WGMMA_RUN(128, bfloat16, "bf16")
  KREG_WGMMA_RUN(128, half, "f16")
};

template <int TransposeB>
struct Wgmma<256, TransposeB> {
  KREG_WGMMA_RUN(256, bfloat16, "bf16")
  KREG_WGMMA_RUN(256, half, "f16")
};

/// d (+)= a b for one m64nNk16 tile with both operands in shared memory, N of 16, 128 or 256.
/// `TransposeA` 1 reads A as MN-major (M contiguous), 0 as K-major; `TransposeB` as for Wgmma.
template <int N, int TransposeA, int TransposeB>
struct WgmmaShared;

// As KREG_WGMMA_RUN, with A's descriptor in place of its registers: the accumulators, then
// A's and B's descriptors, whether to accumulate and the two transpose flags.
#define KREG_WGMMA_SS_RUN(N, TYPE, PTX)                                                       \
  __device__ static void run(float(&d)[N / 8][4], unsigned long long a, unsigned long long b, \
                             bool accumulate, TYPE /*type*/) {                                \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %" KREG_WGMMA_SS_AT(N, 2) ", 0;\n"      \
                 "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32." PTX "." PTX " {"         \
                 KREG_WGMMA_D##N "}, %" KREG_WGMMA_SS_AT(N, 0) ", %" KREG_WGMMA_SS_AT(N, 1) \
                 ", p, 1, 1, %" KREG_WGMMA_SS_AT(N, 3) ", %" KREG_WGMMA_SS_AT(N, 4) ";\n}"  \
                 : KREG_WGMMA_OUT##N                                                        \
                 : "l"(a), "l"(b), "r"(accumulate ? 1 : 0), "n"(TransposeA),                \
                   "n"(TransposeB));  \
  }

#define KREG_WGMMA_D16 "%0, %1, %2, %3, %4, %5, %6, %7"
#define KREG_WGMMA_OUT16                                                                    \
  "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), "+f"(d[1][0]), "+f"(d[1][1]), \
      "+f"(d[1][2]), "+f"(d[1][3])
#define KREG_WGMMA_SS_AT_16_0 "8"
#define KREG_WGMMA_SS_AT_16_1 "9"
#define KREG_WGMMA_SS_AT_16_2 "10"
#define KREG_WGMMA_SS_AT_16_3 "11"
#define KREG_WGMMA_SS_AT_16_4 "12"
#define KREG_WGMMA_SS_AT_128_0 "64"
#define KREG_WGMMA_SS_AT_128_1 "65"
#define KREG_WGMMA_SS_AT_128_2 "66"
#define KREG_WGMMA_SS_AT_128_3 "67"
#define KREG_WGMMA_SS_AT_128_4 "68"
#define KREG_WGMMA_SS_AT_256_0 "128"
#define KREG_WGMMA_SS_AT_256_1 "129"
#define KREG_WGMMA_SS_AT_256_2 "130"
#define KREG_WGMMA_SS_AT_256_3 "131"
#define KREG_WGMMA_SS_AT_256_4 "132"
#define KREG_WGMMA_SS_AT(N, k) KREG_WGMMA_SS_AT_##N##_##k

template <int TransposeA, int TransposeB>
struct WgmmaShared<16, TransposeA, TransposeB> {
  KREG_WGMMA_SS_RUN(16, bfloat16, "bf16")
  KREG_WGMMA_SS_RUN(16, half, "f16")
};

template <int TransposeA, int TransposeB>
struct WgmmaShared<128, TransposeA, TransposeB> {
  KREG_WGMMA_SS_RUN(128, bfloat16, "bf16")
  KREG_WGMMA_SS_RUN(128, half, "f16")
};

template <int TransposeA, int TransposeB>
struct WgmmaShared<256, TransposeA, TransposeB> {
  KREG_WGMMA_SS_RUN(256, bfloat16, "bf16")
  KREG_WGMMA_SS_RUN(256, half, "f16")
};

}  // namespace kreg
