#include <kreg/ops.hpp>

#include "ops/arguments.hpp"
#include "ops/kernel_call.hpp"

#include <kreg/contracts/activation.cuh>
#include <kreg/contracts/binary.cuh>
#include <kreg/contracts/cast.cuh>
#include <kreg/contracts/decode_attention.cuh>
#include <kreg/contracts/embedding.cuh>
#include <kreg/contracts/gemv.cuh>
#include <kreg/contracts/layer_norm.cuh>
#include <kreg/contracts/reduce.cuh>
#include <kreg/contracts/rms_norm.cuh>
#include <kreg/contracts/rope.cuh>
#include <kreg/contracts/softmax.cuh>
#include <kreg/contracts/transpose.cuh>

#include <cmath>
#include <limits>
#include <string>

namespace kreg::ops {
namespace {

namespace contracts = kreg::contracts;
using Out = KernelCall::Output;

// Row kernels: one block per row, in whole warps, with up to four vectors of eight elements
// per thread, so that rows of up to 32768 elements fit in registers where a kernel keeps them.
unsigned row_threads(std::int64_t cols) {
  const std::int64_t per_thread = (cols + 31) / 32;
  return static_cast<unsigned>(std::clamp<std::int64_t>((per_thread + 31) / 32 * 32, 32, 1024));
}

// The rows and width of a row-wise op's input, checked.
std::pair<std::int64_t, std::int64_t> rows_of(const std::string& op, const Array& x) {
  if (x.ndim() < 1) invalid(op, "x must have at least one dimension");
  const std::int64_t cols = x.shape().back();
  if (cols <= 0 || cols > std::numeric_limits<unsigned>::max()) {
    invalid(op, "the last dimension (" + std::to_string(cols) + ") must be between 1 and 2^32-1");
  }
  const std::int64_t rows = x.size() / cols;
  if (rows > 0x7fffffff) invalid(op, "too many rows (" + std::to_string(rows) + ")");
  return {rows, cols};
}

Shape without_last(const Shape& shape) {
  return {shape.begin(), shape.end() - 1};
}

// Elements of a dtype in one 16-byte access (kWide in vec.cuh).
std::int64_t wide(Dtype dtype) {
  return static_cast<std::int64_t>(16 / size_of(dtype));
}

// An elementwise kernel's call over n elements, `per_thread` elements for each of `threads`
// threads a block; the kernels loop over whatever the grid leaves.
std::shared_ptr<KernelCall> elementwise_call(std::string entry, Constants constants, std::int64_t n,
                                             std::int64_t per_thread, unsigned threads) {
  const std::int64_t per_block = std::int64_t{threads} * per_thread;
  const std::int64_t blocks = std::min<std::int64_t>((n + per_block - 1) / per_block, 0x7fffffff);
  return std::make_shared<KernelCall>(std::move(entry), std::move(constants),
                                      Dim3{static_cast<unsigned>(blocks)}, Dim3{threads});
}

// Blocks of 128 threads, each thread taking four 16-byte vectors: on the H200 this moves a
// 1:1 stream 5-7% faster than 256 threads with one vector each.
std::shared_ptr<KernelCall> wide_call(std::string entry, Constants constants, std::int64_t n,
                                      Dtype dtype) {
  return elementwise_call(std::move(entry), std::move(constants), n, 4 * wide(dtype), 128);
}

Array binary(const std::string& op, const Array& a, const Array& b) {
  const char* type = suffix(op, "a", a);
  suffix(op, "b", b);
  if (a.dtype() != b.dtype()) {
    invalid(op, std::string("a is ") + to_string(a.dtype()) + " but b is " + to_string(b.dtype()));
  }
  unsigned long long period = 0;
  if (b.shape() != a.shape()) {
    const bool row =
        b.ndim() == 1 && a.ndim() >= 1 && b.shape()[0] == a.shape().back() && b.shape()[0] > 0;
    if (!row) {
      invalid(op, "b's shape " + shape_text(b.shape()) + " is neither a's " +
                      shape_text(a.shape()) + " nor a row of its last dimension");
    }
    period = static_cast<unsigned long long>(b.shape()[0]);
  }
  const std::int64_t n = a.size();
  auto call = wide_call(op + "_" + type, Constants{}, n, a.dtype());
  call->arguments<contracts::binary::Binary<Element>>(a, b, Out{0},
                                                      static_cast<unsigned long long>(n), period);
  return KernelCall::launch(call, {{a.shape(), a.dtype()}})[0];
}

std::pair<Array, Array> norm(const std::string& op, const Array& x, const Array* residual,
                             const std::optional<Array>& weight, float eps) {
  const char* type = suffix(op, "x", x);
  const auto [rows, cols] = rows_of(op, x);
  if (!std::isfinite(eps) || eps < 0) invalid(op, "eps must be finite and not negative");
  if (weight.has_value()) {
    suffix(op, "weight", *weight);
    if (weight->dtype() != x.dtype() || weight->shape() != Shape{cols}) {
      invalid(op, "weight must be 1-D of " + std::to_string(cols) + " " + to_string(x.dtype()) +
                      " elements; it is " + shape_text(weight->shape()) + " of " +
                      to_string(weight->dtype()));
    }
  }
  if (residual != nullptr) {
    suffix(op, "residual", *residual);
    if (residual->dtype() != x.dtype() || residual->shape() != x.shape()) {
      invalid(op, "residual must have x's shape and dtype");
    }
  }
  const unsigned threads = row_threads(cols);
  // Only what differs from the source's defaults, so that the keys are those of the listed
  // specializations, which are precompiled.
  Constants constants;
  if (!weight.has_value()) constants.bools.emplace_back(contracts::rms_norm::kHasWeight, false);
  if (residual != nullptr) constants.bools.emplace_back(contracts::rms_norm::kAddResidual, true);
  auto call = std::make_shared<KernelCall>(std::string("rms_norm_") + type, constants,
                                           Dim3{static_cast<unsigned>(rows)}, Dim3{threads});
  call->arguments<contracts::rms_norm::RmsNorm<Element>>(
      x, weight, residual, Out{0},
      residual != nullptr ? KernelCall::Pointer(Out{1}) : KernelCall::Pointer(nullptr),
      static_cast<unsigned>(cols), eps);
  std::vector<std::pair<Shape, Dtype>> outputs{{x.shape(), x.dtype()}};
  if (residual != nullptr) outputs.emplace_back(x.shape(), x.dtype());
  std::vector<Array> out = KernelCall::launch(call, outputs);
  return {out[0], residual != nullptr ? out[1] : Array()};
}

}  // namespace

Array add(const Array& a, const Array& b) {
  return binary("add", a, b);
}
Array sub(const Array& a, const Array& b) {
  return binary("sub", a, b);
}
Array mul(const Array& a, const Array& b) {
  return binary("mul", a, b);
}
Array div(const Array& a, const Array& b) {
  return binary("div", a, b);
}

Array scale(const Array& a, float s) {
  const char* type = suffix("scale", "a", a);
  const std::int64_t n = a.size();
  auto call = wide_call(std::string("scale_") + type, Constants{}, n, a.dtype());
  call->arguments<contracts::binary::Scale<Element>>(a, s, Out{0},
                                                     static_cast<unsigned long long>(n));
  return KernelCall::launch(call, {{a.shape(), a.dtype()}})[0];
}

Array cast(const Array& a, Dtype dtype) {
  const char* from = suffix("cast", "a", a);
  if (a.dtype() == dtype) return a;
  const bool supported =
      (a.dtype() == Dtype::Float32) != (dtype == Dtype::Float32) &&
      (dtype == Dtype::Float32 || dtype == Dtype::Float16 || dtype == Dtype::BFloat16);
  if (!supported) {
    invalid("cast", std::string("from ") + to_string(a.dtype()) + " to " + to_string(dtype) +
                        " is not supported (float32 to or from float16 and bfloat16 are)");
  }
  const char* to = dtype == Dtype::Float32 ? "f32" : dtype == Dtype::Float16 ? "f16" : "bf16";
  const std::int64_t n = a.size();
  auto call = elementwise_call(std::string("cast_") + from + "_" + to, Constants{}, n, 8, 256);
  call->arguments<contracts::cast::Cast<Element, Element>>(a, Out{0},
                                                           static_cast<unsigned long long>(n));
  return KernelCall::launch(call, {{a.shape(), dtype}})[0];
}

Array rms_norm(const Array& x, const std::optional<Array>& weight, float eps) {
  return norm("rms_norm", x, nullptr, weight, eps).first;
}

std::pair<Array, Array> add_rms_norm(const Array& x, const Array& residual,
                                     const std::optional<Array>& weight, float eps) {
  return norm("add_rms_norm", x, &residual, weight, eps);
}

Array softmax(const Array& x, float scale, const std::optional<Array>& mask) {
  const char* type = suffix("softmax", "x", x);
  const auto [rows, cols] = rows_of("softmax", x);
  if (!std::isfinite(scale)) invalid("softmax", "scale must be finite");
  unsigned long long mask_stride = 0;
  if (mask.has_value()) {
    suffix("softmax", "mask", *mask);
    if (mask->dtype() != x.dtype()) invalid("softmax", "mask must have x's dtype");
    if (mask->shape() == x.shape()) {
      mask_stride = static_cast<unsigned long long>(cols);
    } else if (mask->shape() != Shape{cols}) {
      invalid("softmax", "mask's shape " + shape_text(mask->shape()) + " is neither x's " +
                             shape_text(x.shape()) + " nor one row of it");
    }
  }
  Constants constants;
  if (mask.has_value()) constants.bools.emplace_back(contracts::softmax::kHasMask, true);
  auto call =
      std::make_shared<KernelCall>(std::string("softmax_") + type, constants,
                                   Dim3{static_cast<unsigned>(rows)}, Dim3{row_threads(cols)});
  call->arguments<contracts::softmax::Softmax<Element>>(
      x, mask, Out{0}, static_cast<unsigned>(cols), mask_stride, scale);
  return KernelCall::launch(call, {{x.shape(), x.dtype()}})[0];
}

Array swiglu(const Array& a, const Array& b) {
  const char* type = suffix("swiglu", "a", a);
  suffix("swiglu", "b", b);
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) {
    invalid("swiglu", "a and b must have one shape and dtype");
  }
  const std::int64_t n = a.size();
  auto call = wide_call(std::string("swiglu_") + type, Constants{}, n, a.dtype());
  call->arguments<contracts::activation::Swiglu<Element>>(a, b, Out{0},
                                                          static_cast<unsigned long long>(n));
  return KernelCall::launch(call, {{a.shape(), a.dtype()}})[0];
}

