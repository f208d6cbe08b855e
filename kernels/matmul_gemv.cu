// out = epilogue(a B + bias) for one row of A (decode of a single sequence): bound by reading
// B (K-major: an [n, k] weight read as its transpose) once, near the rate of a plain copy.
//
// Each load of B is a warp's 512 contiguous bytes of one row, 16 bytes a lane, so that DRAM
// and L2 see whole runs of a row rather than a few bytes of many rows (the skinny kernel's
// pattern, 64 bytes of eight rows a load, read a 4096 x 4096 weight 1.1-1.3x slower on an
// H100; docs/performance.md, "One row against a weight"). A
// block of kGemvWarps warps takes 16 rows of B (16 columns of out); its warps take every
// kGemvWarps-th window of 256 elements of k, loading the next half window's rows while they
// multiply the current one.
//
// The products are mma.sync with a mapping in which every lane pairs its own elements of B
// with its own elements of a: A's rows 0-7 all carry row i of B (lane (g, t) its own 8
// elements), rows 8-15 row i + 8, and B's column g is lane (g, t)'s elements of a. Of the
// product's 16 x 8 outputs, only (g, g) and (g + 8, g) mean anything: each is the sum over
// lanes (g, 0..3) of their own dot products, for rows i and i + 8. Row i's accumulators live
// in the same registers for the whole of k, and the block adds its lanes' and warps' shares
// in shared memory at the end.
// Constants and parameters: kreg/contracts/matmul.cuh.
// kreg:entry matmul_gemv_f16=matmul_gemv<kreg::half>
// kreg:entry matmul_gemv_bf16=matmul_gemv<kreg::bfloat16>
// kreg:specialization 300:i4
// kreg:specialization 300:i5
#include <kreg/contracts/matmul.cuh>
#include <kreg/device/kernel.cuh>
#include <kreg/device/load.cuh>
#include <kreg/device/matmul_epilogue.cuh>
#include <kreg/device/mma.cuh>

KREG_CONSTANT_DEFAULT(bool, has_bias, kreg::contracts::matmul::kBias, false);
KREG_CONSTANT_DEFAULT(bool, float_out, kreg::contracts::matmul::kFloatOut, false);
KREG_CONSTANT_DEFAULT(int, epilogue, kreg::contracts::matmul::kEpilogue, 0);
KREG_CONSTANT_DEFAULT(int, gemv_warps, kreg::contracts::matmul::kGemvWarps, 8);

static_assert(epilogue >= 0 && epilogue <= 5, "matmul: the epilogue is 0 to 5");
static_assert(gemv_warps == 2 || gemv_warps == 4 || gemv_warps == 8 || gemv_warps == 16,
              "matmul: a one-row block has 2, 4, 8 or 16 warps");

namespace gemv_rows {

namespace mc = kreg::contracts::matmul;

constexpr int kWarps = gemv_warps;
constexpr int kThreads = 32 * kWarps;
constexpr int kBlocksPerSm = 16 / kWarps;  // 16 warps a multiprocessor at up to 128 registers
constexpr int kRows = mc::kGemvCols;       // rows of B a block
constexpr int kWindow = 256;               // elements of k a warp load of a row covers
constexpr int kPairs = 4;                  // pairs of rows (i, i + 8) a half window

}  // namespace gemv_rows

