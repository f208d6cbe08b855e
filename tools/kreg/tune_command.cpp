// kreg tune: tunes the built-in ops' launch choices (ops::tune) for the shapes a file lists,
// on this machine's GPU, and keeps the winners in the caches.
#include "commands.hpp"
#include "table.hpp"

#include <kreg/kreg.hpp>

#include <nlohmann/json.hpp>

#include <unistd.h>
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

namespace kreg::cli {
namespace {

// One line of the file: an op and its shape.
struct TuneShape {
  std::string op;
  Dtype dtype = Dtype::BFloat16;
  std::int64_t m = 0, n = 0, k = 0;      // matmul, quantized_matmul
  int bits = 4, group_size = 64;         // quantized_matmul
  std::int64_t tokens = 0, experts = 0;  // moe
  std::int64_t hidden = 0, ffn = 0;      // moe
  int top_k = 8;                         // moe
  std::int64_t batch = 1, len = 0;       // attention
  std::int64_t heads = 0, kv_heads = 0;  // attention
  std::int64_t head_dim = 128;           // attention
  bool causal = false;                   // attention
  std::string text;                      // as the report names it
};

[[noreturn]] void bad(std::size_t index, const std::string& why) {
  throw Error(ErrorCode::InvalidArgument, "tune file, shape " + std::to_string(index) + ": " + why);
}

std::int64_t positive(const nlohmann::json& item, const char* key, std::size_t index,
                      std::int64_t fallback = 0) {
  if (!item.contains(key)) {
    if (fallback > 0) return fallback;
    bad(index, std::string("\"") + key + "\" is missing");
  }
  if (!item[key].is_number_integer() || item[key].get<std::int64_t>() < 1) {
    bad(index, std::string("\"") + key + "\" must be a positive integer");
  }
  return item[key].get<std::int64_t>();
}

std::vector<TuneShape> read_shapes(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw Error(ErrorCode::InvalidArgument, "cannot read tune file " + path.string());
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw Error(ErrorCode::InvalidArgument,
                "tune file " + path.string() + " is not JSON: " + e.what());
  }
  if (!doc.is_array() || doc.empty()) {
    throw Error(ErrorCode::InvalidArgument,
                "tune file " + path.string() + " must be a non-empty JSON array of shapes");
  }
  std::vector<TuneShape> out;
  for (std::size_t i = 0; i < doc.size(); ++i) {
    const nlohmann::json& item = doc[i];
    if (!item.is_object() || !item.contains("op") || !item["op"].is_string()) {
      bad(i, "each shape is an object with an \"op\"");
    }
    TuneShape s;
    s.op = item["op"].get<std::string>();
    if (item.contains("dtype")) {
      const std::string d = item["dtype"].is_string() ? item["dtype"].get<std::string>() : "";
      if (d == "bfloat16") {
        s.dtype = Dtype::BFloat16;
      } else if (d == "float16") {
        s.dtype = Dtype::Float16;
      } else {
        bad(i, "\"dtype\" is bfloat16 or float16");
      }
    }
    if (s.op == "matmul" || s.op == "quantized_matmul") {
      s.m = positive(item, "m", i);
      s.n = positive(item, "n", i);
      s.k = positive(item, "k", i);
      s.text = std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
      if (s.op == "quantized_matmul") {
        s.bits = static_cast<int>(positive(item, "bits", i, 4));
        s.group_size = static_cast<int>(positive(item, "group_size", i, 64));
        if (s.k % s.group_size != 0) bad(i, "k must be a multiple of group_size");
        s.text += " " + std::to_string(s.bits) + "-bit g" + std::to_string(s.group_size);
      }
    } else if (s.op == "moe") {
      s.tokens = positive(item, "tokens", i);
      s.experts = positive(item, "experts", i);
      s.hidden = positive(item, "hidden", i);
      s.ffn = positive(item, "ffn", i);
      s.top_k = static_cast<int>(positive(item, "top_k", i, 8));
      s.text = std::to_string(s.tokens) + " tokens, " + std::to_string(s.experts) +
               " experts top " + std::to_string(s.top_k) + ", " + std::to_string(s.hidden) + "->" +
               std::to_string(s.ffn);
    } else if (s.op == "attention") {
      s.batch = positive(item, "batch", i, 1);
      s.len = positive(item, "len", i);
      s.heads = positive(item, "heads", i);
      s.kv_heads = positive(item, "kv_heads", i, s.heads);
      s.head_dim = positive(item, "head_dim", i, 128);
      if (item.contains("causal")) {
        if (!item["causal"].is_boolean()) bad(i, "\"causal\" is true or false");
        s.causal = item["causal"].get<bool>();
      }
      s.text = std::to_string(s.batch) + "x" + std::to_string(s.len) + ", " +
               std::to_string(s.heads) + "/" + std::to_string(s.kv_heads) + " heads of " +
               std::to_string(s.head_dim) + (s.causal ? ", causal" : "");
    } else {
      bad(i, "unknown op \"" + s.op + "\" (matmul, quantized_matmul, moe or attention)");
    }
    out.push_back(std::move(s));
  }
  return out;
}

// Values in [-scale, scale) of type T from a fixed-seed generator: timing needs ordinary
// numbers, not any particular ones. A block of 2^20 is drawn and repeated, since a MoE
// layer's experts are a billion values and drawing each costs seconds.
template <class T>
Array random_of(Shape shape, float scale, std::uint64_t seed) {
  std::int64_t count = 1;
  for (const std::int64_t d : shape) count *= d;
  std::vector<T> values(static_cast<std::size_t>(count));
  const std::size_t block = std::min<std::size_t>(values.size(), std::size_t{1} << 20);
  std::uint64_t state = seed * 0x9E3779B97F4A7C15ULL + 1;
  for (std::size_t i = 0; i < block; ++i) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    values[i] = T(scale * (static_cast<float>(state >> 40) / static_cast<float>(1 << 23) - 1.0F));
  }
  for (std::size_t at = block; at < values.size(); at += block) {
    std::copy_n(values.begin(), std::min(block, values.size() - at), values.begin() + at);
  }
  return Array::from_data(values, std::move(shape));
}

