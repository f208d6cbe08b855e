#pragma once
/// \file
/// Typed operations on arrays, backed by kreg's built-in kernels. Each returns a pending
/// array, like `CustomKernel::apply`: the kernel is picked (by dtype and constants), the
/// launch geometry computed, and the work done when the result is evaluated. Inputs may be
/// views: non-contiguous ones are copied to row-major order first, and misaligned ones take
/// the kernels' scalar path. Shape, dtype and argument errors are `InvalidArgument`, thrown
/// at the call. Dtypes: float32, float16 and bfloat16, unless noted.

#include <kreg/array.hpp>
#include <kreg/tune.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kreg::ops {

/// a + b, a - b, a * b, a / b, computed in float. `b` has `a`'s shape, or is a 1-D row
/// vector as long as `a`'s last dimension (added to every row). Same dtype.
Array add(const Array& a, const Array& b);
Array sub(const Array& a, const Array& b);
Array mul(const Array& a, const Array& b);
Array div(const Array& a, const Array& b);
/// a * s.
Array scale(const Array& a, float s);

/// `a` converted to `dtype`, rounding to nearest even: float32 to and from float16 and
/// bfloat16. The same dtype returns `a` itself.
Array cast(const Array& a, Dtype dtype);

/// RMS norm over the last dimension: x / sqrt(mean(x^2) + eps) * weight, in float. `weight`
/// is 1-D, as long as the last dimension, of x's dtype; without it, no scaling.
Array rms_norm(const Array& x, const std::optional<Array>& weight, float eps);
/// The fused form for a transformer layer: h = x + residual (rounded to the dtype), then the
/// RMS norm of h. Returns {norm, h}; h is the next layer's residual.
std::pair<Array, Array> add_rms_norm(const Array& x, const Array& residual,
                                     const std::optional<Array>& weight, float eps);

/// Layer norm over the last dimension: (x - mean) / sqrt(var + eps) * weight + bias, in float.
/// weight and bias are optional, 1-D as long as the last dimension, of x's dtype.
Array layer_norm(const Array& x, const std::optional<Array>& weight,
                 const std::optional<Array>& bias, float eps);

/// The transpose of a 2-D array, as a new row-major array (any dtype). `Array::transpose` is
/// the view without a copy.
Array transpose(const Array& x);
/// out[b][j][i] = x[b][i][j] for a 3-D array, as a new row-major array (any dtype).
Array permute021(const Array& x);

/// Rotary position embedding of x (tokens x heads x head_dim, head_dim even): each pair of a
/// head turns by position * base^(-2i / head_dim). Pairs are adjacent elements, or with
/// `neox` the two halves of a head. Positions are `positions` (int32, one per token).
Array rope(const Array& x, const Array& positions, float base = 10000.0F, bool neox = false);
/// The same with positions offset, offset + 1, ... for the tokens in order.
Array rope(const Array& x, std::int64_t offset, float base = 10000.0F, bool neox = false);

/// Row softmax over the last dimension, in float: softmax(x * scale + mask). The additive
/// `mask` (x's dtype; -inf excludes an element) has x's shape, or is one row (1-D, as long as
/// the last dimension) shared by every row. A row whose logits are all -inf gives zeros.
Array softmax(const Array& x, float scale = 1.0F, const std::optional<Array>& mask = std::nullopt);

/// silu(a) * b, elementwise (a and b of one shape and dtype): the gate of a SwiGLU MLP.
Array swiglu(const Array& a, const Array& b);
/// GELU: x * Phi(x), with the exact (erf) form, or the tanh approximation.
Array gelu(const Array& x, bool tanh_approximation = false);

/// The rows of `table` (2-D: vocabulary x width) that `ids` (int32 or int64, any shape) pick;
/// the result has ids' shape plus the width. An id outside the table gives a row of zeros.
Array embedding(const Array& table, const Array& ids);

/// Sum and maximum over the last dimension, in float; float32 results, shaped as x without its
/// last dimension.
Array row_sum(const Array& x);
Array row_max(const Array& x);
/// The index of the largest element of each row (the first, on a tie; NaN never wins), int64.
Array argmax(const Array& x);

