#pragma once
// What kernels/matmul.cu, kernels/matmul_skinny.cu, kernels/matmul_gemv.cu,
// kernels/matmul_stream.cu and ops::matmul agree on (see activation.cuh).
//
// Every kernel computes out = epilogue(A B + bias) over A [m, k] and B [k, n], float
// accumulators, with out [m, n] row-major.

#include <kreg/contracts/tensor_map.cuh>

namespace kreg::contracts::matmul {

// bool, default false: A is M-major (a [k, m] buffer read as its transpose) rather than
// K-major (row-major [m, k]).
inline constexpr int kAMajorM = 200;
// bool, default false: B is N-major (row-major [k, n]) rather than K-major (an [n, k] buffer,
// as linear layers keep their weights, read as its transpose).
inline constexpr int kBMajorN = 201;
// bool, default false: a bias of n elements, in the inputs' type, is added to every row.
inline constexpr int kBias = 202;
// bool, default false: out is float32 rather than the inputs' type.
inline constexpr int kFloatOut = 203;
// int, default kNone: what is applied after the bias (see the names below).
inline constexpr int kEpilogue = 300;
// int, default 256: columns of a block's tile in the tensor-map kernel, 128 or 256.
inline constexpr int kTileN = 301;
// int, default 32: the columns a block of the skinny kernel takes, 16 or 32 (fewer columns a
// block: finer waves over the GPU, more reads of A).
inline constexpr int kSkinnyCols = 302;
// int, default 16: warps a block of the skinny kernel, 4, 8 or 16 (fewer: longer runs of k a
// warp, and more blocks a multiprocessor, so that one block's loads cover another's start and
// reduction).
inline constexpr int kSkinnyWarps = 303;
// int, default 8: warps a block of the one-row kernel, 2, 4, 8 or 16 (fewer: longer runs of k
// a warp, and more blocks a multiprocessor).
inline constexpr int kGemvWarps = 304;
// int, default 8: stages of the streaming kernel's ring, 4, 6 or 8 (fewer: less shared memory a
// block, fewer bytes of the weight in flight).
inline constexpr int kStreamStages = 305;

inline constexpr int kNone = 0;
inline constexpr int kGelu = 1;      // x * Phi(x), with the error function
inline constexpr int kGeluTanh = 2;  // the tanh approximation of GELU
inline constexpr int kSilu = 3;      // x * sigmoid(x)
inline constexpr int kSiluGate = 4;  // silu(x) * other[i, j]
inline constexpr int kResidual = 5;  // x + other[i, j]

// The tensor-map kernel (sm_90a): 128 x kTileN tiles of out, one per block of 384 threads
// (a producer warpgroup and two that multiply), over k in steps of 64. A's map has boxes of
// 64 x 128 (K-major) or 64 x 64 (M-major), B's 64 x kTileN or 64 x 64; other has rows
// `ld_other` elements apart.
inline constexpr unsigned kTileM = 128;
inline constexpr unsigned kTileK = 64;
inline constexpr unsigned kTmaThreads = 384;
// Stages of the ring of A and B tiles, by kTileN: 192 KiB of shared memory either way.
template <int TileN>
inline constexpr unsigned kStages = TileN == 256 ? 4 : 6;
template <int TileN>
inline constexpr unsigned kTmaSharedBytes = kStages<TileN>*(kTileM + TileN) * kTileK * 2 + 1024 +
                                            2 * 8 * kStages<TileN>;

template <class T>
using MatmulTma = void(contracts::TensorMap a_map, contracts::TensorMap b_map, const T* bias,
                       const T* other, void* out, int m, int n, int k, long long ld_other);

// The tile kernel (mma.sync, sm_80 and newer), for any strides: element (i, p) of A is
// a[i * a_row + p * a_col], element (p, j) of B is b[p * b_row + j * b_col]. 64 x 64 tiles
// of out, one per block of kTileThreads.
inline constexpr unsigned kTileThreads = 128;
inline constexpr unsigned kTileRows = 64;
inline constexpr unsigned kTileCols = 64;

template <class T>
using MatmulTile = void(const T* a, const T* b, const T* bias, const T* other, void* out, int m,
                        int n, int k, long long a_row, long long a_col, long long b_row,
                        long long b_col, long long ld_other);

// The skinny kernel, for m at most 16 (decode): B K-major with rows `b_row` elements apart,
// A rows `a_row` apart, both rows starting on 16 bytes. A block of 32 x kSkinnyWarps threads
// takes 16 or 32 columns of out (kSkinnyCols), its warps splitting k.
inline constexpr unsigned kSkinnyRows = 16;

// The one-row kernel (matmul_gemv), for m = 1 and the skinny kernel's layouts, with its
// signature: a block of 32 x kGemvWarps threads takes kGemvCols columns of out (rows of B),
// its warps taking turns over k in runs of 256.
inline constexpr unsigned kGemvCols = 16;

template <class T>
using MatmulSkinny = void(const T* a, const T* b, const T* bias, const T* other, void* out, int m,
                          int n, int k, long long a_row, long long b_row, long long ld_other);

// The streaming kernel (matmul_stream, sm_90a), for 2 to kSkinnyRows rows of A (decode) with
// B K-major: B's rows (out's columns) flow through the copy engine into a ring of
// kStreamStages shared-memory stages, kStreamCols rows by kTileK a stage, beside a box of A's
// rows (kSkinnyRows of them, zeros past m); one warpgroup multiplies with wgmma, B's rows as
// the 64-row operand and A's as the 16 columns. A block of kStreamThreads (the warpgroup and
// one warp that feeds the ring) takes kStreamCols columns of out over the k-tiles
// [y * tiles / Y, (y + 1) * tiles / Y) for blockIdx.y = y of gridDim.y = Y. With Y = 1 it
// finishes its columns itself and `partial` is null; otherwise it writes its float sums to
// `partial` ([Y, m, n], row-major) and matmul_split_sum, launched after it, adds the Y ranges
// and finishes out. A's map has boxes of kTileK x kSkinnyRows, B's kTileK x kStreamCols.
inline constexpr unsigned kStreamCols = 64;
inline constexpr unsigned kStreamThreads = 160;
// The shared memory a block asks for, by stages: the ring, 1024 bytes to align it, the
// barriers, and the block's sums turned round.
template <int Stages>
inline constexpr unsigned kStreamSharedBytes = Stages * (kStreamCols + kSkinnyRows) * kTileK * 2 +
                                               1024 + 2 * 8 * Stages +
                                               kSkinnyRows * (kStreamCols + 1) * 4;

template <class T>
using MatmulStream = void(contracts::TensorMap a_map, contracts::TensorMap b_map, const T* bias,
                          const T* other, void* out, float* partial, int m, int n, int k,
                          long long ld_other);

// The sum of matmul_stream's ranges: one thread a pair of neighbouring columns of a row of out,
// blocks of kSplitSumThreads, over `splits` float partials [splits, m, n].
inline constexpr unsigned kSplitSumThreads = 256;

template <class T>
using MatmulSplitSum = void(const float* partial, const T* bias, const T* other, void* out, int m,
                            int n, int splits, long long ld_other);

}  // namespace kreg::contracts::matmul
