// Dense matrix products on tensor cores: out = epilogue(A B + bias), float16 or bfloat16 in,
// float accumulators, the inputs' type or float32 out.
//
// matmul_tma (sm_90a): a block of three warpgroups takes a 128 x kTileN tile of out. The
// first warpgroup's first thread feeds a ring of shared-memory stages with the copy engine,
// A's 128 x 64 and B's kTileN x 64 tile a stage, each stage's bytes counted on its "full"
// barrier; the other two each multiply 64 rows by the whole tile with wgmma straight from
// shared memory, and hand a stage back on its "empty" barrier once the products that read it
// are done. Both operands may be K-major or MN-major: the copies land in the 128-byte swizzle
// either way, and the descriptors say which.
//
// matmul_tile (mma.sync, sm_80 and newer): any strides, any sizes; a block of four warps takes
// a 64 x 64 tile of out, 32 of k at a time through shared memory. It serves shapes the copy
// engine cannot (rows not on 16 bytes) and GPUs without wgmma.
// Constants and parameters: kreg/contracts/matmul.cuh.
// kreg:entry matmul_tma_f16=matmul_tma<kreg::half>
// kreg:entry matmul_tma_bf16=matmul_tma<kreg::bfloat16>
// kreg:entry matmul_tile_f16=matmul_tile<kreg::half>
// kreg:entry matmul_tile_bf16=matmul_tile<kreg::bfloat16>
// kreg:specialization 201:b1
// kreg:specialization 301:i128
// kreg:specialization 300:i4
// kreg:specialization 300:i5
// kreg:specialization 300:i4|301:i128
// kreg:specialization 300:i5|301:i128
// kreg:arch-specific
#include <kreg/contracts/matmul.cuh>
#include <kreg/device/kernel.cuh>
#include <kreg/device/matmul_epilogue.cuh>
#include <kreg/device/mma.cuh>
#include <kreg/device/tma.cuh>
#include <kreg/device/wgmma.cuh>

KREG_CONSTANT_DEFAULT(bool, a_major_m, kreg::contracts::matmul::kAMajorM, false);
KREG_CONSTANT_DEFAULT(bool, b_major_n, kreg::contracts::matmul::kBMajorN, false);
KREG_CONSTANT_DEFAULT(bool, has_bias, kreg::contracts::matmul::kBias, false);
KREG_CONSTANT_DEFAULT(bool, float_out, kreg::contracts::matmul::kFloatOut, false);
KREG_CONSTANT_DEFAULT(int, epilogue, kreg::contracts::matmul::kEpilogue, 0);
KREG_CONSTANT_DEFAULT(int, tile_n, kreg::contracts::matmul::kTileN, 256);

static_assert(epilogue >= 0 && epilogue <= 5, "matmul: the epilogue is 0 to 5");
static_assert(tile_n == 128 || tile_n == 256, "matmul: the tile is 128 or 256 columns wide");

namespace gemm {

namespace mc = kreg::contracts::matmul;

constexpr unsigned kStages = mc::kStages<tile_n>;
constexpr unsigned kABytes = mc::kTileM * mc::kTileK * 2;
constexpr unsigned kBBytes = tile_n * mc::kTileK * 2;
constexpr unsigned kStageBytes = kABytes + kBBytes;
constexpr unsigned kSlabBytes = 64 * 128;  // 64 rows of 128 bytes: one box of an MN-major tile
static_assert(kStages * kStageBytes + 1024 + 16 * kStages <= mc::kTmaSharedBytes<tile_n>,
              "the ring fits what the op asks for");

template <class T>
using Out = typename kreg::matmul::OutOf<float_out, T>::type;

}  // namespace gemm