/// y = W x for decode: W is 2-D (rows x cols; float32, float16 or bfloat16), x is float32 of
/// cols elements; y is float32 of rows elements, accumulated in float.
Array gemv(const Array& w, const Array& x);

/// What matmul applies to each element of a b + bias before it is stored.
enum class Epilogue {
  None,
  Gelu,      ///< x * Phi(x), with the error function
  GeluTanh,  ///< GELU's tanh approximation
  Silu,      ///< x * sigmoid(x)
  SiluGate,  ///< silu(x) * other: the gate of a SwiGLU MLP, with other the up projection
  Residual,  ///< x + other
};

/// What matmul computes beyond a b.
struct MatmulOptions {
  /// Added to every row: n elements in a's dtype.
  std::optional<Array> bias;
  Epilogue epilogue = Epilogue::None;
  /// For SiluGate and Residual: the result's shape, in a's dtype.
  std::optional<Array> other;
  /// The result's dtype: a's (unset) or Float32.
  std::optional<Dtype> out_dtype;
};

/// a b on tensor cores (sm_80 and newer), float16 or bfloat16 in, float accumulators:
///   a  [..., m, k]   b  [k, n]   result  [..., n], in a's dtype unless options say Float32.
/// Either operand may be a transposed view (`w.transpose()` of a linear layer's [n, k]
/// weight, say), read in place: b's rows or its columns, and a 2-D a's rows or columns, may be
/// the contiguous ones; other strides are copied to row-major first. On sm_90 (wgmma, the copy
/// engine) the rows an operand is read along must start on 16 bytes (k, or m or n, a multiple
/// of 8); with m at most 16 and b read along k, a kernel that reads each element of b once
/// serves decode. Other shapes take a slower kernel that takes any strides.
Array matmul(const Array& a, const Array& b, const MatmulOptions& options = {});

/// A weight matrix w [n, k] in MLX's affine format (`mx.quantize`, mode "affine"): each row
/// cut into groups of `group_size` consecutive elements, a group keeping a scale and a bias in
/// w's dtype and each element an unsigned code q of `bits` bits, w ~ scale * q + bias.
///   weight  [n, k * bits / 32] uint32: the codes packed from the low bits up, 32 / bits a
///           word, element j of a word in bits [j * bits, (j + 1) * bits)
///   scales, biases  [n, k / group_size], w's dtype
/// Arrays made by MLX (its `w_q, scales, biases`) can be used as they are.
struct QuantizedWeight {
  Array weight;
  Array scales;
  Array biases;
  int group_size = 64;  ///< 32, 64 or 128
  int bits = 4;         ///< 4 or 8
};

/// w [n, k] (float32, float16 or bfloat16, k a multiple of group_size) in the affine format,
/// by mx.quantize's rule: a group's extreme of larger magnitude and zero get exact codes.
QuantizedWeight quantize(const Array& w, int group_size = 64, int bits = 4);

/// The [n, k] matrix a QuantizedWeight stands for, scale * q + bias rounded once.
Array dequantize(const QuantizedWeight& w);

/// x w^T, as mx.quantized_matmul (transpose=True) computes it: x [..., m, k] float16 or bfloat16
/// (w's dtype), result [..., m, n] in x's dtype, float accumulators; `bias` (n elements) is a
/// linear layer's, added to every row. Up to 16 rows of x (decode) are served by a kernel
/// that reads the codes, scales and biases once and decodes each weight in registers
/// (scale * q + bias rounded once to x's dtype); more rows dequantize w into a temporary and
/// take `matmul`.
Array quantized_matmul(const Array& x, const QuantizedWeight& w,
                       const std::optional<Array>& bias = std::nullopt);

