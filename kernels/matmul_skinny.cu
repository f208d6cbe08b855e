// Matrix products with at most 16 rows of A (decode: a few tokens against a weight matrix),
// which are bound by reading B once: out = epilogue(A B + bias), B K-major (an [n, k] weight
// read as its transpose), float16 or bfloat16, on mma.sync.
//
// A block of 16 warps (or 8 or 4, kSkinnyWarps) takes 32 (or 16) columns of out; its warps split
// k in chunks of 64, each lane reading 16 bytes of four (or two) rows of B and of two rows of A
// a half-chunk, with no shared memory between the loads and the products. The products need a lane to hold k = 2t, 2t +
// 1, 2t + 8 and 2t + 9 of a 16-wide step (t = lane % 4); a dot product does not care in which order
// k is summed, so a lane's eight contiguous elements at 8t stand for two such steps, the same
// permutation on both sides. The warps' sums meet in shared memory for the epilogue.
// Constants and parameters: kreg/contracts/matmul.cuh.
// kreg:entry matmul_skinny_f16=matmul_skinny<kreg::half>
// kreg:entry matmul_skinny_bf16=matmul_skinny<kreg::bfloat16>
// kreg:specialization 303:i4
// kreg:specialization 302:i16
// kreg:specialization 302:i16|303:i4
// kreg:specialization 300:i4
// kreg:specialization 300:i5
// kreg:specialization 300:i4|302:i16
// kreg:specialization 300:i5|302:i16
#include <kreg/contracts/matmul.cuh>
#include <kreg/device/kernel.cuh>
#include <kreg/device/load.cuh>
#include <kreg/device/matmul_epilogue.cuh>
#include <kreg/device/mma.cuh>

KREG_CONSTANT_DEFAULT(bool, has_bias, kreg::contracts::matmul::kBias, false);
KREG_CONSTANT_DEFAULT(bool, float_out, kreg::contracts::matmul::kFloatOut, false);
KREG_CONSTANT_DEFAULT(int, epilogue, kreg::contracts::matmul::kEpilogue, 0);
KREG_CONSTANT_DEFAULT(int, skinny_cols, kreg::contracts::matmul::kSkinnyCols, 32);
KREG_CONSTANT_DEFAULT(int, skinny_warps, kreg::contracts::matmul::kSkinnyWarps, 16);

static_assert(epilogue >= 0 && epilogue <= 5, "matmul: the epilogue is 0 to 5");
static_assert(skinny_cols == 16 || skinny_cols == 32, "matmul: a block takes 16 or 32 columns");
static_assert(skinny_warps == 4 || skinny_warps == 8 || skinny_warps == 16,
              "matmul: a skinny block has 4, 8 or 16 warps");

namespace skinny {

namespace mc = kreg::contracts::matmul;

constexpr int kWarps = skinny_warps;
constexpr int kThreads = 32 * kWarps;
constexpr int kBlocksPerSm = 16 / kWarps;  // 16 warps a multiprocessor at up to 128 registers
constexpr int kCols = skinny_cols;
constexpr int kTiles = kCols / 8;  // of 8 columns, a lane reading one row of B in each
constexpr int kChunk = 64;         // of k, a warp's step
constexpr int kPitch = kCols + 1;

}  // namespace skinny

template <typename T>
__global__ void __launch_bounds__(skinny::kThreads, skinny::kBlocksPerSm)
    matmul_skinny(const T* __restrict__ a, const T* __restrict__ b, const T* __restrict__ bias,
                  const T* __restrict__ other, void* __restrict__ out, int m, int n, int k,
                  long long a_row, long long b_row, long long ld_other) {
  KREG_SIGNATURE(matmul_skinny<T>, kreg::contracts::matmul::MatmulSkinny<T>);
  using namespace kreg;
  using namespace skinny;
  using Out = typename matmul::OutOf<float_out, T>::type;
  __shared__ float sums[kWarps][mc::kSkinnyRows][kPitch];
  const int warp = static_cast<int>(threadIdx.x / 32);
  const int lane = static_cast<int>(threadIdx.x % 32);
  const int g = lane / 4;
  const int t = lane % 4;
  const int n0 = static_cast<int>(blockIdx.x) * kCols;
  // This lane's rows: of B, columns n0 + g + 8j of out; of A, rows g and g + 8.
  const T* brow[kTiles];
  bool bvalid[kTiles];
#pragma unroll
  for (int j = 0; j < kTiles; ++j) {
    const int col = n0 + g + 8 * j;
    bvalid[j] = col < n;
    brow[j] = b + static_cast<long long>(bvalid[j] ? col : 0) * b_row;
  }
  const bool a_lo = g < m;
  const bool a_hi = g + 8 < m;
  const T* arow_lo = a + static_cast<long long>(a_lo ? g : 0) * a_row;
  const T* arow_hi = a + static_cast<long long>(a_hi ? g + 8 : 0) * a_row;
  const uint4 zero = make_uint4(0, 0, 0, 0);

  float acc[kTiles][4] = {};
#pragma unroll 2
  for (int kc = warp * kChunk; kc < k; kc += kWarps * kChunk) {
    uint4 w[2][kTiles];
    uint4 x_lo[2];
    uint4 x_hi[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int at = kc + 32 * h + 8 * t;
      const bool inside = at < k;  // k is a multiple of 8: a lane's 8 are all in or all out
#pragma unroll
      for (int j = 0; j < kTiles; ++j)
        w[h][j] = inside && bvalid[j] ? load_stream(brow[j] + at) : zero;
      x_lo[h] = inside && a_lo ? load_shared_by_blocks(arow_lo + at) : zero;
      x_hi[h] = inside && a_hi ? load_shared_by_blocks(arow_hi + at) : zero;
    }
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const unsigned lo[4] = {x_lo[h].x, x_lo[h].y, x_lo[h].z, x_lo[h].w};
      const unsigned hi[4] = {x_hi[h].x, x_hi[h].y, x_hi[h].z, x_hi[h].w};
#pragma unroll
      for (int s = 0; s < 2; ++s) {
        const unsigned af[4] = {lo[2 * s], hi[2 * s], lo[2 * s + 1], hi[2 * s + 1]};
#pragma unroll
        for (int j = 0; j < kTiles; ++j) {
          const unsigned bw[4] = {w[h][j].x, w[h][j].y, w[h][j].z, w[h][j].w};
          mma_16816(acc[j], af, bw[2 * s], bw[2 * s + 1], T{});
        }
      }
    }
  }
  // acc[j] holds rows g and g + 8, columns 8j + 2t and 8j + 2t + 1 of the block's.
#pragma unroll
  for (int j = 0; j < kTiles; ++j) {
    sums[warp][g][8 * j + 2 * t] = acc[j][0];
    sums[warp][g][8 * j + 2 * t + 1] = acc[j][1];
    sums[warp][g + 8][8 * j + 2 * t] = acc[j][2];
    sums[warp][g + 8][8 * j + 2 * t + 1] = acc[j][3];
  }
  __syncthreads();
  // A thread finishes two neighbouring columns of one row at a time.
  for (int p = static_cast<int>(threadIdx.x); p < mc::kSkinnyRows * kCols / 2; p += kThreads) {
    const int row = p / (kCols / 2);
    const int col = 2 * (p % (kCols / 2));
    float x0 = 0.0f;
    float x1 = 0.0f;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) {
      x0 += sums[w][row][col];
      x1 += sums[w][row][col + 1];
    }
    matmul::store_pair<T, Out, epilogue, has_bias>(static_cast<Out*>(out), bias, other, ld_other, m,
                                                   n, row, n0 + col, x0, x1);
  }
}
