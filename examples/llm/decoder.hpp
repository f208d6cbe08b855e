#pragma once
// A small decoder-only transformer built from kreg's ops alone: a Llama-style dense model, or a
// Qwen3-MoE-style one (per-head q/k RMS norms, a 64-expert top-8 SwiGLU mixture in place of
// the MLP). bfloat16 weights made on the GPU from a seed, the linear layers' optionally
// quantized to 4 or 8 bits at load; prefill and decode of one sequence against a paged KV cache.

#include <kreg/kreg.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace llm {

struct Config {
  std::string name;
  int vocab = 32000;
  int hidden = 2048;
  int layers = 4;
  int heads = 16;
  int kv_heads = 4;
  int head_dim = 128;
  int ffn = 8192;   // the dense MLP's width (no experts)
  int experts = 0;  // > 0: a mixture of experts in each layer
  int top_k = 0;
  int moe_ffn = 0;  // each expert's width
  bool qk_norm = false;
  float rope_theta = 500000.0F;
  float eps = 1e-6F;
  int page_size = 64;
  int max_tokens = 1024;
  // 16: bfloat16 linear weights. 4 or 8: the attention projections, the dense MLP and the LM
  // head in MLX's affine format (groups of 64), quantized at load; the embedding, norms,
  // router and experts stay bfloat16.
  int bits = 16;

  static Config llama();
  static Config qwen3_moe();
};

// A linear layer's weight [out, in]: bfloat16, or quantized (then `dense` is empty).
struct Linear {
  kreg::Array dense;
  std::optional<kreg::ops::QuantizedWeight> quantized;

  // The bfloat16 [out, in] matrix it stands for: the quantized one dequantized, exactly the
  // weights the quantized products use.
  kreg::Array weight() const;
};

struct Layer {
  kreg::Array input_norm, post_norm;
  Linear wq, wk, wv, wo;
  kreg::Array q_norm, k_norm;     // qk_norm only
  Linear gate, up, down;          // the dense MLP
  kreg::Array router;             // [experts, hidden]
  kreg::ops::MoeExperts experts;  // [experts, moe_ffn, hidden] x2, [experts, hidden, moe_ffn]
};

class Decoder {
 public:
  // Weights made on the GPU from `seed` (queued; evaluated by `load`).
  Decoder(Config config, std::uint32_t seed);

  // Evaluates the weights and the KV cache (quantizing the linear weights where
  // config.bits asks), and waits for them.
  void load();

  const Config& config() const { return config_; }

  // Prefill of a new sequence (the cache is emptied first) at positions 0 to ids.size() - 1.
  // Returns the logits [tokens, vocab] of every position, or [1, vocab] of the last.
  kreg::Array prefill(const std::vector<int>& ids, bool every_position = false);

  // One decode step: the token at the next position. Returns its logits [1, vocab].
  kreg::Array decode(int id);

  // The same step replayed from a CUDA graph of it, captured at the first call (which runs
  // the step eagerly first, so that every kernel is ready): a step's ~60 launches become one.
  // The step's token and positions are read from device arrays, written before each replay.
  // The logits returned are the graph's and hold until the next call: read them before it.
  // The model must have been made, loaded and prefilled on the current StreamScope's stream,
  // a stream of the program's own: a capture cannot take the legacy default stream, nor read
  // arrays another stream made.
  kreg::Array decode_replayed(int id);

  int position() const { return position_; }

  // Every weight by its name in transformers' checkpoints (the experts stacked, as
  // "mlp.experts.{gate,up,down}"), bfloat16; quantized ones dequantized.
  std::vector<std::pair<std::string, kreg::Array>> named_weights() const;

 private:
  // One layer over `x` [tokens, hidden] at `positions` (int32 [tokens]); decode reads the
  // cache, prefill attends over its own tokens. Returns the new residual stream.
  // With `seq_lens` (int32 [1]) the layer decodes one token against the cache.
  kreg::Array layer(int index, const kreg::Array& x, const kreg::Array& positions, int tokens,
                    const std::optional<kreg::Array>& seq_lens);
  kreg::Array logits(const kreg::Array& x);
  // A decode step of token `id` (int32 [1]) at `positions` (int32 [1]), the sequence then
  // `seq_lens` (int32 [1]) long.
  kreg::Array decode_step(const kreg::Array& id, const kreg::Array& positions,
                          const kreg::Array& seq_lens);

  Config config_;
  std::vector<Layer> layers_;
  // Every linear weight, in a fixed order.
  std::vector<Linear*> linears();

  kreg::Array embed_, final_norm_;
  Linear lm_head_;
  std::vector<kreg::Array> k_cache_, v_cache_;  // per layer, [pages, page_size, kv_heads, d]
  kreg::Array block_table_;                     // int32 [1, pages]: page i is page i
  int position_ = 0;

  // decode_replayed's graph and what it reads and writes.
  struct StepGraph;
  std::shared_ptr<StepGraph> step_graph_;
};

}  // namespace llm