Array random_array(Shape shape, Dtype dtype, float scale, std::uint64_t seed) {
  switch (dtype) {
    case Dtype::BFloat16: return random_of<bfloat16>(std::move(shape), scale, seed);
    case Dtype::Float16: return random_of<half>(std::move(shape), scale, seed);
    default: return random_of<float>(std::move(shape), scale, seed);
  }
}

Array evaluated(Array a) {
  a.eval();
  return a;
}

// The call ops::tune times for one shape, with its inputs made once.
std::function<void()> make_call(const TuneShape& s) {
  if (s.op == "matmul") {
    const Array a = evaluated(random_array({s.m, s.k}, s.dtype, 1.0F, 1));
    const Array w = evaluated(random_array({s.n, s.k}, s.dtype, 0.05F, 2));
    return [a, w] { ops::matmul(a, w.transpose()).eval(); };
  }
  if (s.op == "quantized_matmul") {
    const Array x = evaluated(random_array({s.m, s.k}, s.dtype, 1.0F, 1));
    const ops::QuantizedWeight w =
        ops::quantize(random_array({s.n, s.k}, s.dtype, 0.05F, 2), s.group_size, s.bits);
    eval({w.weight, w.scales, w.biases});
    return [x, w] { ops::quantized_matmul(x, w).eval(); };
  }
  if (s.op == "attention") {
    const Array q = evaluated(random_array({s.batch, s.len, s.heads, s.head_dim}, s.dtype, 1, 1));
    const Array k =
        evaluated(random_array({s.batch, s.len, s.kv_heads, s.head_dim}, s.dtype, 1, 2));
    const Array v =
        evaluated(random_array({s.batch, s.len, s.kv_heads, s.head_dim}, s.dtype, 1, 3));
    ops::AttentionOptions options;
    options.causal = s.causal;
    return [q, k, v, options] { ops::attention(q, k, v, options).eval(); };
  }
  const Array x = evaluated(random_array({s.tokens, s.hidden}, s.dtype, 1.0F, 1));
  const Array logits = evaluated(random_array({s.tokens, s.experts}, Dtype::Float32, 4.0F, 2));
  const ops::MoeExperts experts{
      evaluated(random_array({s.experts, s.ffn, s.hidden}, s.dtype, 0.05F, 3)),
      evaluated(random_array({s.experts, s.ffn, s.hidden}, s.dtype, 0.05F, 4)),
      evaluated(random_array({s.experts, s.hidden, s.ffn}, s.dtype, 0.05F, 5))};
  ops::MoeOptions options;
  options.top_k = s.top_k;
  return [x, logits, experts, options] { ops::moe(x, logits, experts, options).eval(); };
}