Array gelu(const Array& x, bool tanh_approximation) {
  const char* type = suffix("gelu", "x", x);
  const std::int64_t n = x.size();
  Constants constants;
  if (tanh_approximation) constants.bools.emplace_back(contracts::activation::kTanhForm, true);
  auto call = wide_call(std::string("gelu_") + type, constants, n, x.dtype());
  call->arguments<contracts::activation::Gelu<Element>>(x, Out{0},
                                                        static_cast<unsigned long long>(n));
  return KernelCall::launch(call, {{x.shape(), x.dtype()}})[0];
}

Array embedding(const Array& table, const Array& ids) {
  const char* type = suffix("embedding", "table", table);
  if (table.ndim() != 2) invalid("embedding", "the table must be 2-D (vocabulary x width)");
  if (!ids.valid() || (ids.dtype() != Dtype::Int32 && ids.dtype() != Dtype::Int64)) {
    invalid("embedding", "ids must be int32 or int64");
  }
  const std::int64_t vocab = table.shape()[0];
  const std::int64_t cols = table.shape()[1];
  if (cols <= 0 || cols > std::numeric_limits<unsigned>::max()) {
    invalid("embedding", "the table's width must be between 1 and 2^32-1");
  }
  const std::int64_t count = ids.size();
  if (count > 0x7fffffff) invalid("embedding", "too many ids");
  Shape shape = ids.shape();
  shape.push_back(cols);
  if (shape.size() > 8) invalid("embedding", "the result would have more than 8 dimensions");
  const std::string entry =
      std::string("embedding_") + type + (ids.dtype() == Dtype::Int32 ? "_i32" : "_i64");
  // The row kernels' geometry: up to four vectors a thread, all read before any is written.
  // One vector a thread, in blocks four times as large, ran at 86% of copy bandwidth against
  // 94% (bfloat16 rows of 4096).
  auto call = std::make_shared<KernelCall>(entry, Constants{}, Dim3{static_cast<unsigned>(count)},
                                           Dim3{row_threads(cols)});
  call->arguments<contracts::embedding::Embedding<Element, Element>>(
      table, ids, Out{0}, static_cast<unsigned>(cols), static_cast<unsigned long long>(vocab));
  return KernelCall::launch(call, {{shape, table.dtype()}})[0];
}

