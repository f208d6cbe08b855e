// kreg.ops: every op of <kreg/ops.hpp> on any framework's arrays; results come back in the
// framework of the first array argument, as metal_kernel's do.
#include "bindings.hpp"
#include "dtypes.hpp"
#include "interop.hpp"

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>

#include <kreg/ops.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace kreg::python {
namespace {

// Runs `op` over imported arrays on the call's stream, evaluates without the GIL, and
// converts the result(s) back.
template <class Op>
nb::object run(nb::handle first, nb::handle stream, Op&& op) {
  CallScope scope(first, stream);
  auto result = op(scope);
  if constexpr (std::is_same_v<decltype(result), std::pair<Array, Array>>) {
    {
      nb::gil_scoped_release release;
      eval({result.first, result.second});
    }
    return nb::make_tuple(scope.output(result.first), scope.output(result.second));
  } else if constexpr (std::is_same_v<decltype(result), kreg::ops::QuantizedWeight>) {
    {
      nb::gil_scoped_release release;
      eval({result.weight, result.scales, result.biases});
    }
    return nb::make_tuple(scope.output(result.weight), scope.output(result.scales),
                          scope.output(result.biases));
  } else {
    {
      nb::gil_scoped_release release;
      result.eval();
    }
    return scope.output(result);
  }
}

std::optional<Array> optional_input(const CallScope& scope, nb::handle value, const char* what) {
  if (value.is_none()) return std::nullopt;
  return scope.input(value, what);
}

// ops.matmul's epilogue by name.
kreg::ops::Epilogue epilogue_named(std::string_view name) {
  using kreg::ops::Epilogue;
  for (const auto& [known, e] :
       {std::pair{"none", Epilogue::None}, std::pair{"gelu", Epilogue::Gelu},
        std::pair{"gelu_tanh", Epilogue::GeluTanh}, std::pair{"silu", Epilogue::Silu},
        std::pair{"silu_gate", Epilogue::SiluGate}, std::pair{"residual", Epilogue::Residual}}) {
    if (name == known) return e;
  }
  throw kreg::Error(kreg::ErrorCode::InvalidArgument,
                    "ops::matmul: unknown epilogue '" + std::string(name) +
                        "' (none, gelu, gelu_tanh, silu, silu_gate, residual)");
}

using Binary = Array (*)(const Array&, const Array&);

using Unary = Array (*)(const Array&);

void def_unary(nb::module_& ops, const char* name, Unary f, const char* doc) {
  ops.def(
      name,
      [f](nb::handle x, nb::handle stream) {
        return run(x, stream, [&](const CallScope& s) { return f(s.input(x, "x")); });
      },
      nb::arg("x"), nb::kw_only(), nb::arg("stream") = nb::none(), doc);
}

void def_binary(nb::module_& ops, const char* name, Binary f, const char* doc) {
  ops.def(
      name,
      [f](nb::handle a, nb::handle b, nb::handle stream) {
        return run(a, stream,
                   [&](const CallScope& s) { return f(s.input(a, "a"), s.input(b, "b")); });
      },
      nb::arg("a"), nb::arg("b"), nb::kw_only(), nb::arg("stream") = nb::none(), doc);
}

}  // namespace