/// llama.cpp's (GGML's) block formats for a weight matrix, as GGUF files store them
/// (<kreg/device/ggml.cuh> has the layouts):
///   Q8_0  32 weights a block of 34 bytes: a float16 scale d and 32 int8 codes, w = d * q.
///   Q4_K  256 weights a block of 144 bytes: float16 d and dmin, 6-bit scales and mins for
///         eight sub-blocks of 32, 4-bit codes; w = d * scale * q - dmin * min.
enum class GgmlFormat { Q8_0, Q4_K };

/// A weight matrix w [n, k] in a GGML block format: `blocks` [n, bytes a row] uint8, each row
/// its k / 32 (Q8_0) or k / 256 (Q4_K) blocks one after another, as a GGUF tensor's data is
/// laid out. The array's start must be on 16 bytes (Q4_K) or 2 (Q8_0).
struct GgmlWeight {
  Array blocks;
  GgmlFormat format = GgmlFormat::Q8_0;
};

/// Bytes a row of k weights takes in `format`; throws InvalidArgument unless k is a positive
/// multiple of the format's block (32 or 256 weights).
std::int64_t ggml_row_bytes(GgmlFormat format, std::int64_t k);

/// x w^T with w in a GGML block format: x [..., m, k] float16 or bfloat16, result [..., m, n]
/// in x's dtype, float accumulators. Each weight is decoded in registers as llama.cpp's
/// dequantize_row computes it (in float) and multiplied by x's element as read; w is read once
/// for each 16 rows of x, which makes it fast for decode (m up to 16) and correct for any m.
Array ggml_matmul(const Array& x, const GgmlWeight& w);

/// A router's choices for each token: weights [tokens, top_k] float32 and expert ids
/// [tokens, top_k] int32, the most likely expert first.
struct MoeRouting {
  Array weights;
  Array ids;
};

/// The router of a mixture-of-experts layer: the softmax of each row of `logits` ([tokens,
/// experts], float32, float16 or bfloat16; at most 1024 experts), then its `top_k` (1 to 8)
/// largest probabilities, the lower expert first on a tie. With `renormalize` the k weights
/// are divided by their sum (Qwen3-MoE's norm_topk_prob, and what Mixtral's softmax over the
/// top k logits amounts to); else they stay probabilities over every expert. A row with a NaN
/// logit gets NaN weights (its ids are still k distinct experts, NaN counting as -inf); a row
/// of -inf logits weighs its experts equally.
MoeRouting moe_route(const Array& logits, int top_k, bool renormalize = true);

/// The experts of a SwiGLU mixture-of-experts layer, stacked, in the tokens' dtype (float16 or
/// bfloat16), each expert's projections as a linear layer keeps them ([out, in]):
///   gate, up  [experts, ffn, hidden]
///   down      [experts, hidden, ffn]
/// Expert e computes down[e] (silu(gate[e] x) * up[e] x). hidden and ffn are multiples of 8.
struct MoeExperts {
  Array gate;
  Array up;
  Array down;
};

/// The expert half of a mixture-of-experts layer, from a routing made elsewhere:
///   x        [tokens, hidden]
///   weights  [tokens, top_k] float32, ids [tokens, top_k] int32 (top_k at most 8)
/// Returns [tokens, hidden] in x's dtype: for each token, the sum over its choices j of
/// weights[j] times expert ids[j]'s output, in float. An id outside [0, experts) contributes
/// nothing. The choices are sorted by expert, and each expert's rows run through its three
/// projections in grouped products that read each expert's weights once per 16 or 32 of its
/// rows (the intermediate silu(gate) * up is rounded to x's dtype, as a dense layer would
/// store it); an expert no token chose costs nothing.
Array moe_experts(const Array& x, const Array& weights, const Array& ids,
                  const MoeExperts& experts);

/// What moe computes beyond its router and experts.
struct MoeOptions {
  int top_k = 8;
  bool renormalize = true;
};

/// A whole mixture-of-experts layer from the router's logits: moe_route, then moe_experts.
///   x [tokens, hidden], router_logits [tokens, experts] (any float dtype), experts as above.
Array moe(const Array& x, const Array& router_logits, const MoeExperts& experts,
          const MoeOptions& options = {});