namespace {

// Row reductions; argmax's contract differs from the others' only in its output's type.
template <class Signature>
Array row_op(const std::string& op, const std::string& kernel, const Array& x, Dtype result) {
  const char* type = suffix(op, "x", x);
  const auto [rows, cols] = rows_of(op, x);
  auto call = std::make_shared<KernelCall>(
      kernel + "_" + type, Constants{}, Dim3{static_cast<unsigned>(rows)}, Dim3{row_threads(cols)});
  call->arguments<Signature>(x, Out{0}, static_cast<unsigned>(cols));
  return KernelCall::launch(call, {{without_last(x.shape()), result}})[0];
}

}  // namespace

Array row_sum(const Array& x) {
  return row_op<contracts::reduce::RowReduce<Element>>("row_sum", "row_sum", x, Dtype::Float32);
}
Array row_max(const Array& x) {
  return row_op<contracts::reduce::RowReduce<Element>>("row_max", "row_max", x, Dtype::Float32);
}
Array argmax(const Array& x) {
  return row_op<contracts::reduce::Argmax<Element>>("argmax", "argmax", x, Dtype::Int64);
}

Array gemv(const Array& w, const Array& x) {
  const char* type = suffix("gemv", "w", w);
  if (w.ndim() != 2) invalid("gemv", "w must be 2-D (rows x cols)");
  const std::int64_t rows = w.shape()[0];
  const std::int64_t cols = w.shape()[1];
  if (!x.valid() || x.dtype() != Dtype::Float32 || x.shape() != Shape{cols}) {
    invalid("gemv", "x must be float32 of " + std::to_string(cols) + " elements");
  }
  if (cols > std::numeric_limits<unsigned>::max() || rows > std::numeric_limits<unsigned>::max()) {
    invalid("gemv", "w is too large");
  }
  // Eight rows per block of 256 threads, a warp each.
  const auto blocks = static_cast<unsigned>((rows + 7) / 8);
  auto call = std::make_shared<KernelCall>(std::string("gemv_") + type, Constants{}, Dim3{blocks},
                                           Dim3{256});
  call->arguments<contracts::gemv::Gemv<Element>>(w, x, Out{0}, static_cast<unsigned>(rows),
                                                  static_cast<unsigned>(cols));
  return KernelCall::launch(call, {{Shape{rows}, Dtype::Float32}})[0];
}

