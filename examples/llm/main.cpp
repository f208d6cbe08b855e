// A small decoder on kreg alone (examples/llm/decoder.hpp): random weights from a seed, one
// prefill of a prompt and a run of decode steps, timed from the first call on; optionally
// prewarming the kernels a manifest lists before the first prefill, and writing the weights,
// tokens and logits for examples/llm/check_transformers.py to compare with transformers.
//
//   example_llm [--model llama|qwen3_moe] [--prompt N] [--decode N] [--runs N] [--seed S]
//               [--bits 4|8|16] [--graph 0|1] [--manifest FILE] [--dump DIR]
//
// --bits 4 or 8: the linear layers' weights (attention, dense MLP, LM head) quantized at load
// into MLX's affine format, their products on `quantized_matmul`; --dump then writes them
// dequantized, the weights those products use.
//
// --graph 1: decode steps after the first replay a CUDA graph of one step (captured at the
// second), so that a step's launches cost one graph launch.
//
// --manifest FILE: if FILE exists, prewarm what it lists (in parallel, from the caches) while
// the weights are made, as an engine does in its model-load window; if not, write it after the
// run. The decode steps take predetermined tokens, not the model's choices, so that another
// implementation can be fed the same ones.
//
// Without a GPU the example says so and exits.
#include "decoder.hpp"

#include <kreg/kreg.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

struct Options {
  std::string model = "llama";
  int prompt = 512;
  int decode = 32;
  int runs = 10;
  unsigned seed = 1;
  int bits = 16;
  bool graph = false;
  std::string manifest;
  std::string dump;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (i + 1 >= argc) throw std::invalid_argument("missing the value of " + arg);
    const std::string value = argv[++i];
    if (arg == "--model") {
      o.model = value;
    } else if (arg == "--prompt") {
      o.prompt = std::stoi(value);
    } else if (arg == "--decode") {
      o.decode = std::stoi(value);
    } else if (arg == "--runs") {
      o.runs = std::stoi(value);
    } else if (arg == "--seed") {
      o.seed = static_cast<unsigned>(std::stoul(value));
    } else if (arg == "--bits") {
      o.bits = std::stoi(value);
    } else if (arg == "--graph") {
      if (value != "0" && value != "1") throw std::invalid_argument("--graph is 0 or 1");
      o.graph = value == "1";
    } else if (arg == "--manifest") {
      o.manifest = value;
    } else if (arg == "--dump") {
      o.dump = value;
    } else {
      throw std::invalid_argument("unknown option " + arg);
    }
  }
  if (o.model != "llama" && o.model != "qwen3_moe") {
    throw std::invalid_argument("--model is llama or qwen3_moe");
  }
  if (o.bits != 4 && o.bits != 8 && o.bits != 16)
    throw std::invalid_argument("--bits is 4, 8 or 16");
  return o;
}

void write_bytes(const std::filesystem::path& path, const void* data, std::size_t bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(bytes));
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

