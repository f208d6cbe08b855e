#include "decoder.hpp"

#include <cuda_runtime.h>

#include <cmath>
#include <functional>
#include <numeric>
#include <stdexcept>
#include <string>

namespace llm {
namespace {

using kreg::Array;
using kreg::Dtype;
namespace ops = kreg::ops;

// offset + scale * u, u uniform in [-1, 1) from a hash of the element's index and the seed,
// as bfloat16: weights made where they are used, in one pass.
Array uniform(kreg::Shape shape, std::uint32_t seed, float scale, float offset = 0.0F) {
  static const kreg::CustomKernel fill("llm_uniform", {"seed", "scale", "offset"}, {"out"}, R"(
    uint i = thread_position_in_grid.x;
    uint h = i * 0x9e3779b1u + seed * 0x85ebca77u;
    h ^= h >> 15;
    h *= 0x2c1b3c6du;
    h ^= h >> 12;
    h *= 0x297a2d39u;
    h ^= h >> 15;
    out[i] = bfloat16_t(offset + scale * ((float)(h >> 8) * (2.0f / 16777216.0f) - 1.0f));
  )");
  std::int64_t n = 1;
  for (std::int64_t d : shape) n *= d;
  return fill.apply({Array::from_data<std::uint32_t>({seed}, {}),
                     Array::from_data<float>({scale}, {}), Array::from_data<float>({offset}, {})},
                    {{std::move(shape), Dtype::BFloat16}}, kreg::Dim3{static_cast<unsigned>(n)},
                    kreg::Dim3{256})[0];
}

Array ints(const std::vector<int>& values) {
  return Array::from_data(values, {static_cast<std::int64_t>(values.size())});
}

void check(cudaError_t result, const char* what) {
  if (result != cudaSuccess) {
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(result));
  }
}

Array linear(const Array& x, const Array& w, const ops::MatmulOptions& options = {}) {
  return ops::matmul(x, w.transpose(), options);
}

// A quantized weight's product has no epilogue of its own: what matmul's would add follows as
// an op (rounded once more, to bfloat16, between the two).
Array linear(const Array& x, const Linear& w, const ops::MatmulOptions& options = {}) {
  if (!w.quantized) return linear(x, w.dense, options);
  Array y = ops::quantized_matmul(x, *w.quantized);
  switch (options.epilogue) {
    case ops::Epilogue::None: return y;
    case ops::Epilogue::Residual: return ops::add(y, *options.other);
    case ops::Epilogue::SiluGate: return ops::swiglu(y, *options.other);
    default: throw std::logic_error("the decoder uses no other epilogue");
  }
}

}  // namespace

Array Linear::weight() const {
  return quantized ? ops::dequantize(*quantized) : dense;
}

Config Config::llama() {
  Config c;
  c.name = "llama";
  return c;
}

Config Config::qwen3_moe() {
  Config c;
  c.name = "qwen3_moe";
  c.experts = 64;
  c.top_k = 8;
  c.moe_ffn = 768;
  c.qk_norm = true;
  c.rope_theta = 1000000.0F;
  return c;
}