template <typename T>
__global__ void __launch_bounds__(gemv_rows::kThreads, gemv_rows::kBlocksPerSm)
    matmul_gemv(const T* __restrict__ a, const T* __restrict__ b, const T* __restrict__ bias,
                const T* __restrict__ other, void* __restrict__ out, int m, int n, int k,
                long long a_row, long long b_row, long long ld_other) {
  KREG_SIGNATURE(matmul_gemv<T>, kreg::contracts::matmul::MatmulSkinny<T>);
  using namespace kreg;
  using namespace gemv_rows;
  using Out = typename matmul::OutOf<float_out, T>::type;
  static_assert(kRows == 16, "a block's rows are the 16 rows of one product");
  (void)a_row;  // one row of a
  __shared__ float sums[kWarps][kRows][8];
  const int warp = static_cast<int>(threadIdx.x / 32);
  const int lane = static_cast<int>(threadIdx.x % 32);
  const int g = lane / 4;
  const int t = lane % 4;
  const int n0 = static_cast<int>(blockIdx.x) * kRows;
  // Rows past n read row n - 1 and are never stored.
  const T* rows[kRows];
#pragma unroll
  for (int i = 0; i < kRows; ++i) {
    rows[i] = b + static_cast<long long>(min(n0 + i, n - 1)) * b_row + 8 * lane;
  }
  const T* x = a + 8 * lane;
  const int windows = (k + kWindow - 1) / kWindow;
  const uint4 zero = make_uint4(0, 0, 0, 0);

  // Half a window: rows i and i + 8 for four i, and the lane's 8 elements of a. k is a
  // multiple of 8, so a lane's 8 elements are all inside k or all past it (zeros).
  struct Half {
    uint4 lo[kPairs];
    uint4 hi[kPairs];
    uint4 x;
  };
  const auto fetch = [&](Half& h, int window, int half) {
    const int at = window * kWindow;
    const bool inside = at + 8 * lane < k;
#pragma unroll
    for (int j = 0; j < kPairs; ++j) {
      const int i = half * kPairs + j;
      h.lo[j] = inside ? load_stream(rows[i] + at) : zero;
      h.hi[j] = inside ? load_stream(rows[i + 8] + at) : zero;
    }
    h.x = inside ? load_shared_by_blocks(x + at) : zero;
  };

  float acc[8][4];
#pragma unroll
  for (int i = 0; i < 8; ++i) acc[i][0] = acc[i][1] = acc[i][2] = acc[i][3] = 0.0f;
  Half cur;
  if (warp < windows) fetch(cur, warp, 0);
  for (int window = warp; window < windows; window += kWarps) {
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      Half next;
      const int next_window = half == 0 ? window : window + kWarps;
      if (next_window < windows) fetch(next, next_window, 1 - half);
#pragma unroll
      for (int j = 0; j < kPairs; ++j) {
        // A lane's elements 0-3 of each row, then 4-7: slots 2t, 2t + 1 and 2t + 8, 2t + 9.
        const unsigned a0[4] = {cur.lo[j].x, cur.hi[j].x, cur.lo[j].y, cur.hi[j].y};
        mma_16816(acc[half * kPairs + j], a0, cur.x.x, cur.x.y, T{});
        const unsigned a1[4] = {cur.lo[j].z, cur.hi[j].z, cur.lo[j].w, cur.hi[j].w};
        mma_16816(acc[half * kPairs + j], a1, cur.x.z, cur.x.w, T{});
      }
      cur = next;
    }
  }
  // Output (g, g) of product i is accumulator g % 2 of lane (g, g / 2), (g + 8, g) its
  // accumulator 2 + g % 2.
  if (t == g / 2) {
    const bool odd = g % 2 != 0;
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      sums[warp][i][g] = odd ? acc[i][1] : acc[i][0];
      sums[warp][i + 8][g] = odd ? acc[i][3] : acc[i][2];
    }
  }
  __syncthreads();
  // A thread finishes two neighbouring columns of out.
  if (threadIdx.x < kRows / 2) {
    const int col = 2 * static_cast<int>(threadIdx.x);
    float x0 = 0.0f;
    float x1 = 0.0f;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) {
#pragma unroll
      for (int s = 0; s < 8; ++s) {
        x0 += sums[w][col][s];
        x1 += sums[w][col + 1][s];
      }
    }
    matmul::store_pair<T, Out, epilogue, has_bias>(static_cast<Out*>(out), bias, other, ld_other, m,
                                                   n, 0, n0 + col, x0, x1);
  }
}
