// out = x w^T against a weight matrix w [n, k] in one of llama.cpp's block formats (Q8_0 or
// Q4_K, kreg/device/ggml.cuh), for decode: bound by reading w once.
//
// A warp walks a row of w 1024 weights (a step) at a time, its lanes side by side along it,
// each taking parts of 8 or 32 weights of one block (or Q4_K sub-block), with what turns a
// code into a weight (weight = scale * q - offset). A lane loads its codes as stored,
// converts them to floats (exactly) when it uses them, and adds scale * (q . x) -
// offset * sum(x) for each row of x; the warp adds its lanes' sums at the end.
// - One row of x (kWide false, the single-token decode): a warp takes one column of out (a
//   row of w) and loads a whole step of it before using it, so that enough of w is in flight
//   to keep memory busy with few registers. A Q8_0 lane takes 8 weights, a quarter of a
//   block, in each of four parts, so that a load instruction of the warp reads 8 blocks in a
//   row rather than one half-word of each of 32 blocks a run apart (1.3-1.4x faster on the
//   H200); a Q4_K lane takes a whole sub-block, since decoding its scale and min for 8
//   weights costs more than the loads it saves.
// - More rows (kWide true): a lane takes a whole block (sub-block), a warp two columns, a
//   block 16 rows of x (blockIdx.y walks the rest); each 8 elements of a row of x are read
//   and converted once for both columns. x is read through L1, which every warp of a block
//   shares. Two blocks fit a multiprocessor at 128 registers a thread.
// Constants and parameters: kreg/contracts/ggml.cuh.
// kreg:entry ggml_matmul_f16=ggml_matmul<kreg::half>
// kreg:entry ggml_matmul_bf16=ggml_matmul<kreg::bfloat16>
// kreg:specialization 300:i1
// kreg:specialization 301:b1
// kreg:specialization 300:i1|301:b1
#include <kreg/contracts/ggml.cuh>
#include <kreg/device/ggml.cuh>
#include <kreg/device/kernel.cuh>
#include <kreg/device/load.cuh>
#include <kreg/device/vec.cuh>

KREG_CONSTANT_DEFAULT(int, format, kreg::contracts::ggml::kFormat, 0);
KREG_CONSTANT_DEFAULT(bool, wide, kreg::contracts::ggml::kWide, false);

static_assert(format == 0 || format == 1, "ggml_matmul: the format is 0 (Q8_0) or 1 (Q4_K)");

namespace ggml_mv {

namespace gc = kreg::contracts::ggml;

constexpr int kRows = static_cast<int>(wide ? gc::kWideRows : 1);
constexpr int kCols = static_cast<int>(wide ? gc::kWideCols : 1);
// Runs of 8 weights a lane takes of a part: 1 for Q8_0 with one row of x, else 4 (a
// block of Q8_0, a sub-block of Q4_K).
constexpr int kGroups = format == 0 && !wide ? 1 : 4;
constexpr int kSpan = 32 * 8 * kGroups;  // weights of a part
constexpr int kStep = 1024;              // weights of a row a warp takes a step
constexpr int kParts = kStep / kSpan;
constexpr int kBlock = format == 0 ? kreg::ggml::kQ8_0Weights : kreg::ggml::kQ4_KWeights;
constexpr int kBlocksPerSm = 2;  // at most 128 registers a thread

// A lane's codes of a part as loaded: byte b of word i is code 4i + b (Q4_K's nibble already
// moved to the low bits), and weight = scale * code - offset.
struct Part {
  unsigned codes[2 * kGroups];
  float scale;
  float offset;
};

// The part of the row starting at `row` whose first weight is e.
__device__ inline Part load_part(const unsigned char* row, int e) {
  Part part;
  if constexpr (format == 0) {
    // A block is 34 bytes from an even offset: the scale, then 32 codes, read as half-words.
    const unsigned char* block = row + static_cast<long long>(kreg::ggml::kQ8_0Bytes) * (e / 32);
    const auto* halves = reinterpret_cast<const unsigned short*>(block);
    part.scale = kreg::ggml::half_bits_to_float(__ldg(halves));
    part.offset = 0.0f;
    const unsigned short* first = halves + 1 + 4 * ((e % 32) / 8);
#pragma unroll
    for (int i = 0; i < 2 * kGroups; ++i) {
      const unsigned lo = __ldg(first + 2 * i);
      const unsigned hi = __ldg(first + 2 * i + 1);
      part.codes[i] = lo | (hi << 16);
    }
  } else {
    static_assert(format == 0 || kGroups == 4, "a Q4_K lane takes whole sub-blocks");
    const int j = (e % 256) / 32;  // the sub-block of its 256-weight block
    const unsigned char* block = row + static_cast<long long>(kreg::ggml::kQ4_KBytes) * (e / 256);
    const auto* words = reinterpret_cast<const unsigned*>(block);
    const unsigned dm = __ldg(words);
    const kreg::ggml::ScaleMin sm =
        kreg::ggml::q4_k_scale_min(__ldg(words + 1), __ldg(words + 2), __ldg(words + 3), j);
    const float d = kreg::ggml::half_bits_to_float(static_cast<unsigned short>(dm & 0xffffu));
    const float dmin = kreg::ggml::half_bits_to_float(static_cast<unsigned short>(dm >> 16));
    part.scale = d * static_cast<float>(sm.scale);
    part.offset = dmin * static_cast<float>(sm.min);
    // Sub-blocks 2c and 2c + 1 share 32 bytes of codes, the low nibbles 2c's.
    const auto* codes =
        reinterpret_cast<const uint4*>(block + kreg::ggml::kQ4_KCodesAt + 32 * (j / 2));
    const uint4 lo = __ldg(codes);
    const uint4 hi = __ldg(codes + 1);
    const unsigned shift = 4u * static_cast<unsigned>(j % 2);
    const unsigned word[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
#pragma unroll
    for (int i = 0; i < 8; ++i) part.codes[i] = (word[i] >> shift) & 0x0f0f0f0fu;
  }
  return part;
}

// Code i of group g of a part, as a float (exact: at most 8 bits).
__device__ inline float code(const Part& part, int g, int i) {
  const unsigned byte = (part.codes[2 * g + i / 4] >> (8 * (i % 4))) & 0xffu;
  if constexpr (format == 0) return static_cast<float>(static_cast<signed char>(byte));
  return static_cast<float>(byte);
}

// The 8 elements of x at `xr` (on 16 bytes), as floats; returns their sum.
template <class T>
__device__ inline float load_x(const T* xr, float (&xf)[8]) {
  const uint4 raw = kreg::load_shared_by_blocks(xr);
  const kreg::vec8<T> e = *reinterpret_cast<const kreg::vec8<T>*>(&raw);
  float sum = 0.0f;
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    xf[i] = kreg::to_float(e.v[i]);
    sum += xf[i];
  }
  return sum;
}

}  // namespace ggml_mv

