// out = epilogue(A B + bias) for 2 to 16 rows of A (decode of a few sequences): bound by
// reading B (K-major: an [n, k] weight read as its transpose) once, on sm_90a.
//
// The weight goes through the copy engine: one thread issues tensor copies of B's rows into a
// ring of shared-memory stages, as many bytes in flight as the ring holds, with no registers
// spent on them, and in whole 128-byte lines of a row. A warpgroup multiplies straight from
// the ring with wgmma, B's 64 rows as the product's A operand and A's rows as its 16 columns
// (the product is out's transpose, so that the wide side of the weight fills the tensor cores'
// 64 rows and the few rows of A their narrowest N). A's rows come with each stage as a box of
// 16 rows, zeros past m; they stay in L2.
//
// Narrow weights (n of a few thousand) give too few blocks of 64 columns to keep every
// multiprocessor reading, so the op also cuts k into gridDim.y ranges: each block then writes
// its float sums, and matmul_split_sum, launched to overlap this kernel's end, adds them and
// applies the bias and the epilogue.
// Constants and parameters: kreg/contracts/matmul.cuh.
// kreg:entry matmul_stream_f16=matmul_stream<kreg::half>
// kreg:entry matmul_stream_bf16=matmul_stream<kreg::bfloat16>
// kreg:entry matmul_split_sum_f16=matmul_split_sum<kreg::half>
// kreg:entry matmul_split_sum_bf16=matmul_split_sum<kreg::bfloat16>
// kreg:specialization 300:i4
// kreg:specialization 300:i5
// kreg:arch-specific
#include <kreg/contracts/matmul.cuh>
#include <kreg/device/grid_dependency.cuh>
#include <kreg/device/kernel.cuh>
#include <kreg/device/matmul_epilogue.cuh>
#include <kreg/device/mma.cuh>
#include <kreg/device/tma.cuh>
#include <kreg/device/wgmma.cuh>

KREG_CONSTANT_DEFAULT(bool, has_bias, kreg::contracts::matmul::kBias, false);
KREG_CONSTANT_DEFAULT(bool, float_out, kreg::contracts::matmul::kFloatOut, false);
KREG_CONSTANT_DEFAULT(int, epilogue, kreg::contracts::matmul::kEpilogue, 0);
KREG_CONSTANT_DEFAULT(int, stream_stages, kreg::contracts::matmul::kStreamStages, 8);

static_assert(epilogue >= 0 && epilogue <= 5, "matmul: the epilogue is 0 to 5");
static_assert(stream_stages == 4 || stream_stages == 6 || stream_stages == 8,
              "matmul: the streaming ring has 4, 6 or 8 stages");

namespace stream {

namespace mc = kreg::contracts::matmul;

constexpr unsigned kStages = stream_stages;
constexpr unsigned kCols = mc::kStreamCols;
constexpr unsigned kRows = mc::kSkinnyRows;
constexpr unsigned kBBytes = kCols * mc::kTileK * 2;  // the weight's rows: the product's A
constexpr unsigned kABytes = kRows * mc::kTileK * 2;  // A's rows: the product's B
constexpr unsigned kStageBytes = kBBytes + kABytes;
constexpr unsigned kPitch = kCols + 1;
static_assert(kStageBytes % 1024 == 0, "each stage's tiles start on the swizzle's 1024 bytes");
static_assert(kStages * kStageBytes + 1024 + 16 * kStages + kRows * kPitch * 4 <=
                  mc::kStreamSharedBytes<stream_stages>,
              "the ring fits what the op asks for");

template <class T>
using Out = typename kreg::matmul::OutOf<float_out, T>::type;

}  // namespace stream

