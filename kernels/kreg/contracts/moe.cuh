#pragma once
// What kernels/moe_route.cu, kernels/moe_matmul.cu and ops::moe agree on (see
// activation.cuh).
//
// A mixture-of-experts layer over `tokens` rows of x, each sent to `top_k` of `experts`
// experts. A token's choices are its `slots`: slot s is choice s % top_k of token s / top_k.
// The dispatch sorts the slots by expert; position p of that order is row p of the grouped
// products' outputs, so each expert's rows are contiguous, and the rows of an expert are cut
// into tiles of `tile_rows` that the grouped products take one a block.

namespace kreg::contracts::moe {

// The router: softmax over each token's `experts` logits, then its top_k largest
// probabilities (the lower expert first on a tie; a NaN probability never wins over a number),
// divided by their sum when `renormalize` is nonzero. weights [tokens, top_k] float32 and ids
// [tokens, top_k] int32, best first. One warp a token, kRouteThreads a block.
inline constexpr unsigned kRouteThreads = 256;
inline constexpr int kMaxExperts = 1024;
inline constexpr int kMaxTopK = 8;
template <class T>
using Route = void(const T* logits, float* weights, int* ids, int tokens, int experts, int top_k,
                   int renormalize);

// A tile of the grouped products: the expert, its first row in the sorted order, and its rows
// (at most tile_rows); expert -1 past the last tile.
struct Tile {
  int expert;
  int row;
  int rows;
  int pad;
};

// The dispatch, one block of kDispatchThreads: positions [slots] (each slot's row in the
// order, -1 for an id outside [0, experts), which no expert takes), order [slots] (the slot
// at each row; -1 past the taken rows) and tiles [tile_count] (four ints each, see Tile; the
// op makes room for the most the slots can need: ceil(slots / tile_rows), plus one for each
// expert that may get rows). Within an expert, the order of its slots is unspecified: no
// result depends on it.
inline constexpr unsigned kDispatchThreads = 1024;
using Dispatch = void(const int* ids, int* positions, int* order, int* tiles, int slots,
                      int experts, int tile_rows, int tile_count);

// The grouped product: out [slots, n] row p = x row p' times expert e's weight w[e]^T
// ([n, k], K-major, each expert's matrix `w_expert` elements after the last), where p' is
// order[p] / top_k (a token's row: the first product of a layer) or, with order null, p itself
// (the rows are already in the order). With `gated`, out [slots, n] = silu(x w^T) * (x up^T),
// w and up both [experts, n, k]. k is a multiple of 8 and x's rows `x_row` elements apart, on
// 16 bytes. A block of 32 x warps threads takes tile blockIdx.x of `tiles` and kCols columns
// (16 when gated) of out; its warps split k. The grid's y dimension is the column blocks.
// bool, default false: the gated (SwiGLU) product.
inline constexpr int kGated = 200;
// int, default 16: the rows of a tile, 16 or 32.
inline constexpr int kTileRows = 300;
// int, default 32: columns of out a block takes when not gated, 16 or 32.
inline constexpr int kCols = 301;
// int, default 4: warps a block, 2, 4, 8 or 16, with warps x tile rows at most 256 (fewer warps:
// longer runs of k a warp, and more blocks a multiprocessor to hide each one's start and end).
inline constexpr int kWarps = 302;
template <class T>
using GroupedMatmul = void(const T* x, const T* w, const T* up, const int* order, const int* tiles,
                           T* out, int n, int k, int top_k, long long x_row, long long w_expert);

// The combine: out [tokens, hidden] row t = sum over its choices j of weights[t][j] times row
// positions[t * top_k + j] of y [slots, hidden], in float, skipping position -1; hidden a
// multiple of 8. One block of kCombineThreads a token.
inline constexpr unsigned kCombineThreads = 128;
template <class T>
using Combine = void(const T* y, const float* weights, const int* positions, T* out, int tokens,
                     int top_k, int hidden);

}  // namespace kreg::contracts::moe
