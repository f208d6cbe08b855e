// ops::moe_route, ops::moe_experts and ops::moe: a mixture-of-experts layer, launched with
// kernels/moe_route.cu (router, dispatch, combine) and kernels/moe_matmul.cu (the grouped
// products).

#include <kreg/ops.hpp>

#include "ops/arguments.hpp"
#include "ops/kernel_call.hpp"
#include "ops/tuned_choice.hpp"

#include <kreg/contracts/moe.cuh>

#include <algorithm>
#include <limits>
#include <string>

namespace kreg::ops {
namespace {

namespace mc = contracts::moe;
using Out = KernelCall::Output;

constexpr auto kIntMax = std::numeric_limits<int>::max();

// An operand as the grouped products read it: row-major from 16 bytes (8 elements of a 16-bit
// type). A row-contiguous view that starts elsewhere is copied (x * 1 is x exactly) into a
// buffer of its own.
Array on_16_bytes(const Array& x) {
  return starts_on(x, 8) ? x : scale(x, 1.0F);
}

void check_stack(const std::string& op, const char* name, const Array& w, const Shape& want,
                 Dtype dtype) {
  if (!w.valid()) invalid(op, std::string(name) + " is an empty Array handle");
  if (w.dtype() != dtype || w.shape() != want) {
    invalid(op, std::string(name) + " must be " + shape_text(want) + " " + to_string(dtype) +
                    ", not " + shape_text(w.shape()) + " " + to_string(w.dtype()));
  }
}

}  // namespace

MoeRouting moe_route(const Array& logits, int top_k, bool renormalize) {
  const std::string op = "moe_route";
  const char* type = suffix(op, "logits", logits);
  if (logits.ndim() != 2) {
    invalid(op, "logits must be 2-D ([tokens, experts]), not " + shape_text(logits.shape()));
  }
  const std::int64_t tokens = logits.shape()[0];
  const std::int64_t experts = logits.shape()[1];
  if (experts < 1 || experts > mc::kMaxExperts) {
    invalid(op, "there must be 1 to " + std::to_string(mc::kMaxExperts) + " experts, not " +
                    std::to_string(experts));
  }
  if (top_k < 1 || top_k > mc::kMaxTopK || top_k > experts) {
    invalid(op, "top_k must be 1 to " + std::to_string(mc::kMaxTopK) +
                    " and at most the experts (" + std::to_string(experts) + "), not " +
                    std::to_string(top_k));
  }
  if (tokens > kIntMax / mc::kMaxTopK) invalid(op, "too many tokens");
  constexpr std::int64_t kTokensPerBlock = mc::kRouteThreads / 32;
  auto call = std::make_shared<KernelCall>(
      std::string("moe_route_") + type, Constants{},
      Dim3{static_cast<unsigned>((tokens + kTokensPerBlock - 1) / kTokensPerBlock)},
      Dim3{mc::kRouteThreads});
  call->arguments<mc::Route<Element>>(logits, Out{0}, Out{1}, static_cast<int>(tokens),
                                      static_cast<int>(experts), top_k, renormalize ? 1 : 0);
  std::vector<Array> out = KernelCall::launch(
      call, {{Shape{tokens, top_k}, Dtype::Float32}, {Shape{tokens, top_k}, Dtype::Int32}});
  return {out[0], out[1]};
}

Array moe_experts(const Array& x, const Array& weights, const Array& ids,
                  const MoeExperts& experts) {
  const std::string op = "moe_experts";
  const char* type = suffix(op, "x", x);
  if (x.dtype() == Dtype::Float32) invalid(op, "x is float32; float16 or bfloat16 are supported");
  if (x.ndim() != 2) invalid(op, "x must be 2-D ([tokens, hidden]), not " + shape_text(x.shape()));
  const std::int64_t tokens = x.shape()[0];
  const std::int64_t hidden = x.shape()[1];
  if (!weights.valid() || !ids.valid() || weights.ndim() != 2 ||
      weights.dtype() != Dtype::Float32 || ids.dtype() != Dtype::Int32 ||
      weights.shape() != ids.shape() || weights.shape()[0] != tokens) {
    invalid(op, "weights and ids must be [tokens, top_k] float32 and int32, with x's " +
                    std::to_string(tokens) + " tokens");
  }
  const std::int64_t top_k = weights.shape()[1];
  if (top_k < 1 || top_k > mc::kMaxTopK) {
    invalid(op, "top_k must be 1 to " + std::to_string(mc::kMaxTopK) + ", not " +
                    std::to_string(top_k));
  }
  if (!experts.gate.valid() || experts.gate.ndim() != 3) {
    invalid(op, "the gate projections must be 3-D ([experts, ffn, hidden])");
  }
  const std::int64_t count = experts.gate.shape()[0];
  const std::int64_t ffn = experts.gate.shape()[1];
  check_stack(op, "gate", experts.gate, {count, ffn, hidden}, x.dtype());
  check_stack(op, "up", experts.up, {count, ffn, hidden}, x.dtype());
  check_stack(op, "down", experts.down, {count, hidden, ffn}, x.dtype());
  if (count < 1 || count > mc::kMaxExperts) {
    invalid(op, "there must be 1 to " + std::to_string(mc::kMaxExperts) + " experts, not " +
                    std::to_string(count));
  }
  if (hidden % 8 != 0 || ffn % 8 != 0) {
    invalid(op, "hidden (" + std::to_string(hidden) + ") and ffn (" + std::to_string(ffn) +
                    ") must be multiples of 8");
  }
  const std::int64_t slots = tokens * top_k;
  if (slots > kIntMax / 4 || hidden > kIntMax || ffn > kIntMax || (hidden + 15) / 16 > 65535 ||
      (ffn + 15) / 16 > 65535) {
    invalid(op, "the layer is too large");
  }
  const Stream stream = current_stream();  // refuses under a CPU scope
  const Shape out_shape = {tokens, hidden};
  if (tokens == 0 || hidden == 0) {
    return KernelCall::launch(std::make_shared<KernelCall>(std::string("moe_combine_") + type,
                                                           Constants{}, Dim3{0}, Dim3{1}),
                              {{out_shape, x.dtype()}})[0];
  }

  // Tiles of 32 rows once an expert gets more than about 24 rows on average: each weight is
  // then read once per 32 rows rather than per 16.
  const int tile_rows = slots > 24 * count ? 32 : 16;
  // The most tiles the slots can need: each expert that gets rows rounds up once.
  const std::int64_t tile_count =
      (slots + tile_rows - 1) / tile_rows + std::min<std::int64_t>(count, slots);
  const auto s = static_cast<int>(slots);
  auto dispatch = std::make_shared<KernelCall>("moe_dispatch", Constants{}, Dim3{1},
                                               Dim3{mc::kDispatchThreads});
  dispatch->arguments<mc::Dispatch>(ids, Out{0}, Out{1}, Out{2}, s, static_cast<int>(count),
                                    tile_rows, static_cast<int>(tile_count));
  const std::vector<Array> routed =
      KernelCall::launch(dispatch, {{Shape{slots}, Dtype::Int32},
                                    {Shape{slots}, Dtype::Int32},
                                    {Shape{tile_count, 4}, Dtype::Int32}});
  const Array& positions = routed[0];
  const Array& order = routed[1];
  const Array& tiles = routed[2];

  const std::string entry = std::string("moe_matmul_") + type;
  Registry& registry = device_registry(stream.device());
  // One grouped product of n columns over k: blocks of the default 4 warps (the best, or
  // within 2% of it, at the decode and prefill sizes measured) and 32 columns (16 when gated),
  // unless tuning found better for the bucket; a block's warps times its tile's rows are at
  // most 256.
  const auto product = [&](bool gated, std::int64_t n_cols, std::int64_t k_in) {
    Choice choice{entry, {}, {}, ""};
    if (gated) choice.fixed.bools.emplace_back(mc::kGated, true);
    if (tile_rows != 16) choice.fixed.ints.emplace_back(mc::kTileRows, tile_rows);
    choice.knobs.push_back(tile_rows == 16 ? knob(mc::kWarps, 4, 4, {2, 8, 16})
                                           : knob(mc::kWarps, 4, 4, {2, 8}));
    if (!gated) choice.knobs.push_back(knob(mc::kCols, 32, 32, {16}));
    choice.bucket = "s" + std::to_string(bucket_size(slots)) + "_e" + std::to_string(count) + "_n" +
                    std::to_string(n_cols) + "_k" + std::to_string(k_in);
    const Constants constants = choose(registry, choice);
    const std::int64_t cols = gated ? 16 : int_constant(constants, mc::kCols, 32);
    const auto warps = static_cast<unsigned>(int_constant(constants, mc::kWarps, 4));
    return std::make_shared<KernelCall>(
        entry, constants,
        Dim3{static_cast<unsigned>(tile_count), static_cast<unsigned>((n_cols + cols - 1) / cols)},
        Dim3{32 * warps});
  };
  auto first = product(true, ffn, hidden);
  first->arguments<mc::GroupedMatmul<Element>>(
      on_16_bytes(x), on_16_bytes(experts.gate), on_16_bytes(experts.up), order, tiles, Out{0},
      static_cast<int>(ffn), static_cast<int>(hidden), static_cast<int>(top_k),
      static_cast<long long>(hidden), static_cast<long long>(ffn * hidden));
  const Array h = KernelCall::launch(first, {{Shape{slots, ffn}, x.dtype()}})[0];

  auto second = product(false, hidden, ffn);
  second->arguments<mc::GroupedMatmul<Element>>(
      h, on_16_bytes(experts.down), nullptr, nullptr, tiles, Out{0}, static_cast<int>(hidden),
      static_cast<int>(ffn), static_cast<int>(top_k), static_cast<long long>(ffn),
      static_cast<long long>(hidden * ffn));
  const Array y = KernelCall::launch(second, {{Shape{slots, hidden}, x.dtype()}})[0];

  auto combine =
      std::make_shared<KernelCall>(std::string("moe_combine_") + type, Constants{},
                                   Dim3{static_cast<unsigned>(tokens)}, Dim3{mc::kCombineThreads});
  combine->arguments<mc::Combine<Element>>(y, weights, positions, Out{0}, static_cast<int>(tokens),
                                           static_cast<int>(top_k), static_cast<int>(hidden));
  return KernelCall::launch(combine, {{out_shape, x.dtype()}})[0];
}

Array moe(const Array& x, const Array& router_logits, const MoeExperts& experts,
          const MoeOptions& options) {
  if (!x.valid() || x.ndim() != 2 || !router_logits.valid() || router_logits.ndim() != 2 ||
      router_logits.shape()[0] != x.shape()[0]) {
    invalid("moe", "x [tokens, hidden] and router_logits [tokens, experts] must agree in tokens");
  }
  if (experts.gate.valid() && experts.gate.ndim() == 3 &&
      router_logits.shape()[1] != experts.gate.shape()[0]) {
    invalid("moe", "router_logits has " + std::to_string(router_logits.shape()[1]) +
                       " experts but the gate projections " +
                       std::to_string(experts.gate.shape()[0]));
  }
  const MoeRouting routing = moe_route(router_logits, options.top_k, options.renormalize);
  return moe_experts(x, routing.weights, routing.ids, experts);
}

}  // namespace kreg::ops