template <typename T>
__global__ void __launch_bounds__(32 * kreg::contracts::ggml::kWarps, ggml_mv::kBlocksPerSm)
    ggml_matmul(const T* __restrict__ x, const unsigned char* __restrict__ w, T* __restrict__ out,
                int m, int n, int k, long long x_row, long long w_row) {
  KREG_SIGNATURE(ggml_matmul<T>, kreg::contracts::ggml::GgmlMatmul<T>);
  using namespace ggml_mv;
  const int lane = static_cast<int>(threadIdx.x % 32);
  const int col0 = static_cast<int>(blockIdx.x * gc::kWarps + threadIdx.x / 32) * kCols;
  if (col0 >= n) return;  // the whole warp
  const int row0 = static_cast<int>(blockIdx.y) * kRows;
  const int rows = min(kRows, m - row0);
  // Columns past n read the last one; their sums are never stored.
  const unsigned char* wr[kCols];
#pragma unroll
  for (int c = 0; c < kCols; ++c) wr[c] = w + static_cast<long long>(min(col0 + c, n - 1)) * w_row;
  const T* xr = x + static_cast<long long>(row0) * x_row;
  const int offset = 8 * kGroups * lane;  // where the lane's weights start in a part
  float acc[kCols][kRows];
#pragma unroll
  for (int c = 0; c < kCols; ++c) {
#pragma unroll
    for (int r = 0; r < kRows; ++r) acc[c][r] = 0.0f;
  }
  for (int base = 0; base < k; base += kStep) {
    // k is a multiple of a block, and a lane's weights of a part are in one block: all in
    // the row or all past it. Past it the lane loads its place in the row's first block
    // instead, and does not use it.
    Part part[kParts][kCols];
#pragma unroll
    for (int v = 0; v < kParts; ++v) {
      const int e = base + kSpan * v + offset;
      const int at = e < k ? e : e % kBlock;
#pragma unroll
      for (int c = 0; c < kCols; ++c) part[v][c] = load_part(wr[c], at);
    }
#pragma unroll
    for (int v = 0; v < kParts; ++v) {
      const int e = base + kSpan * v + offset;
      if (e >= k) continue;
      // A row's sums over the lane's weights of the part first, then one scale and offset.
#pragma unroll
      for (int r = 0; r < kRows; ++r) {
        if (r >= rows) break;
        float dot[kCols];
#pragma unroll
        for (int c = 0; c < kCols; ++c) dot[c] = 0.0f;
        float x_sum = 0.0f;
#pragma unroll
        for (int g = 0; g < kGroups; ++g) {
          float xf[8];
          x_sum += load_x(xr + r * x_row + e + 8 * g, xf);
#pragma unroll
          for (int c = 0; c < kCols; ++c) {
#pragma unroll
            for (int i = 0; i < 8; ++i) dot[c] = fmaf(code(part[v][c], g, i), xf[i], dot[c]);
          }
        }
#pragma unroll
        for (int c = 0; c < kCols; ++c) {
          float sum = part[v][c].scale * dot[c];
          if constexpr (format == 1) sum = fmaf(-part[v][c].offset, x_sum, sum);
          acc[c][r] += sum;
        }
      }
    }
  }
#pragma unroll
  for (int c = 0; c < kCols; ++c) {
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      if (r >= rows) break;
      const float total = kreg::warp_reduce(acc[c][r], kreg::Sum{});
      if (lane == 0 && col0 + c < n) {
        out[static_cast<long long>(row0 + r) * n + col0 + c] = T(total);
      }
    }
  }
}
