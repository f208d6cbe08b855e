// The grouped product of a mixture-of-experts layer: each tile of rows (a run of one expert's
// rows in the dispatch's order, kreg/contracts/moe.cuh) times that expert's weight, K-major,
// on mma.sync. Decode sends a few rows to each expert, so like kernels/matmul_skinny.cu it is
// built to read each weight once: a block of kWarps warps takes kCols columns of one tile's
// out, its warps splitting k in chunks of 64, each lane reading 16 bytes of four rows of the
// weight (for the gated product, two of the gate's and two of the up projection's) and of
// the tile's rows of x a half-chunk, with no shared memory between the loads and the products.
// The x rows of the first product of a layer are gathered from the tokens through the
// dispatch's order. A dot product does not care in which order k is summed, so a lane's eight
// contiguous elements stand for two 16-wide k steps, the same permutation on both sides. The
// warps' sums meet in shared memory, in a fixed order, for the epilogue (silu(gate) * up when
// gated), rounded once.
//
// The grid's x dimension is the tiles, so that the blocks the GPU runs together share a
// column block: an expert's tiles follow each other and read its weight from L2 after the
// first. A tile of 32 rows halves the weight reads per row again. Fewer warps a block take
// longer runs of k each, and more blocks share a multiprocessor, so one block's loads cover
// another's start and reduction.
// Constants and parameters: kreg/contracts/moe.cuh.
// kreg:entry moe_matmul_f16=moe_matmul<kreg::half>
// kreg:entry moe_matmul_bf16=moe_matmul<kreg::bfloat16>
// kreg:specialization 200:b1
// kreg:specialization 200:b1|300:i32
// kreg:specialization 300:i32
#include <kreg/contracts/moe.cuh>
#include <kreg/device/kernel.cuh>
#include <kreg/device/load.cuh>
#include <kreg/device/matmul_epilogue.cuh>
#include <kreg/device/mma.cuh>

KREG_CONSTANT_DEFAULT(bool, gated, kreg::contracts::moe::kGated, false);
KREG_CONSTANT_DEFAULT(int, tile_rows, kreg::contracts::moe::kTileRows, 16);
KREG_CONSTANT_DEFAULT(int, block_cols, kreg::contracts::moe::kCols, 32);
KREG_CONSTANT_DEFAULT(int, warps, kreg::contracts::moe::kWarps, 4);

static_assert(tile_rows == 16 || tile_rows == 32, "moe_matmul: a tile is 16 or 32 rows");
static_assert(block_cols == 16 || block_cols == 32, "moe_matmul: a block takes 16 or 32 columns");
static_assert((warps == 2 || warps == 4 || warps == 8 || warps == 16) && warps * tile_rows <= 256,
              "moe_matmul: a block has 2, 4, 8 or 16 warps, and at most 256 rows of sums");

namespace grouped {

namespace mc = kreg::contracts::moe;

constexpr int kMTiles = tile_rows / 16;  // 16-row A tiles: the tile's rows
constexpr int kWarps = warps;
constexpr int kThreads = 32 * kWarps;
// Blocks a multiprocessor, so that every size keeps 16 warps there at up to 128 registers.
constexpr int kBlocksPerSm = 16 / kWarps;
constexpr int kCols = gated ? 16 : block_cols;   // of out, a block
constexpr int kBRows = gated ? 32 : block_cols;  // of the weights, a block
constexpr int kTiles = kBRows / 8;               // 8-row B tiles, a lane reading one row each
constexpr int kChunk = 64;                       // of k, a warp's step
constexpr int kPitch = kBRows + 1;

}  // namespace grouped

