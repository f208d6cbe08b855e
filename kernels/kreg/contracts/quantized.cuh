#pragma once
// What kernels/quantize.cu, kernels/quantized_matmul.cu and the ops that launch them agree on
// (see activation.cuh).
//
// The affine format of MLX's `mx.quantize` (mode "affine"): a weight matrix w [n, k] is cut
// along each row into groups of `group` consecutive elements; a group keeps a scale and a
// bias in w's type, and each element an unsigned integer q of `bits` bits, so that
// w ~ scale * q + bias. The q are packed into 32-bit words, 32 / bits a word, element j of a
// word in bits [j * bits, (j + 1) * bits): wq is [n, k * bits / 32] uint32, scales and biases
// [n, k / group].

namespace kreg::contracts::quantized {

// int, default 4: bits of each q, 4 or 8.
inline constexpr int kBits = 300;
// int, default 64: elements a scale and a bias cover, 32, 64 or 128.
inline constexpr int kGroup = 301;
// int, default 32: columns of out a block of the matmul kernel takes, 16 or 32.
inline constexpr int kCols = 302;
// bool, default false: the matmul adds a bias of n elements (a linear layer's, not the
// groups') to every row.
inline constexpr int kLinearBias = 200;
// bool, default false: x has more than 8 rows (the matmul kernel makes two products for each
// 16 rows of w rather than one).
inline constexpr int kWideX = 201;
// int, default 16: warps a block of the matmul kernel, 4, 8 or 16 (see matmul.cuh's
// kSkinnyWarps).
inline constexpr int kWarps = 303;

// One thread a group: `groups` groups of w (rows of k elements, k a multiple of the group).
template <class T>
using Quantize = void(const T* w, unsigned* wq, T* scales, T* biases, long long groups);

// One thread a word of wq: `words` words, w written as scale * q + bias rounded to T.
template <class T>
using Dequantize = void(const unsigned* wq, const T* scales, const T* biases, T* w,
                        long long words);

// out [m, n] = x [m, k] w^T (+ bias), m at most kRows: x's rows `x_row` elements apart, each
// starting on 16 bytes; k a multiple of the group. A block of 32 x kWarps threads takes kCols
// columns of out, its warps splitting k.
inline constexpr unsigned kRows = 16;
template <class T>
using QuantizedMatmul = void(const T* x, const unsigned* wq, const T* scales, const T* biases,
                             const T* bias, T* out, int m, int n, int k, long long x_row);

}  // namespace kreg::contracts::quantized
