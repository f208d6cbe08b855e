// ops::kv_append: new tokens' K and V rows written into a paged KV cache in place, K turned
// by rotary position embedding on the way if asked; launched with kernels/kv_append.cu.

#include <kreg/ops.hpp>

#include "ops/arguments.hpp"
#include "ops/kernel_call.hpp"

#include <kreg/contracts/kv_append.cuh>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace kreg::ops {

void kv_append(const Array& k_cache, const Array& v_cache, const Array& k, const Array& v,
               const Array& slots, const KvAppendOptions& options) {
  namespace c = contracts::kv_append;
  const std::string op = "kv_append";
  const char* type = suffix(op, "k_cache", k_cache);
  if (k_cache.dtype() == Dtype::Float32) {
    invalid(op, "k_cache is float32; float16 or bfloat16 are supported");
  }
  if (k_cache.ndim() != 4) {
    invalid(op, "k_cache must be 4-D (pages, page_size, kv_heads, head_dim), not " +
                    shape_text(k_cache.shape()));
  }
  const Shape& cache_shape = k_cache.shape();
  const std::int64_t kv_heads = cache_shape[2];
  const std::int64_t head_dim = cache_shape[3];
  suffix(op, "v_cache", v_cache);
  if (v_cache.dtype() != k_cache.dtype() || v_cache.shape() != cache_shape) {
    invalid(op, "v_cache must have k_cache's dtype and shape " + shape_text(cache_shape));
  }
  // Written where they are: a view that is not row-major would be written through a copy.
  for (const auto& [name, cache] :
       {std::pair{"k_cache", &k_cache}, std::pair{"v_cache", &v_cache}}) {
    if (!cache->is_row_contiguous()) {
      invalid(op, std::string(name) +
                      " must be row-major (contiguous) to be written in place; it is a strided "
                      "view");
    }
  }
  for (const auto& [name, rows] : {std::pair{"k", &k}, std::pair{"v", &v}}) {
    suffix(op, name, *rows);
    if (rows->dtype() != k_cache.dtype())
      invalid(op, std::string(name) + " must have the caches' dtype");
    if (rows->ndim() != 3 || rows->shape()[1] != kv_heads || rows->shape()[2] != head_dim) {
      invalid(op, std::string(name) + " must be [tokens, " + std::to_string(kv_heads) + ", " +
                      std::to_string(head_dim) + "], not " + shape_text(rows->shape()));
    }
  }
  const std::int64_t tokens = k.shape()[0];
  if (v.shape()[0] != tokens) {
    invalid(op,
            "k has " + std::to_string(tokens) + " tokens and v " + std::to_string(v.shape()[0]));
  }
  if (!slots.valid() || (slots.dtype() != Dtype::Int32 && slots.dtype() != Dtype::Int64) ||
      slots.shape() != Shape{tokens}) {
    invalid(op, "slots must be int32 or int64, one per token (" + std::to_string(tokens) + ")");
  }
  const std::int64_t width = kv_heads * head_dim;
  const std::int64_t cache_slots = cache_shape[0] * cache_shape[1];
  if (tokens > 0x7fffffff || width > std::numeric_limits<unsigned>::max()) {
    invalid(op, "k is too large");
  }
  const std::optional<Array>& positions = options.rope_positions;
  if (positions) {
    if (head_dim % 2 != 0) invalid(op, "head_dim must be even to turn K by RoPE");
    if (!std::isfinite(options.rope_base) || options.rope_base <= 0) {
      invalid(op, "rope_base must be finite and positive");
    }
    if (!positions->valid() || positions->dtype() != Dtype::Int32 ||
        positions->shape() != Shape{tokens}) {
      invalid(op, "rope_positions must be int32, one per token (" + std::to_string(tokens) + ")");
    }
  }

  Constants constants;
  if (positions) constants.bools.emplace_back(c::kRope, true);
  if (positions && options.rope_neox) constants.bools.emplace_back(c::kNeox, true);
  if (slots.dtype() == Dtype::Int64) constants.bools.emplace_back(c::kWideSlots, true);
  // Eight elements a thread, a token's block small enough that several share an SM.
  const auto threads =
      static_cast<unsigned>(std::clamp<std::int64_t>((width / 8 + 31) / 32 * 32, 32, 256));
  const bool work = tokens > 0 && width > 0 && cache_slots > 0;
  auto call =
      std::make_shared<KernelCall>(std::string("kv_append_") + type, constants,
                                   Dim3{static_cast<unsigned>(work ? tokens : 0)}, Dim3{threads});
  call->arguments<c::KvAppend<Element>>(
      k, v, slots, positions, k_cache, v_cache, static_cast<unsigned>(kv_heads),
      static_cast<unsigned>(head_dim), static_cast<long long>(cache_slots),
      static_cast<float>(std::log2(options.rope_base)));
  KernelCall::run_in_place(call);
}

}  // namespace kreg::ops