template <typename T>
__global__ void __launch_bounds__(kreg::contracts::matmul::kTmaThreads, 1)
    matmul_tma(const __grid_constant__ kreg::contracts::TensorMap a_map,
               const __grid_constant__ kreg::contracts::TensorMap b_map, const T* __restrict__ bias,
               const T* __restrict__ other, void* __restrict__ out, int m, int n, int k,
               long long ld_other) {
  KREG_SIGNATURE(matmul_tma<T>, kreg::contracts::matmul::MatmulTma<T>);
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using namespace kreg;
  using namespace gemm;
  extern __shared__ __align__(1024) unsigned char ring[];
  // Swizzled tiles must start on 1024 bytes; the op asks for that much more.
  const unsigned base = (shared_address(ring) + 1023) & ~1023u;
  const StageRing<kStages> ring_bars{base + kStages * kStageBytes};
  const int warpgroup = static_cast<int>(threadIdx.x / 128);
  const int m0 = static_cast<int>(blockIdx.x) * static_cast<int>(mc::kTileM);
  const int n0 = static_cast<int>(blockIdx.y) * tile_n;
  const int tiles = (k + static_cast<int>(mc::kTileK) - 1) / static_cast<int>(mc::kTileK);
  if (threadIdx.x == 0) ring_bars.init(8);  // lane 0 of each warp that multiplies
  __syncthreads();

  if (warpgroup == 0) {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 40;");
    if (threadIdx.x != 0) return;
    tensor_map_prefetch(&a_map);
    tensor_map_prefetch(&b_map);
    for (int t = 0; t < tiles; ++t) {
      ring_bars.wait_empty(t);
      const unsigned s = ring_bars.stage(t);
      const unsigned full = ring_bars.full(s);
      const unsigned a_tile = base + s * kStageBytes;
      const unsigned b_tile = a_tile + kABytes;
      const int k0 = t * static_cast<int>(mc::kTileK);
      barrier_expect(full, kStageBytes);
      if constexpr (a_major_m) {
        tensor_copy_2d(a_tile, &a_map, m0, k0, full);
        tensor_copy_2d(a_tile + kSlabBytes, &a_map, m0 + 64, k0, full);
      } else {
        tensor_copy_2d(a_tile, &a_map, k0, m0, full);
      }
      if constexpr (b_major_n) {
#pragma unroll
        for (int j = 0; j < tile_n / 64; ++j) {
          tensor_copy_2d(b_tile + j * kSlabBytes, &b_map, n0 + 64 * j, k0, full);
        }
      } else {
        tensor_copy_2d(b_tile, &b_map, k0, n0, full);
      }
    }
    return;
  }

  asm volatile("setmaxnreg.inc.sync.aligned.u32 232;");
  const int half_tile = warpgroup - 1;  // rows 64 * half_tile to 64 * half_tile + 63
  const int warp = static_cast<int>(threadIdx.x / 32) % 4;
  const int lane = static_cast<int>(threadIdx.x % 32);
  float d[tile_n / 8][4];
#pragma unroll
  for (int g = 0; g < tile_n / 8; ++g) d[g][0] = d[g][1] = d[g][2] = d[g][3] = 0.0f;
  for (int t = 0; t < tiles; ++t) {
    const unsigned s = ring_bars.stage(t);
    ring_bars.wait_full(t);
    // Either way a warpgroup's 64 rows of A start 8 KiB into the tile: 64 rows of 128 bytes
    // (K-major), or the second box (M-major).
    const unsigned a_tile = base + s * kStageBytes + half_tile * kSlabBytes;
    const unsigned b_tile = base + s * kStageBytes + kABytes;
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) {
      // A k-step is 16 elements: 32 bytes along a K-major row, 16 rows of an MN-major slab.
      const unsigned long long a_desc = a_major_m
                                            ? smem_descriptor(a_tile + kk * 2048, kSlabBytes, 1024)
                                            : smem_descriptor(a_tile + kk * 32, 16, 1024);
      const unsigned long long b_desc = b_major_n
                                            ? smem_descriptor(b_tile + kk * 2048, kSlabBytes, 1024)
                                            : smem_descriptor(b_tile + kk * 32, 16, 1024);
      WgmmaShared<tile_n, a_major_m ? 1 : 0, b_major_n ? 1 : 0>::run(d, a_desc, b_desc, true, T{});
    }
    wgmma_commit();
    // The products of tile t may still run; those of tile t - 1 are done, so its stage is free.
    wgmma_wait<1>();
    wgmma_hold(d);
    if (t > 0 && lane == 0) barrier_arrive(ring_bars.empty(ring_bars.stage(t - 1)));
  }
  wgmma_wait<0>();
  wgmma_hold(d);

  // The accumulators lie as mma.sync's C fragments side by side: group g holds columns 8g to
  // 8g + 7 of rows lane / 4 and lane / 4 + 8 of this warp's 16.
  const int row = m0 + 64 * half_tile + 16 * warp + lane / 4;
  Out<T>* o = static_cast<Out<T>*>(out);
#pragma unroll
  for (int g = 0; g < tile_n / 8; ++g) {
    const int col = n0 + 8 * g + 2 * (lane % 4);
    matmul::store_pair<T, Out<T>, epilogue, has_bias>(o, bias, other, ld_other, m, n, row, col,
                                                      d[g][0], d[g][1]);
    matmul::store_pair<T, Out<T>, epilogue, has_bias>(o, bias, other, ld_other, m, n, row + 8, col,
                                                      d[g][2], d[g][3]);
  }
#else
  __trap();  // the op launches this only where the target has wgmma
#endif
}