void bind_ops(nb::module_& m) {
  nb::module_ ops = m.def_submodule(
      "ops",
      "Typed operations backed by kreg's built-in kernels (<kreg/ops.hpp>), on torch, CuPy, "
      "JAX, numpy or kreg arrays. Dtypes: float32, float16 and bfloat16 unless noted. Each "
      "takes stream= like metal_kernel calls and returns arrays of the first input's "
      "framework.");
  def_binary(ops, "add", &kreg::ops::add,
             "a + b, in float; b has a's shape or is a row as long as a's last dimension.");
  def_binary(ops, "sub", &kreg::ops::sub, "a - b (see add).");
  def_binary(ops, "mul", &kreg::ops::mul, "a * b (see add).");
  def_binary(ops, "div", &kreg::ops::div, "a / b (see add).");
  def_binary(ops, "swiglu", &kreg::ops::swiglu, "silu(a) * b, elementwise.");
  def_binary(ops, "embedding", &kreg::ops::embedding,
             "The rows of a (vocabulary x width) that b (int32 or int64 ids) picks.");
  def_binary(ops, "gemv", &kreg::ops::gemv,
             "y = W x: a is W (rows x cols), b is x (float32, cols); y is float32.");

  ops.def(
      "scale",
      [](nb::handle a, float s, nb::handle stream) {
        return run(a, stream,
                   [&](const CallScope& c) { return kreg::ops::scale(c.input(a, "a"), s); });
      },
      nb::arg("a"), nb::arg("s"), nb::kw_only(), nb::arg("stream") = nb::none(), "a * s.");
  ops.def(
      "cast",
      [](nb::handle a, nb::handle dtype, nb::handle stream) {
        const Dtype d = to_dtype(dtype, "cast");
        return run(a, stream,
                   [&](const CallScope& c) { return kreg::ops::cast(c.input(a, "a"), d); });
      },
      nb::arg("a"), nb::arg("dtype"), nb::kw_only(), nb::arg("stream") = nb::none(),
      "a converted to dtype (float32 to and from float16 and bfloat16), rounding to nearest "
      "even.");
  ops.def(
      "rms_norm",
      [](nb::handle x, nb::handle weight, float eps, nb::handle stream) {
        return run(x, stream, [&](const CallScope& c) {
          return kreg::ops::rms_norm(c.input(x, "x"), optional_input(c, weight, "weight"), eps);
        });
      },
      nb::arg("x"), nb::arg("weight") = nb::none(), nb::arg("eps") = 1e-6F, nb::kw_only(),
      nb::arg("stream") = nb::none(),
      "RMS norm over the last dimension: x / sqrt(mean(x^2) + eps) * weight.");
  ops.def(
      "add_rms_norm",
      [](nb::handle x, nb::handle residual, nb::handle weight, float eps, nb::handle stream) {
        return run(x, stream, [&](const CallScope& c) {
          return kreg::ops::add_rms_norm(c.input(x, "x"), c.input(residual, "residual"),
                                         optional_input(c, weight, "weight"), eps);
        });
      },
      nb::arg("x"), nb::arg("residual"), nb::arg("weight") = nb::none(), nb::arg("eps") = 1e-6F,
      nb::kw_only(), nb::arg("stream") = nb::none(),
      "h = x + residual, then the RMS norm of h. Returns (norm, h).");
  ops.def(
      "layer_norm",
      [](nb::handle x, nb::handle weight, nb::handle bias, float eps, nb::handle stream) {
        return run(x, stream, [&](const CallScope& c) {
          return kreg::ops::layer_norm(c.input(x, "x"), optional_input(c, weight, "weight"),
                                       optional_input(c, bias, "bias"), eps);
        });
      },
      nb::arg("x"), nb::arg("weight") = nb::none(), nb::arg("bias") = nb::none(),
      nb::arg("eps") = 1e-5F, nb::kw_only(), nb::arg("stream") = nb::none(),
      "Layer norm over the last dimension.");
  def_unary(ops, "transpose", &kreg::ops::transpose,
            "The transpose of a 2-D array, as a new row-major array (any dtype).");
  def_unary(ops, "permute021", &kreg::ops::permute021,
            "out[b][j][i] = x[b][i][j] for a 3-D array (any dtype).");
  ops.def(
      "rope",
      [](nb::handle x, nb::handle positions, float base, bool neox, nb::handle stream) {
        return run(x, stream, [&](const CallScope& c) {
          if (nb::isinstance<nb::int_>(positions)) {
            return kreg::ops::rope(c.input(x, "x"), nb::cast<std::int64_t>(positions), base, neox);
          }
          return kreg::ops::rope(c.input(x, "x"), c.input(positions, "positions"), base, neox);
        });
      },
      nb::arg("x"), nb::arg("positions"), nb::arg("base") = 10000.0F, nb::arg("neox") = false,
      nb::kw_only(), nb::arg("stream") = nb::none(),
      "Rotary position embedding of x (tokens x heads x head_dim). positions: int32 array, "
      "one per token, or an int offset (tokens at offset, offset + 1, ...).");
  ops.def(
      "softmax",
      [](nb::handle x, float scale, nb::handle mask, nb::handle stream) {
        return run(x, stream, [&](const CallScope& c) {
          return kreg::ops::softmax(c.input(x, "x"), scale, optional_input(c, mask, "mask"));
        });
      },
      nb::arg("x"), nb::arg("scale") = 1.0F, nb::arg("mask") = nb::none(), nb::kw_only(),
      nb::arg("stream") = nb::none(), "Row softmax of x * scale + mask over the last dimension.");
  ops.def(
      "gelu",
      [](nb::handle x, bool tanh, nb::handle stream) {
        return run(x, stream,
                   [&](const CallScope& c) { return kreg::ops::gelu(c.input(x, "x"), tanh); });
      },
      nb::arg("x"), nb::arg("tanh_approximation") = false, nb::kw_only(),
      nb::arg("stream") = nb::none(), "GELU, exact (erf) or with the tanh approximation.");
  ops.def(
      "matmul",
      [](nb::handle a, nb::handle b, nb::handle bias, std::string_view epilogue, nb::handle other,
         nb::handle out_dtype, nb::handle stream) {
        kreg::ops::MatmulOptions options;
        if (!out_dtype.is_none()) options.out_dtype = to_dtype(out_dtype, "matmul");
        options.epilogue = epilogue_named(epilogue);
        return run(a, stream, [&](const CallScope& c) {
          options.bias = optional_input(c, bias, "bias");
          options.other = optional_input(c, other, "other");
          return kreg::ops::matmul(c.input(a, "a"), c.input(b, "b"), options);
        });
      },
      nb::arg("a"), nb::arg("b"), nb::kw_only(), nb::arg("bias") = nb::none(),
      nb::arg("epilogue") = "none", nb::arg("other") = nb::none(),
      nb::arg("out_dtype") = nb::none(), nb::arg("stream") = nb::none(),
      "a @ b on tensor cores: a [..., m, k] and b [k, n], float16 or bfloat16 (a transposed "
      "view, such as a linear layer's weight.t(), is read in place). bias: [n]; epilogue: "
      "'none', 'gelu', 'gelu_tanh', 'silu', 'silu_gate' (silu(x) * other) or 'residual' "
      "(x + other), with other of the result's shape; out_dtype: a's dtype or float32. Returns "
      "[..., n].");
  ops.def(
      "quantize",
      [](nb::handle w, int group_size, int bits, nb::handle stream) {
        return run(w, stream, [&](const CallScope& c) {
          return kreg::ops::quantize(c.input(w, "w"), group_size, bits);
        });
      },
      nb::arg("w"), nb::arg("group_size") = 64, nb::arg("bits") = 4, nb::kw_only(),
      nb::arg("stream") = nb::none(),
      "MLX's affine quantization of w [n, k] (float32, float16 or bfloat16): returns (w_q, "
      "scales, biases) as mx.quantize does, w_q [n, k * bits / 32] uint32 and scales and "
      "biases [n, k / group_size] in w's dtype. group_size 32, 64 or 128; bits 4 or 8.");
  ops.def(
      "dequantize",
      [](nb::handle w_q, nb::handle scales, nb::handle biases, int group_size, int bits,
         nb::handle stream) {
        return run(w_q, stream, [&](const CallScope& c) {
          return kreg::ops::dequantize({c.input(w_q, "w_q"), c.input(scales, "scales"),
                                        c.input(biases, "biases"), group_size, bits});
        });
      },
      nb::arg("w_q"), nb::arg("scales"), nb::arg("biases"), nb::arg("group_size") = 64,
      nb::arg("bits") = 4, nb::kw_only(), nb::arg("stream") = nb::none(),
      "The [n, k] matrix that quantize's (w_q, scales, biases) stand for, in the scales' dtype.");
  ops.def(
      "quantized_matmul",
      [](nb::handle x, nb::handle w_q, nb::handle scales, nb::handle biases, bool transpose,
         int group_size, int bits, nb::handle bias, nb::handle stream) {
        if (!transpose) {
          throw kreg::Error(kreg::ErrorCode::InvalidArgument,
                            "ops::quantized_matmul: only transpose=True (x @ w.T) is supported");
        }
        return run(x, stream, [&](const CallScope& c) {
          return kreg::ops::quantized_matmul(c.input(x, "x"),
                                             {c.input(w_q, "w_q"), c.input(scales, "scales"),
                                              c.input(biases, "biases"), group_size, bits},
                                             optional_input(c, bias, "bias"));
        });
      },
      nb::arg("x"), nb::arg("w_q"), nb::arg("scales"), nb::arg("biases"),
      nb::arg("transpose") = true, nb::arg("group_size") = 64, nb::arg("bits") = 4, nb::kw_only(),
      nb::arg("bias") = nb::none(), nb::arg("stream") = nb::none(),
      "x @ w.T with w in MLX's affine format (quantize's w_q, scales, biases), as "
      "mx.quantized_matmul computes it: x [..., m, k] in the scales' dtype (float16 or "
      "bfloat16), result [..., m, n]; bias: a linear layer's [n].");
  ops.def(
      "ggml_matmul",
      [](nb::handle x, nb::handle blocks, std::string_view format, nb::handle stream) {
        kreg::ops::GgmlFormat f = kreg::ops::GgmlFormat::Q8_0;
        if (format == "Q4_K" || format == "q4_k") {
          f = kreg::ops::GgmlFormat::Q4_K;
        } else if (format != "Q8_0" && format != "q8_0") {
          throw kreg::Error(
              kreg::ErrorCode::InvalidArgument,
              "ops::ggml_matmul: unknown GGML format '" + std::string(format) + "' (Q8_0 or Q4_K)");
        }
        return run(x, stream, [&](const CallScope& c) {
          return kreg::ops::ggml_matmul(c.input(x, "x"), {c.input(blocks, "blocks"), f});
        });
      },
      nb::arg("x"), nb::arg("blocks"), nb::arg("format"), nb::kw_only(),
      nb::arg("stream") = nb::none(),
      "x @ w.T with w [n, k] in one of llama.cpp's block formats, as a GGUF tensor stores it: "
      "blocks [n, bytes a row] uint8, format 'Q8_0' (34 bytes a block of 32 weights) or 'Q4_K' "
      "(144 bytes a block of 256); x [..., m, k] float16 or bfloat16, result [..., m, n].");
  ops.def(
      "moe_route",
      [](nb::handle logits, int top_k, bool renormalize, nb::handle stream) {
        return run(logits, stream, [&](const CallScope& c) {
          const kreg::ops::MoeRouting r =
              kreg::ops::moe_route(c.input(logits, "logits"), top_k, renormalize);
          return std::pair{r.weights, r.ids};
        });
      },
      nb::arg("logits"), nb::arg("top_k"), nb::arg("renormalize") = true, nb::kw_only(),
      nb::arg("stream") = nb::none(),
      "A mixture-of-experts router: softmax over each row of logits [tokens, experts] (at most "
      "1024), then its top_k (1 to 8) probabilities, best first, the lower expert on a tie; "
      "with renormalize, divided by their sum. Returns (weights float32, ids int32), each "
      "[tokens, top_k].");
  ops.def(
      "moe_experts",
      [](nb::handle x, nb::handle weights, nb::handle ids, nb::handle gate, nb::handle up,
         nb::handle down, nb::handle stream) {
        return run(x, stream, [&](const CallScope& c) {
          return kreg::ops::moe_experts(
              c.input(x, "x"), c.input(weights, "weights"), c.input(ids, "ids"),
              {c.input(gate, "gate"), c.input(up, "up"), c.input(down, "down")});
        });
      },
      nb::arg("x"), nb::arg("weights"), nb::arg("ids"), nb::arg("gate"), nb::arg("up"),
      nb::arg("down"), nb::kw_only(), nb::arg("stream") = nb::none(),
      "The experts of a SwiGLU mixture-of-experts layer for a given routing: x [tokens, hidden] "
      "(float16 or bfloat16), weights [tokens, top_k] float32, ids [tokens, top_k] int32, gate "
      "and up [experts, ffn, hidden], down [experts, hidden, ffn]. Returns [tokens, hidden]: "
      "each token's sum of weights[j] * down[e] (silu(gate[e] x) * up[e] x) over its choices "
      "e = ids[j]; an id outside the experts adds nothing.");
  ops.def(
      "moe",
      [](nb::handle x, nb::handle router_logits, nb::handle gate, nb::handle up, nb::handle down,
         int top_k, bool renormalize, nb::handle stream) {
        return run(x, stream, [&](const CallScope& c) {
          return kreg::ops::moe(c.input(x, "x"), c.input(router_logits, "router_logits"),
                                {c.input(gate, "gate"), c.input(up, "up"), c.input(down, "down")},
                                {top_k, renormalize});
        });
      },
      nb::arg("x"), nb::arg("router_logits"), nb::arg("gate"), nb::arg("up"), nb::arg("down"),
      nb::arg("top_k") = 8, nb::arg("renormalize") = true, nb::kw_only(),
      nb::arg("stream") = nb::none(),
      "A whole mixture-of-experts layer from the router's logits: moe_route, then moe_experts.");
  ops.def(
      "attention",
      [](nb::handle q, nb::handle k, nb::handle v, nb::handle cu_seqlens_q, nb::handle cu_seqlens_k,
         bool causal, std::optional<float> scale, float soft_cap, int window_left, nb::handle mask,
         nb::handle stream) {
        return run(q, stream, [&](const CallScope& c) {
          kreg::ops::AttentionOptions options;
          options.scale = scale;
          options.causal = causal;
          options.soft_cap = soft_cap;
          options.window_left = window_left;
          if (!mask.is_none()) options.mask = c.input(mask, "mask");
          if (cu_seqlens_q.is_none() != cu_seqlens_k.is_none()) {
            throw kreg::Error(kreg::ErrorCode::InvalidArgument,
                              "ops::attention: give both cu_seqlens_q and cu_seqlens_k, or "
                              "neither");
          }
          if (cu_seqlens_q.is_none()) {
            return kreg::ops::attention(c.input(q, "q"), c.input(k, "k"), c.input(v, "v"), options);
          }
          return kreg::ops::attention(c.input(q, "q"), c.input(k, "k"), c.input(v, "v"),
                                      c.input(cu_seqlens_q, "cu_seqlens_q"),
                                      c.input(cu_seqlens_k, "cu_seqlens_k"), options);
        });
      },
      nb::arg("q"), nb::arg("k"), nb::arg("v"), nb::arg("cu_seqlens_q") = nb::none(),
      nb::arg("cu_seqlens_k") = nb::none(), nb::kw_only(), nb::arg("causal") = false,
      nb::arg("scale") = nb::none(), nb::arg("soft_cap") = 0.0F, nb::arg("window_left") = -1,
      nb::arg("mask") = nb::none(), nb::arg("stream") = nb::none(),
      "Prefill attention (flash attention, forward) on tensor cores. q: [batch, len_q, "
      "q_heads, head_dim] float16 or bfloat16, k, v: [batch, len_k, kv_heads, head_dim]; or, "
      "with cu_seqlens_q and cu_seqlens_k (int32 [batch + 1]), sequences packed as [tokens, "
      "heads, head_dim]. causal aligns the last query with the last key; scale defaults to "
      "1/sqrt(head_dim); soft_cap > 0 caps scores at soft_cap * tanh(s / soft_cap); "
      "window_left >= 0 hides keys more than window_left before a query's position; mask is "
      "added (q's dtype) or says which keys a query sees (bool). Returns q's shape.");
  ops.def(
      "decode_attention",
      [](nb::handle q, nb::handle k_cache, nb::handle v_cache, nb::handle block_table,
         nb::handle seq_lens, std::optional<float> scale, float soft_cap, int window_left,
         int splits, nb::handle stream) {
        return run(q, stream, [&](const CallScope& c) {
          kreg::ops::DecodeAttentionOptions options;
          options.scale = scale;
          options.soft_cap = soft_cap;
          options.window_left = window_left;
          options.splits = splits;
          return kreg::ops::decode_attention(
              c.input(q, "q"), c.input(k_cache, "k_cache"), c.input(v_cache, "v_cache"),
              c.input(block_table, "block_table"), c.input(seq_lens, "seq_lens"), options);
        });
      },
      nb::arg("q"), nb::arg("k_cache"), nb::arg("v_cache"), nb::arg("block_table"),
      nb::arg("seq_lens"), nb::kw_only(), nb::arg("scale") = nb::none(), nb::arg("soft_cap") = 0.0F,
      nb::arg("window_left") = -1, nb::arg("splits") = 0, nb::arg("stream") = nb::none(),
      "Attention of one new query token per sequence against a paged KV cache. q: [batch, "
      "q_heads, head_dim] float16 or bfloat16; k_cache, v_cache: [pages, page_size, kv_heads, "
      "head_dim]; block_table: int32 [batch, max_pages]; seq_lens: int32 [batch], keys per "
      "sequence. scale defaults to 1/sqrt(head_dim); soft_cap > 0 caps scores at soft_cap * "
      "tanh(s / soft_cap); window_left >= 0 sees only the window_left + 1 newest keys; splits "
      "(1 to 256) caps the pieces a sequence's keys are cut into, 0 lets kreg choose. Returns "
      "[batch, q_heads, head_dim].");
  ops.def(
      "kv_append",
      [](nb::handle k_cache, nb::handle v_cache, nb::handle k, nb::handle v, nb::handle slots,
         nb::handle rope_positions, float rope_base, bool rope_neox, nb::handle stream) {
        for (const auto& [name, cache] :
             {std::pair{"k_cache", k_cache}, std::pair{"v_cache", v_cache}}) {
          if (!writable_on_gpu(cache)) {
            throw kreg::Error(kreg::ErrorCode::InvalidArgument,
                              std::string("ops::kv_append: ") + name +
                                  " must be a GPU array that can be written in place (a torch "
                                  "or CuPy tensor, or a kreg.Array), not a " +
                                  nb::type_name(cache.type()).c_str());
          }
        }
        CallScope c(k_cache, stream);
        kreg::ops::KvAppendOptions options;
        options.rope_positions = optional_input(c, rope_positions, "rope_positions");
        options.rope_base = rope_base;
        options.rope_neox = rope_neox;
        const Array k_rows = c.input(k, "k");
        const Array v_rows = c.input(v, "v");
        const Array slot_array = c.input(slots, "slots");
        const Array caches[] = {c.input(k_cache, "k_cache"), c.input(v_cache, "v_cache")};
        nb::gil_scoped_release release;
        kreg::ops::kv_append(caches[0], caches[1], k_rows, v_rows, slot_array, options);
      },
      nb::arg("k_cache"), nb::arg("v_cache"), nb::arg("k"), nb::arg("v"), nb::arg("slots"),
      nb::kw_only(), nb::arg("rope_positions") = nb::none(), nb::arg("rope_base") = 10000.0F,
      nb::arg("rope_neox") = false, nb::arg("stream") = nb::none(),
      "Writes new tokens' keys and values into a paged KV cache, in place. k_cache, v_cache: "
      "[pages, page_size, kv_heads, head_dim] float16 or bfloat16 GPU tensors (contiguous); k, "
      "v: [tokens, kv_heads, head_dim]; slots: int32 or int64 [tokens], token t goes to row "
      "slots[t] % page_size of page slots[t] // page_size, and a slot outside the cache (-1) "
      "writes nothing. With rope_positions (int32 [tokens]), K is stored turned by RoPE as "
      "rope(k, rope_positions, rope_base, rope_neox) turns it. Queued on the caches' stream; "
      "returns None.");
  def_unary(ops, "row_sum", &kreg::ops::row_sum, "Sum over the last dimension, float32.");
  def_unary(ops, "row_max", &kreg::ops::row_max, "Maximum over the last dimension, float32.");
  def_unary(ops, "argmax", &kreg::ops::argmax,
            "Index of the largest element of each row (the first on a tie), int64.");
}

}  // namespace kreg::python
