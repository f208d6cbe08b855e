#pragma once
// What kernels/ggml_matmul.cu and ops::ggml_matmul agree on (see activation.cuh). The block
// formats themselves are in <kreg/device/ggml.cuh>.

namespace kreg::contracts::ggml {

// int, default 0: the weight's block format, 0 for Q8_0 and 1 for Q4_K.
inline constexpr int kFormat = 300;

// bool, default false: the kernel for more than one row of x. Without it a block takes one
// row of x and a warp one column of out; with it a block takes kWideRows rows of x and a
// warp kWideCols columns. blockIdx.y counts the blocks of rows.
inline constexpr int kWide = 301;
inline constexpr unsigned kWideRows = 16;
inline constexpr unsigned kWideCols = 2;
// Warps a block.
inline constexpr unsigned kWarps = 8;

// out [m, n] = x [m, k] w^T: x's rows `x_row` elements apart, each starting on 16 bytes, k a
// multiple of the format's block; w's rows `w_row` bytes apart, a row's blocks one after
// another from its start, which is on 16 bytes (Q4_K) or 2 (Q8_0).
template <class T>
using GgmlMatmul = void(const T* x, const unsigned char* w, T* out, int m, int n, int k,
                        long long x_row, long long w_row);

}  // namespace kreg::contracts::ggml