Array layer_norm(const Array& x, const std::optional<Array>& weight,
                 const std::optional<Array>& bias, float eps) {
  const char* type = suffix("layer_norm", "x", x);
  const auto [rows, cols] = rows_of("layer_norm", x);
  if (!std::isfinite(eps) || eps < 0) invalid("layer_norm", "eps must be finite and not negative");
  const std::int64_t width = cols;  // clang does not let a lambda capture a structured binding
  auto check_row = [&](const char* name, const std::optional<Array>& a) {
    if (!a.has_value()) return;
    suffix("layer_norm", name, *a);
    if (a->dtype() != x.dtype() || a->shape() != Shape{width}) {
      invalid("layer_norm", std::string(name) + " must be 1-D of " + std::to_string(width) + " " +
                                to_string(x.dtype()) + " elements");
    }
  };
  check_row("weight", weight);
  check_row("bias", bias);
  Constants constants;
  if (!weight.has_value()) constants.bools.emplace_back(contracts::layer_norm::kHasWeight, false);
  if (!bias.has_value()) constants.bools.emplace_back(contracts::layer_norm::kHasBias, false);
  auto call =
      std::make_shared<KernelCall>(std::string("layer_norm_") + type, constants,
                                   Dim3{static_cast<unsigned>(rows)}, Dim3{row_threads(cols)});
  call->arguments<contracts::layer_norm::LayerNorm<Element>>(x, weight, bias, Out{0},
                                                             static_cast<unsigned>(cols), eps);
  return KernelCall::launch(call, {{x.shape(), x.dtype()}})[0];
}