std::string json_ints(const std::vector<int>& v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

// The weights (raw bfloat16, row-major), the tokens and the logits, with an index.
void dump(const std::filesystem::path& dir, const llm::Decoder& model,
          const std::vector<int>& prompt, const std::vector<int>& steps,
          const std::vector<float>& logits) {
  std::filesystem::create_directories(dir);
  const llm::Config& c = model.config();
  std::string index = "{\n  \"model\": \"" + c.name + "\",\n  \"bits\": " + std::to_string(c.bits) +
                      ",\n  \"config\": {";
  index += "\"vocab\": " + std::to_string(c.vocab) + ", \"hidden\": " + std::to_string(c.hidden) +
           ", \"layers\": " + std::to_string(c.layers) + ", \"heads\": " + std::to_string(c.heads) +
           ", \"kv_heads\": " + std::to_string(c.kv_heads) +
           ", \"head_dim\": " + std::to_string(c.head_dim) + ", \"ffn\": " + std::to_string(c.ffn) +
           ", \"experts\": " + std::to_string(c.experts) +
           ", \"top_k\": " + std::to_string(c.top_k) +
           ", \"moe_ffn\": " + std::to_string(c.moe_ffn) +
           ", \"rope_theta\": " + std::to_string(c.rope_theta) +
           ", \"eps\": " + std::to_string(c.eps) + "},\n";
  index += "  \"prompt\": " + json_ints(prompt) + ",\n  \"decode\": " + json_ints(steps) +
           ",\n  \"logits\": \"logits.f32\",\n  \"weights\": [\n";
  bool first = true;
  for (const auto& [name, w] : model.named_weights()) {
    const std::vector<kreg::bfloat16> values = w.to_vector<kreg::bfloat16>();
    write_bytes(dir / (name + ".bf16"), values.data(), values.size() * sizeof(kreg::bfloat16));
    std::string shape;
    for (std::int64_t d : w.shape()) shape += (shape.empty() ? "" : ", ") + std::to_string(d);
    index += std::string(first ? "" : ",\n") + "    {\"name\": \"" + name + "\", \"shape\": [" +
             shape + "]}";
    first = false;
  }
  index += "\n  ]\n}\n";
  write_bytes(dir / "logits.f32", logits.data(), logits.size() * sizeof(float));
  write_bytes(dir / "index.json", index.data(), index.size());
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Options o = parse(argc, argv);
    if (kreg::devices().empty()) {
      std::printf("no GPU: the decoder needs one to run; skipped\n");
      return 0;
    }
    const auto process_start = Clock::now();
    llm::Config config = o.model == "llama" ? llm::Config::llama() : llm::Config::qwen3_moe();
    config.max_tokens = std::max(config.max_tokens, o.prompt + o.decode);
    config.bits = o.bits;
    kreg::Registry& reg = kreg::device_registry(0);
    // Everything on a stream of the program's own, which a graph capture can take (not the
    // legacy default stream) and whose arrays a captured step may read.
    const kreg::Stream own_stream(0);
    const kreg::StreamScope scope(own_stream);
    const bool prewarming = !o.manifest.empty() && std::filesystem::exists(o.manifest);

    // The model-load window: weights made on the GPU, the manifest's kernels prewarmed.
    const auto load_start = Clock::now();
    llm::Decoder model(config, o.seed);
    std::size_t prewarmed = 0;
    if (prewarming) prewarmed = reg.prewarm_manifest(o.manifest);
    const double prewarm_ms = ms_since(load_start);
    model.load();
    const double load_ms = ms_since(load_start);

    std::mt19937 rng(o.seed);
    std::uniform_int_distribution<int> token(0, config.vocab - 1);
    std::vector<int> prompt(static_cast<std::size_t>(o.prompt));
    std::vector<int> steps(static_cast<std::size_t>(o.decode));
    for (int& t : prompt) t = token(rng);
    for (int& t : steps) t = token(rng);

    const kreg::Stream& stream = kreg::current_stream();
    const auto run_prefill = [&]() {
      const auto start = Clock::now();
      model.prefill(prompt).eval();
      stream.synchronize();
      return ms_since(start);
    };
    const kreg::Stats before = reg.stats();
    const double first_prefill = run_prefill();
    const kreg::Stats after = reg.stats();
    std::vector<double> warm;
    for (int r = 0; r < o.runs; ++r) warm.push_back(run_prefill());

    // A last prefill, then the decode steps; with --dump, the logits of each as floats.
    std::vector<float> logits;
    const auto keep = [&](const kreg::Array& l) {
      if (o.dump.empty()) return;
      const std::vector<float> v = kreg::ops::cast(l, kreg::Dtype::Float32).to_vector<float>();
      logits.insert(logits.end(), v.begin(), v.end());
    };
    keep(model.prefill(prompt));
    std::vector<double> step_ms;
    for (int id : steps) {
      const auto start = Clock::now();
      const kreg::Array l = o.graph ? model.decode_replayed(id) : model.decode(id);
      l.eval();
      stream.synchronize();
      step_ms.push_back(ms_since(start));
      keep(l);
    }
    if (!o.dump.empty()) dump(o.dump, model, prompt, steps, logits);
    if (!o.manifest.empty() && !prewarming) reg.write_manifest(o.manifest);

    const double decode_ms =
        step_ms.size() > 1 ? median(std::vector<double>(step_ms.begin() + 1, step_ms.end())) : 0.0;
    std::printf("%s: %d layers, hidden %d, %s linear weights, %d-token prefill, %d decode steps\n",
                config.name.c_str(), config.layers, config.hidden,
                config.bits == 16  ? "bfloat16"
                : config.bits == 8 ? "8-bit"
                                   : "4-bit",
                o.prompt, o.decode);
    std::printf("  process start to weights ready  %9.1f ms (prewarm of %zu kernels: %.1f ms)\n",
                ms_since(process_start) - ms_since(load_start) + load_ms, prewarmed, prewarm_ms);
    std::printf("  first prefill                   %9.2f ms (%llu compiles, %llu loads in it)\n",
                first_prefill, static_cast<unsigned long long>(after.compiles - before.compiles),
                static_cast<unsigned long long>(after.precompiled_hits + after.disk_hits -
                                                before.precompiled_hits - before.disk_hits));
    std::printf("  warm prefill, median of %d       %9.2f ms (first / warm %.2fx)\n", o.runs,
                median(warm), first_prefill / median(warm));
    std::printf("  first decode step               %9.2f ms\n", step_ms.empty() ? 0.0 : step_ms[0]);
    std::printf("  decode step, median             %9.2f ms (%.0f tokens/s)%s\n", decode_ms,
                decode_ms > 0 ? 1e3 / decode_ms : 0.0,
                o.graph ? ", replayed from a CUDA graph from the third step" : "");
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "example_llm: %s\n", e.what());
    return 1;
  }
}
