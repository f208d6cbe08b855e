#pragma once
// What kernels/decode_attention.cu and the op that launches it agree on (see activation.cuh).

namespace kreg::contracts::decode_attention {

// int, default 128: the head dimension, 64, 128 or 256.
inline constexpr int kHeadDim = 300;
// int, default 1: query heads that share one KV head (1 to 16).
inline constexpr int kGroup = 301;
// bool, default false: scores pass through soft_cap * tanh(score / soft_cap).
inline constexpr int kSoftCap = 200;
// bool, default false: only the window_left + 1 newest keys are seen.
inline constexpr int kWindow = 201;

// The most splits a sequence's keys are cut into (the op takes longer splits beyond it).
inline constexpr unsigned kMaxSplits = 256;

// Warps of a block of the first kernel, by head dimension: each warp streams its keys and
// values through 48 KiB / warps of shared memory, so that a block fits the static limit.
template <int HeadDim>
inline constexpr int kWarps = HeadDim <= 64 ? 4 : (HeadDim <= 128 ? 2 : 1);

// One block per (split, KV head, sequence). With one split it writes `out`; with several,
// each split's normalized output and its log2-sum-exp go to the partials, for the combine.
template <class T>
using DecodeAttention = void(const T* q, const T* k_cache, const T* v_cache, const int* block_table,
                             const int* seq_lens, T* out, float* partial_out, float* partial_lse,
                             unsigned kv_heads, unsigned page_size, unsigned table_stride,
                             unsigned split_tokens, float scale, float soft_cap, int window_left);

// Threads of a block of the combine.
inline constexpr unsigned kCombineThreads = 256;

// One block of kCombineThreads per (query head, sequence).
template <class T>
using DecodeCombine = void(const float* partial_out, const float* partial_lse, T* out,
                           unsigned splits);

}  // namespace kreg::contracts::decode_attention