std::string constants_text(const Constants& c) {
  std::string out;
  for (const auto& [index, value] : c.ints) {
    out += (out.empty() ? "" : " ") + std::to_string(index) + "=" + std::to_string(value);
  }
  return out;
}

}  // namespace

int tune(const TuneCommandOptions& options) {
  const std::vector<TuneShape> shapes = read_shapes(options.file);
  TuneOptions tune_options;
  tune_options.warmup = options.warmup;
  tune_options.repeats = options.repeats;
  const bool progress = !options.json && isatty(STDERR_FILENO) != 0;
  nlohmann::json report = nlohmann::json::array();
  Table table(
      {"op", "shape", "kernel", "bucket", "rule (us)", "winner", "winner (us)", "gain", "timed"});
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    const TuneShape& s = shapes[i];
    if (progress) {
      std::cerr << "\r[" << i + 1 << "/" << shapes.size() << "] " << s.op << " " << s.text
                << std::string(20, ' ') << std::flush;
    }
    const auto start = std::chrono::steady_clock::now();
    std::vector<ops::OpTuning> tunings;
    try {
      tunings = ops::tune(make_call(s), tune_options);
    } catch (const Error& e) {
      if (e.code() != ErrorCode::NoDevice) throw;
      throw Error(ErrorCode::NoDevice,
                  "kreg tune times kernels on a GPU: " + std::string(e.message()));
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    for (const ops::OpTuning& t : tunings) {
      const TuneResult::Candidate& rule = t.result.candidates.front();
      nlohmann::json candidates = nlohmann::json::array();
      for (const TuneResult::Candidate& c : t.result.candidates) {
        nlohmann::json item = {{"label", c.label}, {"ok", c.ok}, {"timed", c.timed}};
        if (c.ok) {
          item["ms"] = c.ms;
        } else {
          item["why"] = c.why;
        }
        candidates.push_back(std::move(item));
      }
      report.push_back({{"op", s.op},
                        {"shape", s.text},
                        {"kernel", t.kernel},
                        {"bucket", t.bucket},
                        {"rule_ms", rule.ok ? rule.ms : 0.0},
                        {"winner", constants_text(t.result.winner)},
                        {"winner_ms", t.result.ms},
                        {"timed", t.result.timed},
                        {"seconds", seconds},
                        {"candidates", std::move(candidates)}});
      table.add({s.op, s.text, t.kernel, t.bucket, rule.ok ? fixed(rule.ms * 1000, 2) : "failed",
                 constants_text(t.result.winner), fixed(t.result.ms * 1000, 2),
                 rule.ok ? fixed(rule.ms / t.result.ms, 2) + "x" : "-",
                 std::to_string(t.result.timed)});
    }
  }
  if (progress) std::cerr << "\r" << std::string(100, ' ') << "\r";
  if (options.json) {
    std::cout << report.dump(2) << "\n";
  } else {
    table.print(std::cout);
  }
  return 0;
}

}  // namespace kreg::cli