/// What attention computes beyond softmax(q k^T * scale) v.
struct AttentionOptions {
  /// Multiplies q k^T; unset: 1 / sqrt(head_dim).
  std::optional<float> scale;
  /// Query i of a sequence sees keys 0 to i + len_k - len_q: aligned at the end, so that the
  /// last query sees every key (a chunk of prefill after a cached prefix).
  bool causal = false;
  /// Logit soft-capping: a scaled score s becomes soft_cap * tanh(s / soft_cap), before the
  /// mask is added. 0: none.
  float soft_cap = 0.0F;
  /// A sliding window: query i sees no key before i + len_k - len_q - window_left.
  /// Negative: no window.
  int window_left = -1;
  /// Added to the (capped) scores, in q's dtype, or, Bool or UInt8, which keys each query sees
  /// (zero: hidden). Fixed lengths: [len_q, len_k] or [batch or 1, q_heads or 1, len_q,
  /// len_k]. Variable lengths: [batch or 1, q_heads or 1, rows, cols], indexed by the
  /// position within the sequence; a score past its rows or cols is hidden.
  std::optional<Array> mask;
};

/// Attention for prefill (flash attention, forward), on tensor cores (sm_80 and newer):
///   q     [batch, len_q, q_heads, head_dim], float16 or bfloat16
///   k, v  [batch, len_k, kv_heads, head_dim], q's dtype
/// Returns [batch, len_q, q_heads, head_dim] in q's dtype; scores and sums are in float, and
/// the softmax weights are rounded to q's dtype before they multiply v. head_dim is 64, 128
/// or 256; q_heads is a multiple of kv_heads, and query head h reads KV head
/// h / (q_heads / kv_heads). A query that sees no key gives zeros.
Array attention(const Array& q, const Array& k, const Array& v,
                const AttentionOptions& options = {});

/// The same over sequences of different lengths packed into one batch (as varlen APIs take
/// them): q [total_q, q_heads, head_dim] and k, v [total_k, kv_heads, head_dim], sequence b
/// being rows cu_seqlens_q[b] to cu_seqlens_q[b + 1] of q and cu_seqlens_k[b] to
/// cu_seqlens_k[b + 1] of k and v (int32 [batch + 1], non-decreasing; rows past the arrays'
/// ends are not read). Returns q's shape.
Array attention(const Array& q, const Array& k, const Array& v, const Array& cu_seqlens_q,
                const Array& cu_seqlens_k, const AttentionOptions& options = {});

/// What decode_attention computes beyond softmax(q k^T * scale) v.
struct DecodeAttentionOptions {
  /// Multiplies q k^T; unset: 1 / sqrt(head_dim).
  std::optional<float> scale;
  /// Logit soft-capping: a scaled score s becomes soft_cap * tanh(s / soft_cap). 0: none.
  float soft_cap = 0.0F;
  /// A sliding window: the query, at position seq_len - 1, sees only the keys at positions
  /// seq_len - 1 - window_left to seq_len - 1. Negative: every key.
  int window_left = -1;
  /// The most pieces a sequence's keys are cut into, each read by its own blocks and then
  /// combined (flash-decoding), 1 to 256; a piece holds whole 32-key tiles of every warp, so
  /// fewer may be used. 0: kreg chooses, to fill the GPU in about one wave.
  int splits = 0;
};

/// Attention of one new query token per sequence against a paged KV cache, for decode:
///   q                 [batch, q_heads, head_dim], float16 or bfloat16
///   k_cache, v_cache  [pages, page_size, kv_heads, head_dim], q's dtype
///   block_table       int32 [batch, max_pages]: token t of sequence b is row t % page_size
///                     of page block_table[b][t / page_size]
///   seq_lens          int32 [batch]: each sequence's keys, the new token's included (the
///                     keys past max_pages * page_size are not read)
/// Returns [batch, q_heads, head_dim] in q's dtype, accumulated in float. head_dim is 64,
/// 128 or 256; q_heads is a multiple of kv_heads, at most 16 of them per KV head, and query
/// head h reads KV head h / (q_heads / kv_heads). A sequence with no keys gives zeros. Page
/// ids are not checked: each must be a page of the cache. Long contexts are split over
/// blocks and combined (flash-decoding); the block table's width bounds the splits.
Array decode_attention(const Array& q, const Array& k_cache, const Array& v_cache,
                       const Array& block_table, const Array& seq_lens,
                       const DecodeAttentionOptions& options = {});