namespace {

Array batched_transpose(const std::string& op, const Array& x, std::int64_t batch,
                        std::int64_t rows, std::int64_t cols, Shape result) {
  // The kernel moves P elements at a time over tiles of 32P x 32P (transpose.cu): P is 4 for
  // 1- and 2-byte elements, 2 for 4-byte ones, 1 for 8-byte ones. The grid's y and z
  // dimensions hold at most 65535 tiles of rows and batches. Blocks are 32 x 8 threads, the
  // shape the kernel is compiled for (kWarps).
  const std::size_t size = size_of(x.dtype());
  const std::int64_t tile = std::int64_t{32} * (size <= 2 ? 4 : size == 4 ? 2 : 1);
  if (rows > 65535 * tile || cols > std::numeric_limits<unsigned>::max() || batch > 65535) {
    invalid(op, "the array is too large (at most 65535 batches, " + std::to_string(65535 * tile) +
                    " rows, 2^32-1 columns)");
  }
  const Dim3 grid{static_cast<unsigned>((cols + tile - 1) / tile),
                  static_cast<unsigned>((rows + tile - 1) / tile), static_cast<unsigned>(batch)};
  const bool empty = batch == 0 || rows == 0 || cols == 0;
  auto call = std::make_shared<KernelCall>("transpose_" + std::to_string(size), Constants{},
                                           empty ? Dim3{0} : grid, Dim3{32, 8});
  call->arguments<contracts::transpose::Transpose<Element>>(x, Out{0}, static_cast<unsigned>(rows),
                                                            static_cast<unsigned>(cols));
  return KernelCall::launch(call, {{std::move(result), x.dtype()}})[0];
}

Array rotate(const Array& x, const Array* positions, std::int64_t offset, float base, bool neox) {
  const char* type = suffix("rope", "x", x);
  if (x.ndim() != 3) invalid("rope", "x must be 3-D: tokens x heads x head_dim");
  const std::int64_t tokens = x.shape()[0];
  const std::int64_t heads = x.shape()[1];
  const std::int64_t head_dim = x.shape()[2];
  if (head_dim % 2 != 0) invalid("rope", "head_dim must be even");
  if (tokens > 0x7fffffff || heads * head_dim > std::numeric_limits<unsigned>::max()) {
    invalid("rope", "x is too large");
  }
  if (!std::isfinite(base) || base <= 0) invalid("rope", "base must be finite and positive");
  if (positions != nullptr && (!positions->valid() || positions->dtype() != Dtype::Int32 ||
                               positions->shape() != Shape{tokens})) {
    invalid("rope", "positions must be int32, one per token (" + std::to_string(tokens) + ")");
  }
  Constants constants;
  if (neox) constants.bools.emplace_back(contracts::rope::kNeox, true);
  if (positions != nullptr) constants.bools.emplace_back(contracts::rope::kHasPositions, true);
  // A thread turns four pairs a step where it can (eight elements), and a token's block
  // stays small enough that several share an SM.
  const std::int64_t pairs = heads * head_dim / 2;
  const auto threads =
      static_cast<unsigned>(std::clamp<std::int64_t>((pairs / 4 + 31) / 32 * 32, 32, 256));
  auto call = std::make_shared<KernelCall>(std::string("rope_") + type, constants,
                                           Dim3{static_cast<unsigned>(pairs == 0 ? 0 : tokens)},
                                           Dim3{threads});
  call->arguments<contracts::rope::Rope<Element>>(
      x, positions, Out{0}, static_cast<unsigned>(heads), static_cast<unsigned>(head_dim),
      static_cast<long long>(offset), std::log2(base));
  return KernelCall::launch(call, {{x.shape(), x.dtype()}})[0];
}

}  // namespace

Array transpose(const Array& x) {
  if (!x.valid() || x.ndim() != 2) invalid("transpose", "x must be 2-D");
  return batched_transpose("transpose", x, 1, x.shape()[0], x.shape()[1],
                           {x.shape()[1], x.shape()[0]});
}