template <typename T>
__global__ void __launch_bounds__(kreg::contracts::matmul::kTileThreads)
    matmul_tile(const T* __restrict__ a, const T* __restrict__ b, const T* __restrict__ bias,
                const T* __restrict__ other, void* __restrict__ out, int m, int n, int k,
                long long a_row, long long a_col, long long b_row, long long b_col,
                long long ld_other) {
  KREG_SIGNATURE(matmul_tile<T>, kreg::contracts::matmul::MatmulTile<T>);
  using namespace kreg;
  using namespace gemm;
  constexpr int kRows = mc::kTileRows;
  constexpr int kCols = mc::kTileCols;
  constexpr int kDepth = 32;
  constexpr int kPitch = kDepth + 8;  // 80-byte rows: a fragment's eight rows in distinct banks
  constexpr int kThreads = mc::kTileThreads;
  // Both tiles keep k contiguous: A as [row][k], B as [column][k], which is what the fragments
  // of m16n8k16 read.
  __shared__ __align__(16) T as[kRows][kPitch];
  __shared__ __align__(16) T bs[kCols][kPitch];
  const int tid = static_cast<int>(threadIdx.x);
  const int warp = tid / 32;
  const int lane = tid % 32;
  const int wm = warp / 2;  // rows 32 wm to 32 wm + 31 of the tile
  const int wn = warp % 2;  // columns 32 wn to 32 wn + 31
  const long long m0 = static_cast<long long>(blockIdx.x) * kRows;
  const long long n0 = static_cast<long long>(blockIdx.y) * kCols;
  // Threads walk a tile along whichever dimension is contiguous in memory, so that a warp's
  // reads are coalesced.
  const bool a_along_k = a_col == 1;
  const bool b_along_k = b_row == 1;
  float acc[2][4][4] = {};
  for (int k0 = 0; k0 < k; k0 += kDepth) {
#pragma unroll 4
    for (int j = 0; j < kRows * kDepth / kThreads; ++j) {
      const int e = tid + kThreads * j;
      const int i = a_along_k ? e / kDepth : e % kRows;
      const int p = a_along_k ? e % kDepth : e / kRows;
      const bool inside = m0 + i < m && k0 + p < k;
      as[i][p] = inside ? a[(m0 + i) * a_row + (k0 + p) * a_col] : T(0.0f);
    }
#pragma unroll 4
    for (int j = 0; j < kCols * kDepth / kThreads; ++j) {
      const int e = tid + kThreads * j;
      const int c = b_along_k ? e / kDepth : e % kCols;
      const int p = b_along_k ? e % kDepth : e / kCols;
      const bool inside = n0 + c < n && k0 + p < k;
      bs[c][p] = inside ? b[(k0 + p) * b_row + (n0 + c) * b_col] : T(0.0f);
    }
    __syncthreads();
#pragma unroll
    for (int ks = 0; ks < kDepth; ks += 16) {
      const int kc = ks + 2 * (lane % 4);
      unsigned af[2][4];
#pragma unroll
      for (int mt = 0; mt < 2; ++mt) {
        const int r = 32 * wm + 16 * mt + lane / 4;
        af[mt][0] = *reinterpret_cast<const unsigned*>(&as[r][kc]);
        af[mt][1] = *reinterpret_cast<const unsigned*>(&as[r + 8][kc]);
        af[mt][2] = *reinterpret_cast<const unsigned*>(&as[r][kc + 8]);
        af[mt][3] = *reinterpret_cast<const unsigned*>(&as[r + 8][kc + 8]);
      }
#pragma unroll
      for (int nt = 0; nt < 4; ++nt) {
        const int c = 32 * wn + 8 * nt + lane / 4;
        const unsigned b0 = *reinterpret_cast<const unsigned*>(&bs[c][kc]);
        const unsigned b1 = *reinterpret_cast<const unsigned*>(&bs[c][kc + 8]);
#pragma unroll
        for (int mt = 0; mt < 2; ++mt) mma_16816(acc[mt][nt], af[mt], b0, b1, T{});
      }
    }
    __syncthreads();
  }
  Out<T>* o = static_cast<Out<T>*>(out);
#pragma unroll
  for (int mt = 0; mt < 2; ++mt) {
#pragma unroll
    for (int nt = 0; nt < 4; ++nt) {
      const int row = static_cast<int>(m0) + 32 * wm + 16 * mt + lane / 4;
      const int col = static_cast<int>(n0) + 32 * wn + 8 * nt + 2 * (lane % 4);
      matmul::store_pair<T, Out<T>, epilogue, has_bias>(o, bias, other, ld_other, m, n, row, col,
                                                        acc[mt][nt][0], acc[mt][nt][1]);
      matmul::store_pair<T, Out<T>, epilogue, has_bias>(o, bias, other, ld_other, m, n, row + 8,
                                                        col, acc[mt][nt][2], acc[mt][nt][3]);
    }
  }
}