Decoder::Decoder(Config config, std::uint32_t seed) : config_(std::move(config)) {
  const Config& c = config_;
  const std::int64_t h = c.hidden;
  const std::int64_t q_dim = std::int64_t{c.heads} * c.head_dim;
  const std::int64_t kv_dim = std::int64_t{c.kv_heads} * c.head_dim;
  if (c.bits != 4 && c.bits != 8 && c.bits != 16) {
    throw std::invalid_argument("bits is 4, 8 or 16, not " + std::to_string(c.bits));
  }
  std::uint32_t next = seed * 1000U;
  // Weights scaled by 1 / sqrt(fan-in), norms near 1, so activations stay near unit size.
  const auto weight = [&](kreg::Shape shape, std::int64_t fan_in) {
    return uniform(std::move(shape), next++, 1.7F / std::sqrt(static_cast<float>(fan_in)));
  };
  const auto norm = [&](std::int64_t n) { return uniform({n}, next++, 0.1F, 1.0F); };
  embed_ = uniform({c.vocab, h}, next++, 1.0F);
  for (int l = 0; l < c.layers; ++l) {
    Layer layer;
    layer.input_norm = norm(h);
    layer.wq.dense = weight({q_dim, h}, h);
    layer.wk.dense = weight({kv_dim, h}, h);
    layer.wv.dense = weight({kv_dim, h}, h);
    layer.wo.dense = weight({h, q_dim}, q_dim);
    layer.post_norm = norm(h);
    if (c.qk_norm) {
      layer.q_norm = norm(c.head_dim);
      layer.k_norm = norm(c.head_dim);
    }
    if (c.experts > 0) {
      // A router whose logits spread wide, as trained routers' do: an expert that rounding
      // ranks on the other side of the k-th (random weights make near-ties common) then
      // weighs little, so implementations that round differently stay comparable.
      layer.router = uniform({c.experts, h}, next++, 4 * 1.7F / std::sqrt(static_cast<float>(h)));
      layer.experts = {weight({c.experts, c.moe_ffn, h}, h), weight({c.experts, c.moe_ffn, h}, h),
                       weight({c.experts, h, c.moe_ffn}, c.moe_ffn)};
    } else {
      layer.gate.dense = weight({c.ffn, h}, h);
      layer.up.dense = weight({c.ffn, h}, h);
      layer.down.dense = weight({h, c.ffn}, c.ffn);
    }
    layers_.push_back(std::move(layer));
  }
  final_norm_ = norm(h);
  lm_head_.dense = weight({c.vocab, h}, h);

  const std::int64_t pages = (c.max_tokens + c.page_size - 1) / c.page_size;
  for (int l = 0; l < c.layers; ++l) {
    k_cache_.push_back(Array::empty({pages, c.page_size, c.kv_heads, c.head_dim}, Dtype::BFloat16));
    v_cache_.push_back(Array::empty({pages, c.page_size, c.kv_heads, c.head_dim}, Dtype::BFloat16));
  }
  std::vector<int> table(static_cast<std::size_t>(pages));
  std::iota(table.begin(), table.end(), 0);
  block_table_ = Array::from_data(table, {1, pages});
}

void Decoder::load() {
  std::vector<Array> all;
  for (auto& [name, w] : named_weights()) all.push_back(w);
  all.insert(all.end(), k_cache_.begin(), k_cache_.end());
  all.insert(all.end(), v_cache_.begin(), v_cache_.end());
  all.push_back(block_table_);
  kreg::eval(all);
  if (config_.bits != 16) {
    all.clear();
    for (Linear* l : linears()) {
      if (l->quantized) continue;  // loaded before
      l->quantized = ops::quantize(l->dense, 64, config_.bits);
      l->dense = Array();
      all.insert(all.end(), {l->quantized->weight, l->quantized->scales, l->quantized->biases});
    }
    kreg::eval(all);
  }
  kreg::current_stream().synchronize();
}

std::vector<Linear*> Decoder::linears() {
  std::vector<Linear*> out;
  for (Layer& w : layers_) {
    out.insert(out.end(), {&w.wq, &w.wk, &w.wv, &w.wo});
    if (config_.experts == 0) out.insert(out.end(), {&w.gate, &w.up, &w.down});
  }
  out.push_back(&lm_head_);
  return out;
}