Array permute021(const Array& x) {
  if (!x.valid() || x.ndim() != 3) invalid("permute021", "x must be 3-D");
  return batched_transpose("permute021", x, x.shape()[0], x.shape()[1], x.shape()[2],
                           {x.shape()[0], x.shape()[2], x.shape()[1]});
}

Array rope(const Array& x, const Array& positions, float base, bool neox) {
  return rotate(x, &positions, 0, base, neox);
}

Array rope(const Array& x, std::int64_t offset, float base, bool neox) {
  return rotate(x, nullptr, offset, base, neox);
}

namespace {

// The keys a split of a decode takes: with `asked` splits (0: kreg's choice) those, else as
// many as fill the GPU in one wave, about four blocks an SM (each holds 48 KiB of shared
// memory) on 132 SMs; each split at least 32 keys a warp and at most kMaxSplits of them.
std::int64_t decode_split_tokens(std::int64_t rows, std::int64_t capacity, int warps, int asked) {
  constexpr std::int64_t kTargetBlocks = 528;
  const std::int64_t min_tokens = 32 * static_cast<std::int64_t>(warps);
  constexpr auto kMaxSplits = static_cast<std::int64_t>(contracts::decode_attention::kMaxSplits);
  const std::int64_t wanted = asked > 0 ? asked : std::max<std::int64_t>(1, kTargetBlocks / rows);
  const std::int64_t tokens = std::max(
      {min_tokens, (capacity + wanted - 1) / wanted, (capacity + kMaxSplits - 1) / kMaxSplits});
  return (tokens + min_tokens - 1) / min_tokens * min_tokens;
}

}  // namespace

