#pragma once
// What kernels/attention.cu, kernels/attention_tma.cu and the op that launches them agree on
// (see activation.cuh).

#include <kreg/contracts/tensor_map.cuh>

namespace kreg::contracts::attention {

// int, default 128: the head dimension, 64, 128 or 256.
inline constexpr int kHeadDim = 300;
// int, default 0: the mask, kMaskNone, kMaskAdditive (q's dtype, added to the scaled score)
// or kMaskBoolean (one byte a score; zero hides the key).
inline constexpr int kMask = 301;
// bool, default false: query i of a sequence sees keys up to i + len_k - len_q (the last
// query sees every key, as decode would).
inline constexpr int kCausal = 200;
// bool, default false: scores pass through soft_cap * tanh(score / soft_cap).
inline constexpr int kSoftCap = 201;
// bool, default false: query i sees no key before i + len_k - len_q - window_left.
inline constexpr int kWindow = 202;

inline constexpr int kMaskNone = 0;
inline constexpr int kMaskAdditive = 1;
inline constexpr int kMaskBoolean = 2;

// int, default 0 (kBlockWarps): warps a block has, 4 or 8 (not 8 at head dim 256, where 128
// rows of Q would not fit beside a K or V tile).
inline constexpr int kWarps = 302;

// Warps a block has by default, each taking 16 query rows: four, one warpgroup. Blocks of 8
// warps share each K or V tile among 128 queries, but ran 1.04-1.24x slower on an H200 at
// head dims 64 and 128 (tuned both ways; docs/performance.md): twice the blocks keep more of
// them busy while others wait on their copies. A sequence of n queries has
// ceil(n / (16 * warps)) tiles.
template <int HeadDim>
inline constexpr int kBlockWarps = 4;

// One block per (tile slot, query head). Sequences are [cu_q[b], cu_q[b + 1]) of q's rows
// and [cu_k[b], cu_k[b + 1]) of k's, cut to the total_q and total_k rows there are; with cu_q
// null, every sequence has fixed_q queries and fixed_k keys. Slot s is a tile of the sequence whose
// tiles it falls in, counted over the sequences in order; slots past the last tile return at once.
// The mask's element for (sequence b, head h, query i, key j) is mask[b * mask_batch + h *
// mask_head + i * mask_row
// + j] for i < mask_rows and j < mask_cols; the scores outside it are hidden.
template <class T>
using Attention = void(const T* q, const T* k, const T* v, const int* cu_q, const int* cu_k,
                       const void* mask, T* out, unsigned batch, unsigned kv_heads, int total_q,
                       int total_k, int fixed_q, int fixed_k, long long mask_batch,
                       long long mask_head, long long mask_row, int mask_rows, int mask_cols,
                       float scale, float soft_cap, int window_left);

// attention_tma (sm_90a, head dim 64 or 128, no mask): blocks of three warpgroups take items
// of kTmaRows queries of one head in turn, the copy engine bringing each item's Q and K and V
// tiles of kTmaKeys keys into kTmaStages stages each.
inline constexpr unsigned kTmaThreads = 384;
inline constexpr int kTmaRows = 128;
inline constexpr int kTmaKeys = 128;
inline constexpr int kTmaStages = 2;
inline constexpr int kTmaMaxHeadDim = 128;
// Q, the stages of K and V, the 1024 bytes that align them and the barriers.
template <int HeadDim>
inline constexpr unsigned kTmaSharedBytes =
    (kTmaRows + 2 * kTmaStages * kTmaKeys) * HeadDim * 2 + 1024 + 8 * (2 + 4 * kTmaStages);

// int, default 2: attention_tma's consumers compute a tile's scores while the last tile's
// weights multiply V, and run its softmax while they still do; with 2 they also take turns to
// issue their products, with 1 they do not. A knob that `ops::tune` may set for a shape.
inline constexpr int kOverlap = 303;

// The work is an item a (query tile, sequence, query head), batch * ceil(len_q / kTmaRows) *
// q_heads of them, which a grid of any size shares out (a block a multiprocessor, or one an
// item); every sequence has len_q queries and len_k keys, and q_heads is a multiple of
// kv_heads. The maps see q, k and v as [batch, len, heads * head_dim] (3-D, so that a box
// stops at its sequence's end), boxes of 64 elements by kTmaRows or kTmaKeys rows.
template <class T>
using AttentionTma = void(TensorMap q_map, TensorMap k_map, TensorMap v_map, T* out,
                          unsigned batch, unsigned q_heads, unsigned kv_heads, int len_q,
                          int len_k, float scale, float soft_cap, int window_left);

}  // namespace kreg::contracts::attention