template <typename T>
__global__ void __launch_bounds__(grouped::kThreads, grouped::kBlocksPerSm)
    moe_matmul(const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ up,
               const int* __restrict__ order, const int* __restrict__ tiles, T* __restrict__ out,
               int n, int k, int top_k, long long x_row, long long w_expert) {
  KREG_SIGNATURE(moe_matmul<T>, kreg::contracts::moe::GroupedMatmul<T>);
  using namespace kreg;
  using namespace grouped;
  __shared__ float sums[kWarps][tile_rows][kPitch];
  const int4 tile = *reinterpret_cast<const int4*>(tiles + 4 * static_cast<long long>(blockIdx.x));
  const int expert = tile.x;
  if (expert < 0) return;
  const int row0 = tile.y;
  const int rows = tile.z;
  const int warp = static_cast<int>(threadIdx.x / 32);
  const int lane = static_cast<int>(threadIdx.x % 32);
  const int g = lane / 4;
  const int t = lane % 4;
  const int n0 = static_cast<int>(blockIdx.y) * kCols;
  // This lane's rows of the weights: j < kTiles / 2 of the gate and the rest of up when gated,
  // columns n0 + g + 8j of out otherwise.
  const T* brow[kTiles];
  bool bvalid[kTiles];
#pragma unroll
  for (int j = 0; j < kTiles; ++j) {
    const bool second = gated && j >= kTiles / 2;
    const int col = n0 + g + 8 * (second ? j - kTiles / 2 : j);
    bvalid[j] = col < n;
    brow[j] =
        (second ? up : w) + expert * w_expert + static_cast<long long>(bvalid[j] ? col : 0) * k;
  }
  // Its rows of x: g and g + 8 of each 16 of the tile.
  const T* arow[kMTiles][2];
  bool avalid[kMTiles][2];
#pragma unroll
  for (int i = 0; i < kMTiles; ++i) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int r = 16 * i + 8 * h + g;
      avalid[i][h] = r < rows;
      const int p = row0 + (avalid[i][h] ? r : 0);
      const long long source = order != nullptr ? order[p] / top_k : p;
      arow[i][h] = x + source * x_row;
    }
  }
  const uint4 zero = make_uint4(0, 0, 0, 0);

  float acc[kMTiles][kTiles][4] = {};
#pragma unroll 2
  for (int kc = warp * kChunk; kc < k; kc += kWarps * kChunk) {
    uint4 wv[2][kTiles];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int at = kc + 32 * h + 8 * t;
      const bool inside = at < k;  // k is a multiple of 8: a lane's 8 are all in or all out
#pragma unroll
      for (int j = 0; j < kTiles; ++j) {
        wv[h][j] = inside && bvalid[j] ? load_stream(brow[j] + at) : zero;
      }
    }
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int at = kc + 32 * h + 8 * t;
      const bool inside = at < k;
#pragma unroll
      for (int i = 0; i < kMTiles; ++i) {
        const uint4 lo4 = inside && avalid[i][0] ? load_shared_by_blocks(arow[i][0] + at) : zero;
        const uint4 hi4 = inside && avalid[i][1] ? load_shared_by_blocks(arow[i][1] + at) : zero;
        const unsigned lo[4] = {lo4.x, lo4.y, lo4.z, lo4.w};
        const unsigned hi[4] = {hi4.x, hi4.y, hi4.z, hi4.w};
#pragma unroll
        for (int s = 0; s < 2; ++s) {
          const unsigned af[4] = {lo[2 * s], hi[2 * s], lo[2 * s + 1], hi[2 * s + 1]};
#pragma unroll
          for (int j = 0; j < kTiles; ++j) {
            const unsigned bw[4] = {wv[h][j].x, wv[h][j].y, wv[h][j].z, wv[h][j].w};
            mma_16816(acc[i][j], af, bw[2 * s], bw[2 * s + 1], T{});
          }
        }
      }
    }
  }
  // acc[i][j] holds rows 16i + g and 16i + g + 8, columns 8j + 2t and 8j + 2t + 1 of the
  // block's weight rows.
#pragma unroll
  for (int i = 0; i < kMTiles; ++i) {
#pragma unroll
    for (int j = 0; j < kTiles; ++j) {
      sums[warp][16 * i + g][8 * j + 2 * t] = acc[i][j][0];
      sums[warp][16 * i + g][8 * j + 2 * t + 1] = acc[i][j][1];
      sums[warp][16 * i + g + 8][8 * j + 2 * t] = acc[i][j][2];
      sums[warp][16 * i + g + 8][8 * j + 2 * t + 1] = acc[i][j][3];
    }
  }
  __syncthreads();
  // A thread finishes two neighbouring columns of one row at a time.
  constexpr int kPairs = tile_rows * kCols / 2;
  for (int p = static_cast<int>(threadIdx.x); p < kPairs; p += kThreads) {
    const int row = p / (kCols / 2);
    if (row >= rows) break;
    const int col = 2 * (p % (kCols / 2));
    float v[2];
#pragma unroll
    for (int c = 0; c < 2; ++c) {
      float a = 0.0f;
      float b = 0.0f;
#pragma unroll
      for (int wi = 0; wi < kWarps; ++wi) {
        a += sums[wi][row][col + c];
        if constexpr (gated) b += sums[wi][row][kCols + col + c];
      }
      v[c] = gated ? matmul::activate<kreg::contracts::matmul::kSiluGate>(a, b) : a;
    }
    matmul::store_pair<T, T, kreg::contracts::matmul::kNone, false>(
        out + static_cast<long long>(row0) * n, nullptr, nullptr, 0, rows, n, row, n0 + col, v[0],
        v[1]);
  }
}