Array decode_attention(const Array& q, const Array& k_cache, const Array& v_cache,
                       const Array& block_table, const Array& seq_lens,
                       const DecodeAttentionOptions& options) {
  namespace c = contracts::decode_attention;
  const std::string op = "decode_attention";
  const char* type = suffix(op, "q", q);
  if (q.dtype() == Dtype::Float32) invalid(op, "q is float32; float16 or bfloat16 are supported");
  if (q.ndim() != 3) {
    invalid(op, "q must be 3-D (batch, q_heads, head_dim), not " + shape_text(q.shape()));
  }
  const std::int64_t batch = q.shape()[0];
  const std::int64_t q_heads = q.shape()[1];
  const std::int64_t head_dim = q.shape()[2];
  if (head_dim != 64 && head_dim != 128 && head_dim != 256) {
    invalid(op, "head_dim is " + std::to_string(head_dim) + "; 64, 128 or 256 are supported");
  }
  for (const auto& [name, cache] :
       {std::pair{"k_cache", &k_cache}, std::pair{"v_cache", &v_cache}}) {
    suffix(op, name, *cache);
    if (cache->dtype() != q.dtype()) invalid(op, std::string(name) + " must have q's dtype");
    if (cache->ndim() != 4 || cache->shape()[3] != head_dim) {
      invalid(op, std::string(name) + " must be [pages, page_size, kv_heads, " +
                      std::to_string(head_dim) + "], not " + shape_text(cache->shape()));
    }
  }
  if (k_cache.shape() != v_cache.shape()) {
    invalid(op, "k_cache " + shape_text(k_cache.shape()) + " and v_cache " +
                    shape_text(v_cache.shape()) + " differ in shape");
  }
  const std::int64_t page_size = k_cache.shape()[1];
  const std::int64_t kv_heads = k_cache.shape()[2];
  if (k_cache.shape()[0] < 1 || page_size < 1 || kv_heads < 1) {
    invalid(op, "the caches hold no pages, rows or heads: " + shape_text(k_cache.shape()));
  }
  if (batch < 1 || batch > 65535) invalid(op, "batch must be 1 to 65535");
  if (kv_heads > 65535) invalid(op, "kv_heads must be at most 65535");
  if (q_heads % kv_heads != 0 || q_heads / kv_heads > 16) {
    invalid(op, std::to_string(q_heads) + " query heads over " + std::to_string(kv_heads) +
                    " KV heads: q_heads must be a multiple of kv_heads, 1 to 16 times it");
  }
  const std::int64_t group = q_heads / kv_heads;
  if (!block_table.valid() || block_table.dtype() != Dtype::Int32 || block_table.ndim() != 2 ||
      block_table.shape()[0] != batch || block_table.shape()[1] < 1) {
    invalid(op, "block_table must be int32 [batch = " + std::to_string(batch) + ", max_pages]");
  }
  if (!seq_lens.valid() || seq_lens.dtype() != Dtype::Int32 || seq_lens.shape() != Shape{batch}) {
    invalid(op, "seq_lens must be int32 [batch = " + std::to_string(batch) + "]");
  }
  const std::int64_t max_pages = block_table.shape()[1];
  const std::int64_t capacity = max_pages * page_size;
  if (capacity > std::numeric_limits<int>::max()) {
    invalid(op, "the block table holds " + std::to_string(capacity) + " tokens; at most 2^31-1");
  }
  const float scale = options.scale.value_or(1.0F / std::sqrt(static_cast<float>(head_dim)));
  if (!std::isfinite(scale)) invalid(op, "scale must be finite");
  if (!std::isfinite(options.soft_cap) || options.soft_cap < 0) {
    invalid(op, "soft_cap must be finite and not negative");
  }
  if (options.splits < 0 || options.splits > static_cast<int>(c::kMaxSplits)) {
    invalid(op, "splits is " + std::to_string(options.splits) + "; 0 (kreg chooses) or 1 to " +
                    std::to_string(c::kMaxSplits));
  }

  // Only the constants that differ from the kernel's defaults, so that the common
  // specializations meet their precompiled binaries.
  Constants constants;
  if (head_dim != 128)
    constants.ints.emplace_back(c::kHeadDim, static_cast<std::int32_t>(head_dim));
  if (group != 1) constants.ints.emplace_back(c::kGroup, static_cast<std::int32_t>(group));
  if (options.soft_cap > 0) constants.bools.emplace_back(c::kSoftCap, true);
  if (options.window_left >= 0) constants.bools.emplace_back(c::kWindow, true);

  const int warps = head_dim == 64    ? c::kWarps<64>
                    : head_dim == 128 ? c::kWarps<128>
                                      : c::kWarps<256>;
  const std::int64_t split_tokens =
      decode_split_tokens(batch * kv_heads, capacity, warps, options.splits);
  const std::int64_t splits = (capacity + split_tokens - 1) / split_tokens;
  const Dim3 grid{static_cast<unsigned>(splits), static_cast<unsigned>(kv_heads),
                  static_cast<unsigned>(batch)};
  auto call = std::make_shared<KernelCall>(std::string("decode_attention_") + type, constants, grid,
                                           Dim3{static_cast<unsigned>(32 * warps)});
  const auto values = [&](auto&&... pointers) {
    call->arguments<c::DecodeAttention<Element>>(
        q, k_cache, v_cache, block_table, seq_lens, pointers..., static_cast<unsigned>(kv_heads),
        static_cast<unsigned>(page_size), static_cast<unsigned>(max_pages),
        static_cast<unsigned>(split_tokens), scale, options.soft_cap, options.window_left);
  };
  if (splits == 1) {
    values(Out{0}, nullptr, nullptr);
    return KernelCall::launch(call, {{q.shape(), q.dtype()}})[0];
  }
  // The splits' partials, then the combine, launched as a pair so that the combine's launch
  // overlaps the first kernel's end.
  values(nullptr, Out{1}, Out{2});
  auto combine = std::make_shared<KernelCall>(
      std::string("decode_attention_combine_") + type, constants,
      Dim3{static_cast<unsigned>(q_heads), static_cast<unsigned>(batch)}, Dim3{c::kCombineThreads});
  combine->arguments<c::DecodeCombine<Element>>(Out{1}, Out{2}, Out{0},
                                                static_cast<unsigned>(splits));
  call->then(combine);
  return KernelCall::launch(call, {{q.shape(), q.dtype()},
                                   {Shape{batch, q_heads, splits, head_dim}, Dtype::Float32},
                                   {Shape{batch, q_heads, splits}, Dtype::Float32}})[0];
}

}  // namespace kreg::ops