template <typename T>
__global__ void __launch_bounds__(kreg::contracts::matmul::kStreamThreads)
    matmul_stream(const __grid_constant__ kreg::contracts::TensorMap a_map,
                  const __grid_constant__ kreg::contracts::TensorMap b_map,
                  const T* __restrict__ bias, const T* __restrict__ other, void* __restrict__ out,
                  float* __restrict__ partial, int m, int n, int k, long long ld_other) {
  KREG_SIGNATURE(matmul_stream<T>, kreg::contracts::matmul::MatmulStream<T>);
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using namespace kreg;
  using namespace stream;
  extern __shared__ __align__(1024) unsigned char ring[];
  // Swizzled tiles must start on 1024 bytes; the op asks for that much more.
  const unsigned base = (shared_address(ring) + 1023) & ~1023u;
  const StageRing<kStages> ring_bars{base + kStages * kStageBytes};
  // out's transpose for this block, [row of A][column of out], after the barriers.
  float* sums =
      reinterpret_cast<float*>(ring + (ring_bars.bars + 16 * kStages - shared_address(ring)));
  const int warp = static_cast<int>(threadIdx.x / 32);
  const int lane = static_cast<int>(threadIdx.x % 32);
  const int n0 = static_cast<int>(blockIdx.x * kCols);
  const int tiles = (k + static_cast<int>(mc::kTileK) - 1) / static_cast<int>(mc::kTileK);
  const int ranges = static_cast<int>(gridDim.y);
  const int range = static_cast<int>(blockIdx.y);
  const int first = static_cast<int>(static_cast<long long>(range) * tiles / ranges);
  const int count = static_cast<int>(static_cast<long long>(range + 1) * tiles / ranges) - first;
  // The sum kernel (when there is one) may start on the multiprocessors: it waits for this
  // grid's end before it reads.
  release_dependent_grid();
  if (threadIdx.x == 0) ring_bars.init(4);  // lane 0 of each warp that multiplies
  __syncthreads();

  if (warp == 4) {
    if (lane != 0) return;
    tensor_map_prefetch(&a_map);
    tensor_map_prefetch(&b_map);
    for (int t = 0; t < count; ++t) {
      ring_bars.wait_empty(t);
      const unsigned s = ring_bars.stage(t);
      const unsigned full = ring_bars.full(s);
      const unsigned b_tile = base + s * kStageBytes;
      const unsigned a_tile = b_tile + kBBytes;
      const int k0 = (first + t) * static_cast<int>(mc::kTileK);
      barrier_expect(full, kStageBytes);
      tensor_copy_2d(b_tile, &b_map, k0, n0, full);
      tensor_copy_2d(a_tile, &a_map, k0, 0, full);
    }
    return;
  }

  float d[kRows / 8][4];
#pragma unroll
  for (unsigned g = 0; g < kRows / 8; ++g) d[g][0] = d[g][1] = d[g][2] = d[g][3] = 0.0f;
  for (int t = 0; t < count; ++t) {
    ring_bars.wait_full(t);
    const unsigned b_tile = base + ring_bars.stage(t) * kStageBytes;
    const unsigned a_tile = b_tile + kBBytes;
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) {
      // A k-step is 16 elements: 32 bytes along both operands' K-major rows.
      const unsigned long long w_desc = smem_descriptor(b_tile + kk * 32, 16, 1024);
      const unsigned long long x_desc = smem_descriptor(a_tile + kk * 32, 16, 1024);
      WgmmaShared<kRows, 0, 0>::run(d, w_desc, x_desc, true, T{});
    }
    wgmma_commit();
    // The products of tile t may still run; those of tile t - 1 are done, so its stage is free.
    wgmma_wait<1>();
    wgmma_hold(d);
    if (t > 0 && lane == 0) barrier_arrive(ring_bars.empty(ring_bars.stage(t - 1)));
  }
  wgmma_wait<0>();
  wgmma_hold(d);

  // d[g] holds, as mma.sync's C fragments, columns n0 + 16 warp + lane / 4 (and + 8) of out
  // for A's rows 8g + 2 (lane % 4) and the next: turned round in shared memory so that the
  // stores run along out's rows.
  const int col = 16 * warp + lane / 4;
#pragma unroll
  for (unsigned g = 0; g < kRows / 8; ++g) {
    const int row = static_cast<int>(8 * g) + 2 * (lane % 4);
    sums[row * kPitch + col] = d[g][0];
    sums[(row + 1) * kPitch + col] = d[g][1];
    sums[row * kPitch + col + 8] = d[g][2];
    sums[(row + 1) * kPitch + col + 8] = d[g][3];
  }
  asm volatile("bar.sync 1, 128;" ::: "memory");  // the warpgroup alone: the feeder has left
  for (int p = static_cast<int>(threadIdx.x); p < static_cast<int>(kRows * kCols / 2); p += 128) {
    const int row = p / static_cast<int>(kCols / 2);
    const int c = 2 * (p % static_cast<int>(kCols / 2));
    const int at = n0 + c;
    if (row >= m || at >= n) continue;
    const float x0 = sums[row * kPitch + c];
    const float x1 = sums[row * kPitch + c + 1];
    if (partial == nullptr) {
      matmul::store_pair<T, Out<T>, epilogue, has_bias>(static_cast<Out<T>*>(out), bias, other,
                                                        ld_other, m, n, row, at, x0, x1);
      continue;
    }
    float* to = partial + (static_cast<long long>(range) * m + row) * n + at;
    if (at + 1 < n && n % 2 == 0) {
      *reinterpret_cast<float2*>(to) = make_float2(x0, x1);
    } else {
      to[0] = x0;
      if (at + 1 < n) to[1] = x1;
    }
  }
#else
  __trap();  // the op launches this only where the target has wgmma
#endif
}

template <typename T>
__global__ void __launch_bounds__(kreg::contracts::matmul::kSplitSumThreads)
    matmul_split_sum(const float* __restrict__ partial, const T* __restrict__ bias,
                     const T* __restrict__ other, void* __restrict__ out, int m, int n, int splits,
                     long long ld_other) {
  KREG_SIGNATURE(matmul_split_sum<T>, kreg::contracts::matmul::MatmulSplitSum<T>);
  using namespace kreg;
  using namespace stream;
  const long long pairs = (n + 1) / 2;
  const long long p = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  wait_for_prior_grid();  // the partials are matmul_stream's
  if (p >= m * pairs) return;
  const int row = static_cast<int>(p / pairs);
  const int col = static_cast<int>(2 * (p % pairs));
  const bool both = col + 1 < n;
  const long long plane = static_cast<long long>(m) * n;
  const float* from = partial + static_cast<long long>(row) * n + col;
  float x0 = 0.0f;
  float x1 = 0.0f;
  if (both && n % 2 == 0) {
    for (int s = 0; s < splits; ++s) {
      const float2 v = *reinterpret_cast<const float2*>(from + s * plane);
      x0 += v.x;
      x1 += v.y;
    }
  } else {
    for (int s = 0; s < splits; ++s) {
      x0 += from[s * plane];
      if (both) x1 += from[s * plane + 1];
    }
  }
  matmul::store_pair<T, Out<T>, epilogue, has_bias>(static_cast<Out<T>*>(out), bias, other,
                                                    ld_other, m, n, row, col, x0, x1);
}
