// out = x w^T against a weight matrix w [n, k] in one of llama.cpp's block formats (Q8_0 or
// Q4_K, kreg/device/ggml.cuh), for decode: bound by reading w once.
//
// A block of 8 warps takes 8 columns of out (rows of w), a warp each, and 16 rows of x
// (blockIdx.y walks the rest). A lane takes a run of 32 weights at a time: a Q8_0 block, or
// a Q4_K sub-block, lanes side by side along the row. It decodes its 32 codes once into
// floats, then for each row of x adds scale * (codes . x) (minus min * sum(x) for Q4_K) to
// that row's sum; the warp adds its lanes' sums at the end. x is read through L1, which
// every warp of a block shares.
// Constants and parameters: kreg/contracts/ggml.cuh.
// kreg:entry ggml_matmul_f16=ggml_matmul<kreg::half>
// kreg:entry ggml_matmul_bf16=ggml_matmul<kreg::bfloat16>
// kreg:specialization 300:i1
#include <kreg/contracts/ggml.cuh>
#include <kreg/device/ggml.cuh>
#include <kreg/device/kernel.cuh>
#include <kreg/device/load.cuh>
#include <kreg/device/vec.cuh>

KREG_CONSTANT_DEFAULT(int, format, kreg::contracts::ggml::kFormat, 0);

static_assert(format == 0 || format == 1, "ggml_matmul: the format is 0 (Q8_0) or 1 (Q4_K)");

namespace ggml_mv {

namespace gc = kreg::contracts::ggml;

constexpr int kRows = static_cast<int>(gc::kRows);

// Adds, for each of the `rows` rows of x, scale * (q . x) - offset * sum(x) over the 32
// elements of the row that start at `at` (on 16 bytes).
template <bool kOffset, class T>
__device__ inline void accumulate(float (&acc)[kRows], const float (&q)[32], const T* x,
                                  long long x_row, int rows, long long at, float scale,
                                  float offset) {
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    if (r >= rows) break;
    const T* xr = x + r * x_row + at;
    float dot = 0.0f;
    float sum = 0.0f;
#pragma unroll
    for (int v = 0; v < 4; ++v) {
      const uint4 raw = kreg::load_shared_by_blocks(xr + 8 * v);
      const kreg::vec8<T> e = *reinterpret_cast<const kreg::vec8<T>*>(&raw);
#pragma unroll
      for (int i = 0; i < 8; ++i) {
        const float xe = kreg::to_float(e.v[i]);
        dot = fmaf(q[8 * v + i], xe, dot);
        if constexpr (kOffset) sum += xe;
      }
    }
    acc[r] = fmaf(scale, dot, acc[r]);
    if constexpr (kOffset) acc[r] = fmaf(-offset, sum, acc[r]);
  }
}

}  // namespace ggml_mv

template <typename T>
__global__ void __launch_bounds__(32 * kreg::contracts::ggml::kWarps)
    ggml_matmul(const T* __restrict__ x, const unsigned char* __restrict__ w, T* __restrict__ out,
                int m, int n, int k, long long x_row, long long w_row) {
  KREG_SIGNATURE(ggml_matmul<T>, kreg::contracts::ggml::GgmlMatmul<T>);
  using namespace ggml_mv;
  const int lane = static_cast<int>(threadIdx.x % 32);
  const int col = static_cast<int>(blockIdx.x * gc::kWarps + threadIdx.x / 32);
  if (col >= n) return;  // the whole warp
  const int row0 = static_cast<int>(blockIdx.y) * kRows;
  const int rows = min(kRows, m - row0);
  const unsigned char* wr = w + static_cast<long long>(col) * w_row;
  const T* xr = x + static_cast<long long>(row0) * x_row;
  float acc[kRows];
#pragma unroll
  for (int r = 0; r < kRows; ++r) acc[r] = 0.0f;
  const int runs = k / 32;  // Q8_0 blocks, or Q4_K sub-blocks, along the row
  for (int s = lane; s < runs; s += 32) {
    float q[32];
    if constexpr (format == 0) {
      // 34 bytes from an even offset: 17 half-words, the scale first.
      const unsigned char* block = wr + static_cast<long long>(kreg::ggml::kQ8_0Bytes) * s;
      const auto* halves = reinterpret_cast<const unsigned short*>(block);
      const float d = kreg::ggml::half_bits_to_float(__ldg(halves));
#pragma unroll
      for (int i = 0; i < 16; ++i) {
        const unsigned two = __ldg(halves + 1 + i);
        q[2 * i] = static_cast<float>(static_cast<signed char>(two & 0xffu));
        q[2 * i + 1] = static_cast<float>(static_cast<signed char>(two >> 8));
      }
      accumulate<false>(acc, q, xr, x_row, rows, 32LL * s, d, 0.0f);
    } else {
      const int j = s % 8;  // the sub-block of its 256-weight block
      const unsigned char* block = wr + static_cast<long long>(kreg::ggml::kQ4_KBytes) * (s / 8);
      const auto* words = reinterpret_cast<const unsigned*>(block);
      const unsigned dm = __ldg(words);
      const kreg::ggml::ScaleMin sm = kreg::ggml::q4_k_scale_min(
          __ldg(words + 1), __ldg(words + 2), __ldg(words + 3), j);
      const float d = kreg::ggml::half_bits_to_float(static_cast<unsigned short>(dm & 0xffffu));
      const float dmin = kreg::ggml::half_bits_to_float(static_cast<unsigned short>(dm >> 16));
      const auto* codes =
          reinterpret_cast<const uint4*>(block + kreg::ggml::kQ4_KCodesAt + 32 * (j / 2));
      const uint4 lo = __ldg(codes);
      const uint4 hi = __ldg(codes + 1);
      const unsigned shift = 4u * static_cast<unsigned>(j % 2);
      const unsigned word[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
#pragma unroll
      for (int i = 0; i < 8; ++i) {
#pragma unroll
        for (int b = 0; b < 4; ++b) {
          q[4 * i + b] = static_cast<float>((word[i] >> (8 * b + shift)) & 0xfu);
        }
      }
      accumulate<true>(acc, q, xr, x_row, rows, 32LL * s, d * static_cast<float>(sm.scale),
                       dmin * static_cast<float>(sm.min));
    }
  }
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    if (r >= rows) break;
    const float total = kreg::warp_reduce(acc[r], kreg::Sum{});
    if (lane == 0) out[static_cast<long long>(row0 + r) * n + col] = T(total);
  }
}
