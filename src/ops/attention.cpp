// ops::attention: prefill attention over fixed or packed variable-length batches, launched
// with kernels/attention.cu.

#include <kreg/ops.hpp>
#include <kreg/stream.hpp>

#include "cuda/device.hpp"
#include "ops/arguments.hpp"
#include "ops/kernel_call.hpp"
#include "ops/tuned_choice.hpp"
#include "ops/wgmma_target.hpp"

#include <kreg/contracts/attention.cuh>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace kreg::ops {
namespace {

namespace c = contracts::attention;
using Out = KernelCall::Output;

// What both forms check and pass on: q, k and v as rows of heads, and the options.
struct Layout {
  std::int64_t batch = 0;
  std::int64_t total_q = 0;
  std::int64_t total_k = 0;
  std::int64_t q_heads = 0;
  std::int64_t kv_heads = 0;
  std::int64_t head_dim = 0;
};

// q, k and v as [rows..., heads, head_dim] with `lead` leading dimensions.
Layout check_inputs(const std::string& op, const Array& q, const Array& k, const Array& v,
                    int lead) {
  const char* type = suffix(op, "q", q);
  if (q.dtype() == Dtype::Float32) invalid(op, "q is float32; float16 or bfloat16 are supported");
  const std::string dims =
      lead == 2 ? "(batch, len, heads, head_dim)" : "(tokens, heads, head_dim)";
  for (const auto& [name, a] : {std::pair{"q", &q}, std::pair{"k", &k}, std::pair{"v", &v}}) {
    suffix(op, name, *a);
    if (a->dtype() != q.dtype()) {
      invalid(op, std::string(name) + " is " + to_string(a->dtype()) + " but q is " + type);
    }
    if (a->ndim() != lead + 2) {
      invalid(op, std::string(name) + " must be " + std::to_string(lead + 2) + "-D " + dims +
                      ", not " + shape_text(a->shape()));
    }
  }
  Layout l;
  l.head_dim = q.shape().back();
  l.q_heads = q.shape()[lead];
  l.kv_heads = k.shape()[lead];
  if (l.head_dim != 64 && l.head_dim != 128 && l.head_dim != 256) {
    invalid(op, "head_dim is " + std::to_string(l.head_dim) + "; 64, 128 or 256 are supported");
  }
  if (k.shape() != v.shape()) {
    invalid(op,
            "k " + shape_text(k.shape()) + " and v " + shape_text(v.shape()) + " differ in shape");
  }
  if (k.shape().back() != l.head_dim) {
    invalid(op, "k's head_dim is " + std::to_string(k.shape().back()) + " but q's is " +
                    std::to_string(l.head_dim));
  }
  if (l.kv_heads < 1 || l.q_heads % l.kv_heads != 0) {
    invalid(op, std::to_string(l.q_heads) + " query heads over " + std::to_string(l.kv_heads) +
                    " KV heads: q_heads must be a multiple of kv_heads");
  }
  if (l.q_heads > 65535) invalid(op, "q_heads must be at most 65535");
  l.total_q = q.size() / (l.q_heads * l.head_dim);
  l.total_k = k.size() / (l.kv_heads * l.head_dim);
  if (l.total_q > std::numeric_limits<int>::max() || l.total_k > std::numeric_limits<int>::max()) {
    invalid(op, "q and k must each hold at most 2^31-1 tokens");
  }
  return l;
}

Array run(const std::string& op, const Array& q, const Array& k, const Array& v, const Array* cu_q,
          const Array* cu_k, const Layout& l, std::int64_t fixed_q, std::int64_t fixed_k,
          const AttentionOptions& options) {
  const float scale = options.scale.value_or(1.0F / std::sqrt(static_cast<float>(l.head_dim)));
  if (!std::isfinite(scale)) invalid(op, "scale must be finite");
  if (!std::isfinite(options.soft_cap) || options.soft_cap < 0) {
    invalid(op, "soft_cap must be finite and not negative");
  }

  // The mask as strides over (sequence, head, query, key), its extent, and its kind.
  int mask_kind = c::kMaskNone;
  long long mask_batch = 0;
  long long mask_head = 0;
  long long mask_row = 0;
  std::int64_t mask_rows = 0;
  std::int64_t mask_cols = 0;
  if (options.mask.has_value()) {
    const Array& m = *options.mask;
    if (!m.valid()) invalid(op, "mask is an empty Array handle");
    if (m.dtype() == Dtype::Bool || m.dtype() == Dtype::UInt8) {
      mask_kind = c::kMaskBoolean;
    } else if (m.dtype() == q.dtype()) {
      mask_kind = c::kMaskAdditive;
    } else {
      invalid(op, std::string("mask is ") + to_string(m.dtype()) +
                      "; it must be q's dtype (added) or bool");
    }
    Shape shape = m.shape();
    if (shape.size() == 2) shape.insert(shape.begin(), {1, 1});
    const bool batch_ok = shape.size() == 4 && (shape[0] == 1 || shape[0] == l.batch);
    const bool heads_ok = shape.size() == 4 && (shape[1] == 1 || shape[1] == l.q_heads);
    const bool extent_ok =
        shape.size() == 4 && (cu_q != nullptr || (shape[2] == fixed_q && shape[3] == fixed_k));
    if (!batch_ok || !heads_ok || !extent_ok) {
      invalid(op, "mask " + shape_text(m.shape()) + " must be [batch or 1, q_heads or 1, " +
                      (cu_q != nullptr ? std::string("rows, cols]")
                                       : "len_q, len_k] or [len_q, len_k]") +
                      " for batch " + std::to_string(l.batch) + ", " + std::to_string(l.q_heads) +
                      " query heads");
    }
    if (shape[2] > std::numeric_limits<int>::max() || shape[3] > std::numeric_limits<int>::max()) {
      invalid(op, "the mask's rows and columns must be below 2^31");
    }
    mask_rows = shape[2];
    mask_cols = shape[3];
    mask_row = shape[3];
    mask_head = shape[1] == 1 ? 0 : shape[2] * shape[3];
    mask_batch = shape[0] == 1 ? 0 : shape[1] * shape[2] * shape[3];
  }

  // Only the constants that differ from the kernel's defaults, so that the common
  // specializations meet their precompiled binaries.
  Constants constants;
  if (l.head_dim != 128) {
    constants.ints.emplace_back(c::kHeadDim, static_cast<std::int32_t>(l.head_dim));
  }
  if (mask_kind != c::kMaskNone) constants.ints.emplace_back(c::kMask, mask_kind);
  if (options.causal) constants.bools.emplace_back(c::kCausal, true);
  if (options.soft_cap > 0) constants.bools.emplace_back(c::kSoftCap, true);
  if (options.window_left >= 0) constants.bools.emplace_back(c::kWindow, true);

  const bool empty = l.total_q == 0 || l.batch == 0;
  const char* type = q.dtype() == Dtype::Float16 ? "f16" : "bf16";
  // The shape bucket a tuned choice is kept for.
  const std::string bucket = "q" + std::to_string(bucket_size(l.total_q)) + "_k" +
                             std::to_string(bucket_size(l.total_k)) + "_b" +
                             std::to_string(l.batch) + "_h" + std::to_string(l.q_heads);

  // Hopper, head dim 64 or 128, sequences of one length, no mask: the warp-specialized kernel,
  // its tiles brought by the copy engine (which needs rows on 16 bytes).
  Registry* registry = empty ? nullptr : &device_registry(current_stream().device());
  if (registry != nullptr && targets_wgmma(*registry) && cu_q == nullptr && fixed_k > 0 &&
      mask_kind == c::kMaskNone && l.head_dim <= c::kTmaMaxHeadDim && starts_on(q, 8) &&
      starts_on(k, 8) && starts_on(v, 8)) {
    const std::string tma_entry = std::string("attention_tma_") + type;
    constants = choose(*registry, {tma_entry, constants, {knob(c::kOverlap, 2, 2, {1})}, bucket});
    const std::int64_t tiles = (fixed_q + c::kTmaRows - 1) / c::kTmaRows;
    const std::int64_t items = l.batch * tiles * l.q_heads;
    if (items > std::numeric_limits<int>::max()) invalid(op, "too many query tiles");
    // Persistent: a block a multiprocessor, each taking its share of the items in turn, so
    // that one item's first copies overlap the last one's products and output (with a causal
    // mask 1.04-1.16x faster on an H100 than a block an item).
    const std::int64_t blocks =
        std::min<std::int64_t>(items, cuda::multiprocessor_count(current_stream().device()));
    auto call = std::make_shared<KernelCall>(
        tma_entry, constants, Dim3{static_cast<unsigned>(blocks)}, Dim3{c::kTmaThreads});
    call->shared_bytes(l.head_dim == 64 ? c::kTmaSharedBytes<64> : c::kTmaSharedBytes<128>);
    const auto u = [](std::int64_t value) { return static_cast<std::uint64_t>(value); };
    // [batch, len, heads * head_dim], boxes of 64 columns by a tile's rows.
    const auto map = [&](const Array& x, std::int64_t heads, std::int64_t len, int rows) {
      const std::int64_t row = heads * l.head_dim;
      return KernelCall::TensorMapOf{
          &x,         true,        u(row), u(len), u(row), 64, static_cast<unsigned>(rows),
          u(l.batch), u(len * row)};
    };
    call->arguments<c::AttentionTma<Element>>(
        map(q, l.q_heads, fixed_q, c::kTmaRows), map(k, l.kv_heads, fixed_k, c::kTmaKeys),
        map(v, l.kv_heads, fixed_k, c::kTmaKeys), Out{0}, static_cast<unsigned>(l.batch),
        static_cast<unsigned>(l.q_heads), static_cast<unsigned>(l.kv_heads),
        static_cast<int>(fixed_q), static_cast<int>(fixed_k), scale, options.soft_cap,
        options.window_left);
    return KernelCall::launch(call, {{q.shape(), q.dtype()}})[0];
  }

  const std::string entry = std::string("attention_") + type;
  // Warps a block: the default 4 (0), or 8 where tuning found them faster for the bucket (at
  // head dim 256 there is no other choice).
  int warps = c::kBlockWarps<128>;
  if (l.head_dim != 256 && registry != nullptr) {
    constants = choose(*registry, {entry, constants, {knob(c::kWarps, 0, 0, {8})}, bucket});
    if (const std::int32_t chosen = int_constant(constants, c::kWarps, 0); chosen != 0) {
      warps = chosen;
    }
  }

  // Fixed lengths: a slot for each tile. Packed: at most total_q / rows + batch tiles.
  const std::int64_t rows = std::int64_t{16} * warps;
  const std::int64_t slots =
      cu_q == nullptr ? l.batch * ((fixed_q + rows - 1) / rows) : l.total_q / rows + l.batch;
  if (slots > std::numeric_limits<int>::max()) invalid(op, "too many query tiles");
  const Dim3 grid{static_cast<unsigned>(empty ? 0 : slots), static_cast<unsigned>(l.q_heads)};
  auto call =
      std::make_shared<KernelCall>(entry, constants, grid, Dim3{static_cast<unsigned>(32 * warps)});
  call->arguments<c::Attention<Element>>(
      q, k, v, cu_q, cu_k, options.mask, Out{0}, static_cast<unsigned>(l.batch),
      static_cast<unsigned>(l.kv_heads), static_cast<int>(l.total_q), static_cast<int>(l.total_k),
      static_cast<int>(fixed_q), static_cast<int>(fixed_k), mask_batch, mask_head, mask_row,
      static_cast<int>(mask_rows), static_cast<int>(mask_cols), scale, options.soft_cap,
      options.window_left);
  return KernelCall::launch(call, {{q.shape(), q.dtype()}})[0];
}

}  // namespace