std::vector<std::pair<std::string, Array>> Decoder::named_weights() const {
  std::vector<std::pair<std::string, Array>> out = {{"model.embed_tokens.weight", embed_}};
  for (std::size_t l = 0; l < layers_.size(); ++l) {
    const Layer& w = layers_[l];
    const std::string p = "model.layers." + std::to_string(l) + ".";
    out.emplace_back(p + "input_layernorm.weight", w.input_norm);
    out.emplace_back(p + "self_attn.q_proj.weight", w.wq.weight());
    out.emplace_back(p + "self_attn.k_proj.weight", w.wk.weight());
    out.emplace_back(p + "self_attn.v_proj.weight", w.wv.weight());
    out.emplace_back(p + "self_attn.o_proj.weight", w.wo.weight());
    if (config_.qk_norm) {
      out.emplace_back(p + "self_attn.q_norm.weight", w.q_norm);
      out.emplace_back(p + "self_attn.k_norm.weight", w.k_norm);
    }
    out.emplace_back(p + "post_attention_layernorm.weight", w.post_norm);
    if (config_.experts > 0) {
      out.emplace_back(p + "mlp.gate.weight", w.router);
      out.emplace_back(p + "mlp.experts.gate", w.experts.gate);
      out.emplace_back(p + "mlp.experts.up", w.experts.up);
      out.emplace_back(p + "mlp.experts.down", w.experts.down);
    } else {
      out.emplace_back(p + "mlp.gate_proj.weight", w.gate.weight());
      out.emplace_back(p + "mlp.up_proj.weight", w.up.weight());
      out.emplace_back(p + "mlp.down_proj.weight", w.down.weight());
    }
  }
  out.emplace_back("model.norm.weight", final_norm_);
  out.emplace_back("lm_head.weight", lm_head_.weight());
  return out;
}

Array Decoder::layer(int index, const Array& x, const Array& positions, int tokens,
                     const std::optional<Array>& seq_lens) {
  const bool decoding = seq_lens.has_value();
  const Config& c = config_;
  const Layer& w = layers_[static_cast<std::size_t>(index)];
  const Array n = ops::rms_norm(x, w.input_norm, c.eps);
  Array q = linear(n, w.wq).reshape({tokens, c.heads, c.head_dim});
  Array k = linear(n, w.wk).reshape({tokens, c.kv_heads, c.head_dim});
  const Array v = linear(n, w.wv).reshape({tokens, c.kv_heads, c.head_dim});
  if (c.qk_norm) {
    q = ops::rms_norm(q, w.q_norm, c.eps);
    k = ops::rms_norm(k, w.k_norm, c.eps);
  }
  q = ops::rope(q, positions, c.rope_theta, /*neox=*/true);
  Array o;
  if (decoding) {
    // K turns on its way into the cache; the pages hold positions 0 to position_.
    ops::KvAppendOptions append;
    append.rope_positions = positions;
    append.rope_base = c.rope_theta;
    append.rope_neox = true;
    ops::kv_append(k_cache_[index], v_cache_[index], k, v, positions, append);
    o = ops::decode_attention(q, k_cache_[index], v_cache_[index], block_table_, *seq_lens);
  } else {
    k = ops::rope(k, positions, c.rope_theta, /*neox=*/true);
    ops::kv_append(k_cache_[index], v_cache_[index], k, v, positions);
    ops::AttentionOptions causal;
    causal.causal = true;
    o = ops::attention(q.reshape({1, tokens, c.heads, c.head_dim}),
                       k.reshape({1, tokens, c.kv_heads, c.head_dim}),
                       v.reshape({1, tokens, c.kv_heads, c.head_dim}), causal);
  }
  ops::MatmulOptions residual;
  residual.epilogue = ops::Epilogue::Residual;
  residual.other = x;
  const Array h = linear(o.reshape({tokens, c.heads * c.head_dim}), w.wo, residual);

  const Array n2 = ops::rms_norm(h, w.post_norm, c.eps);
  if (c.experts > 0) {
    return ops::add(h, ops::moe(n2, linear(n2, w.router), w.experts, {c.top_k, true}));
  }
  ops::MatmulOptions gated;
  gated.epilogue = ops::Epilogue::SiluGate;
  gated.other = linear(n2, w.up);
  residual.other = h;
  return linear(linear(n2, w.gate, gated), w.down, residual);
}

Array Decoder::logits(const Array& x) {
  return linear(ops::rms_norm(x, final_norm_, config_.eps), lm_head_);
}

Array Decoder::prefill(const std::vector<int>& ids, bool every_position) {
  const auto tokens = static_cast<int>(ids.size());
  if (tokens < 1 || tokens > config_.max_tokens) {
    throw std::invalid_argument("prefill takes 1 to " + std::to_string(config_.max_tokens) +
                                " tokens");
  }
  std::vector<int> at(ids.size());
  std::iota(at.begin(), at.end(), 0);
  const Array positions = ints(at);  // and the cache slots: page i is page i
  Array x = ops::embedding(embed_, ints(ids));
  for (int l = 0; l < config_.layers; ++l) x = layer(l, x, positions, tokens, std::nullopt);
  position_ = tokens;
  return logits(every_position ? x : x.slice(0, tokens - 1, tokens));
}