/// How kv_append stores the new keys.
struct KvAppendOptions {
  /// K turned by rotary position embedding on its way into the cache (as `rope` turns it),
  /// at these positions: int32, one per token. Unset: K is stored as it is.
  std::optional<Array> rope_positions;
  float rope_base = 10000.0F;
  /// The rotation's NeoX layout: pairs across the two halves of a head.
  bool rope_neox = false;
};

/// The KV-cache append of a decode or prefill step: new tokens' keys and values written into
/// a paged cache in place, before decode_attention reads it.
///   k_cache, v_cache  [pages, page_size, kv_heads, head_dim], float16 or bfloat16, row-major
///                     (a contiguous view, such as one layer of a larger cache, is fine)
///   k, v              [tokens, kv_heads, head_dim], the caches' dtype
///   slots             int32 or int64 [tokens]: token t goes to row slots[t] % page_size of
///                     page slots[t] / page_size (the caches' first two dimensions
///                     flattened); a slot outside [0, pages * page_size), such as the -1 of a
///                     padding token, writes nothing
/// The caches are evaluated first and written where they are, queued now on the current
/// stream: every handle to them, and memory they wrap (a DLPack tensor), sees the new rows,
/// and so does a pending array computed from them when it is evaluated. Two tokens with one
/// slot leave either's row. With `rope_positions`, K is stored turned and V as it is: the
/// pass over K a separate `rope` would take is saved (turn q with `rope` at the same
/// positions).
void kv_append(const Array& k_cache, const Array& v_cache, const Array& k, const Array& v,
               const Array& slots, const KvAppendOptions& options = {});

/// One launch choice that `tune` timed: the built-in kernel, the shape bucket, and the
/// candidates' times with the winner.
struct OpTuning {
  std::string kernel;  ///< e.g. "matmul_skinny_bf16"
  std::string bucket;  ///< e.g. "m16_n4096_k4096"
  TuneResult result;
};

/// Tunes the launch choices the ops in `call` make for their shapes on this GPU, and keeps
/// the winners where those ops look them up. An op picks some constants by a rule from the
/// shape (the default); tuning times the alternatives and records a winner per shape bucket:
///   matmul           the decode kernel's columns and warps a block (m <= 16), the sm_90
///                    kernel's tile width (bucket "m<rows, to a power of 2>_n<n>_k<k>")
///   quantized_matmul the decode kernel's columns and warps a block (same buckets)
///   moe, moe_experts the grouped products' warps a block, and the second product's columns
///                    ("s<tokens x top_k, to a power of 2>_e<experts>_n<out>_k<in>")
///   attention        warps a block at head dim 64 and 128 ("q<queries>_k<keys>_b<batch>_h<q
///                    heads>", queries and keys to a power of 2)
/// Each later call of those ops, in this process or another sharing the caches (disk, remote,
/// bundles), launches the bucket's winner; an op with no winner for its bucket keeps the rule.
/// A process reads a bucket's records once (`Registry::tuned`), so a winner stored by another
/// process after that is seen by the next process.
///
/// `call` runs the ops and evaluates their results on the current stream: once to find the
/// choices it makes, then, for each choice, once per warm-up and timed launch of each
/// candidate (`Registry::tune` on the ops' registry, with `options`), the other choices as
/// they would be. So a candidate's time is the whole call's. Candidates already timed (in the
/// caches) are not timed again. Throws `InvalidArgument` for a call that makes no choice
/// (nothing evaluated, or no op that has one), and what `Registry::tune` throws.
std::vector<OpTuning> tune(const std::function<void()>& call, const TuneOptions& options = {});

}  // namespace kreg::ops