Array attention(const Array& q, const Array& k, const Array& v, const AttentionOptions& options) {
  const std::string op = "attention";
  Layout l = check_inputs(op, q, k, v, 2);
  l.batch = q.shape()[0];
  if (k.shape()[0] != l.batch) {
    invalid(op, "q has a batch of " + std::to_string(l.batch) + " but k of " +
                    std::to_string(k.shape()[0]));
  }
  if (l.batch > 65535) invalid(op, "batch must be at most 65535");
  return run(op, q, k, v, nullptr, nullptr, l, q.shape()[1], k.shape()[1], options);
}

Array attention(const Array& q, const Array& k, const Array& v, const Array& cu_seqlens_q,
                const Array& cu_seqlens_k, const AttentionOptions& options) {
  const std::string op = "attention";
  Layout l = check_inputs(op, q, k, v, 1);
  for (const auto& [name, cu] :
       {std::pair{"cu_seqlens_q", &cu_seqlens_q}, std::pair{"cu_seqlens_k", &cu_seqlens_k}}) {
    if (!cu->valid() || cu->dtype() != Dtype::Int32 || cu->ndim() != 1 || cu->shape()[0] < 1) {
      invalid(op, std::string(name) + " must be int32 [batch + 1]");
    }
  }
  if (cu_seqlens_q.shape() != cu_seqlens_k.shape()) {
    invalid(op, "cu_seqlens_q " + shape_text(cu_seqlens_q.shape()) + " and cu_seqlens_k " +
                    shape_text(cu_seqlens_k.shape()) + " differ in shape");
  }
  l.batch = cu_seqlens_q.shape()[0] - 1;
  if (l.batch > 65535) invalid(op, "batch must be at most 65535");
  return run(op, q, k, v, &cu_seqlens_q, &cu_seqlens_k, l, 0, 0, options);
}

}  // namespace kreg::ops