Array Decoder::decode_step(const Array& id, const Array& positions, const Array& seq_lens) {
  Array x = ops::embedding(embed_, id);
  for (int l = 0; l < config_.layers; ++l) x = layer(l, x, positions, 1, seq_lens);
  return logits(x);
}

Array Decoder::decode(int id) {
  if (position_ >= config_.max_tokens) throw std::invalid_argument("the KV cache is full");
  Array out = decode_step(ints({id}), ints({position_}), ints({position_ + 1}));
  ++position_;
  return out;
}

struct Decoder::StepGraph {
  Array id, position, seq_len;  // int32 [1] each, on the GPU: what a replay reads
  Array logits;                 // the graph's output
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;

  StepGraph() = default;
  StepGraph(const StepGraph&) = delete;
  StepGraph& operator=(const StepGraph&) = delete;
  ~StepGraph() {
    logits = Array();  // the last launch's allocation, freed before its graph goes
    if (exec != nullptr) cudaGraphExecDestroy(exec);
    if (graph != nullptr) cudaGraphDestroy(graph);
  }

  // Captures `step` on `stream` and instantiates it.
  void capture(cudaStream_t stream, const std::function<Array()>& step) {
    check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal),
          "cudaStreamBeginCapture");
    try {
      logits = step();
      logits.eval();
    } catch (...) {
      cudaGraph_t broken = nullptr;
      if (cudaStreamEndCapture(stream, &broken) == cudaSuccess && broken != nullptr) {
        cudaGraphDestroy(broken);
      }
      throw;
    }
    check(cudaStreamEndCapture(stream, &graph), "cudaStreamEndCapture");
    // The logits are the graph's allocation: each launch frees the last one's and makes them
    // again, at the same address.
    check(cudaGraphInstantiateWithFlags(&exec, graph, cudaGraphInstantiateFlagAutoFreeOnLaunch),
          "cudaGraphInstantiateWithFlags");
  }
};

Array Decoder::decode_replayed(int id) {
  if (position_ >= config_.max_tokens) throw std::invalid_argument("the KV cache is full");
  const kreg::Stream stream = kreg::current_stream();
  auto* native = static_cast<cudaStream_t>(stream.native().native);
  if (native == nullptr) {
    throw std::logic_error(
        "decode_replayed needs a stream of the program's own (a StreamScope), not the legacy "
        "default stream");
  }
  const int values[3] = {id, position_, position_ + 1};
  if (!step_graph_) {
    // Eagerly first, on inputs that stay: every kernel becomes ready and the inputs reach the
    // GPU on this stream. The capture waits for the next call, so that a launch follows it.
    step_graph_ = std::make_shared<StepGraph>();
    StepGraph& g = *step_graph_;
    g.id = ints({values[0]});
    g.position = ints({values[1]});
    g.seq_len = ints({values[2]});
    Array eager = decode_step(g.id, g.position, g.seq_len);
    eager.eval();
    ++position_;
    return eager;
  }
  StepGraph& g = *step_graph_;
  // Ordered before the replay on the stream (from pageable memory: each copy is staged before
  // the call returns, so `values` may go).
  for (const auto& [to, from] :
       {std::pair{&g.id, &values[0]}, {&g.position, &values[1]}, {&g.seq_len, &values[2]}}) {
    check(cudaMemcpyAsync(to->data(), from, sizeof(int), cudaMemcpyHostToDevice, native),
          "cudaMemcpyAsync");
  }
  if (g.exec == nullptr) {
    g.capture(native, [&] { return decode_step(g.id, g.position, g.seq_len); });
  }
  check(cudaGraphLaunch(g.exec, native), "cudaGraphLaunch");
  ++position_;
  return g.logits;
}

}  // namespace llm
