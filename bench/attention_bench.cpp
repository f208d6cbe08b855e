// Attention, bfloat16. Prefill (ops::attention) over one sequence of 4096 or 8192 tokens,
// causal and not, one KV head a query head and (GQA) one for four: the time of one call and its
// TFLOP/s (4 len^2 heads head_dim flops, half of them with the causal mask). Decode over a paged KV
// cache (ops::decode_attention), 32 query heads over 8 KV heads of 128, pages of 16 tokens in a
// shuffled order: the time of one call and the KV bandwidth it reaches, against a device-to-device
// copy measured in the same run.
//
//   kreg_attention_bench [--decode-only] [--splits N,N,...]
//
// --splits repeats each decode shape with DecodeAttentionOptions::splits at each value (0: the
// op's own choice, the default); --decode-only leaves out the prefill shapes.
//
// "eager" is the median over 5 repetitions of 20 back-to-back calls, so it includes what the
// host spends on each call when that is longer than the GPU's work; "graph" replays the same
// 20 calls captured in a CUDA graph, which leaves the GPU's time.
#include <kreg/kreg.hpp>

#include <cuda.h>

#include "call_timing.hpp"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <numeric>
#include <random>
#include <string>
#include <vector>

namespace {

using kreg::Array;
using kreg::Dtype;
using kreg::bench::random_array;
using kreg::bench::time_call;

}  // namespace

int main(int argc, char** argv) {
  try {
    bool prefill = true;
    std::vector<int> split_counts{0};
    for (int i = 1; i < argc; ++i) {
      const std::string arg = argv[i];
      if (arg == "--decode-only") {
        prefill = false;
      } else if (arg == "--splits" && i + 1 < argc) {
        split_counts.clear();
        std::string list = argv[++i];
        for (std::size_t at = 0; at <= list.size();) {
          const std::size_t comma = std::min(list.find(',', at), list.size());
          split_counts.push_back(std::stoi(list.substr(at, comma - at)));
          at = comma + 1;
        }
      } else {
        std::fprintf(stderr, "usage: %s [--decode-only] [--splits N,N,...]\n", argv[0]);
        return 2;
      }
    }
    kreg::bench::start_driver();
    const kreg::Stream stream(0);
    const kreg::StreamScope scope(stream);
    const kreg::bench::CopyRoofline copy = kreg::bench::copy_roofline(stream);
    std::printf("%-40s %9.1f us %8.0f GB/s\n", "copy (cuMemcpyDtoD, 1 GiB)", copy.us, copy.gbps);
    std::printf("%-40s %12s %12s %10s\n", "prefill bfloat16, 1 sequence", "eager us", "graph us",
                "TFLOP/s");
    struct Prefill {
      int tokens;
      int heads;
      int dim;
      bool causal;
      int kv_heads = 0;  // 0: as many as query heads
    };
    for (const Prefill& p :
         prefill ? std::vector<Prefill>{Prefill{4096, 32, 128, false}, Prefill{4096, 32, 128, true},
                                        Prefill{8192, 32, 128, false}, Prefill{8192, 32, 128, true},
                                        Prefill{4096, 32, 64, false}, Prefill{4096, 32, 64, true},
                                        Prefill{4096, 16, 256, false}, Prefill{4096, 16, 256, true},
                                        Prefill{4096, 32, 128, false, 8},
                                        Prefill{4096, 32, 128, true, 8}}
                 : std::vector<Prefill>{}) {
      const int kv_heads = p.kv_heads > 0 ? p.kv_heads : p.heads;
      const Array q = random_array({1, p.tokens, p.heads, p.dim}, 4);
      const Array k = random_array({1, p.tokens, kv_heads, p.dim}, 5);
      const Array v = random_array({1, p.tokens, kv_heads, p.dim}, 6);
      kreg::ops::AttentionOptions options;
      options.causal = p.causal;
      const auto [eager, graph] =
          time_call(stream, [&] { kreg::ops::attention(q, k, v, options).eval(); });
      const double flops = 4.0 * p.tokens * p.tokens * p.heads * p.dim * (p.causal ? 0.5 : 1.0);
      const std::string name = std::to_string(p.heads) +
                               (p.kv_heads > 0 ? " / " + std::to_string(kv_heads) + " kv" : "") +
                               " x " + std::to_string(p.tokens) + " x " + std::to_string(p.dim) +
                               (p.causal ? " causal" : "");
      std::printf("%-40s %12.1f %12.1f %10.1f\n", name.c_str(), eager * 1e3, graph * 1e3,
                  flops / (graph * 1e-3) / 1e12);
    }
    std::printf("%-40s %12s %12s %10s %8s\n", "decode bfloat16, 32 q / 8 kv heads, d 128",
                "eager us", "graph us", "KV GB/s", "of copy");
    constexpr int kQHeads = 32;
    constexpr int kKvHeads = 8;
    constexpr int kDim = 128;
    constexpr int kPage = 16;
    std::mt19937 rng(7);
    for (const auto& [batch, tokens] :
         {std::pair{1, 4096}, std::pair{1, 32768}, std::pair{16, 4096}, std::pair{64, 1024}}) {
      const int pages_per_seq = tokens / kPage;
      const int pages = batch * pages_per_seq;
      std::vector<std::int32_t> table(static_cast<std::size_t>(pages));
      std::iota(table.begin(), table.end(), 0);
      std::shuffle(table.begin(), table.end(), rng);
      const Array q = random_array({batch, kQHeads, kDim}, 1);
      const Array k = random_array({pages, kPage, kKvHeads, kDim}, 2);
      const Array v = random_array({pages, kPage, kKvHeads, kDim}, 3);
      const Array block_table = Array::from_data(table, {batch, pages_per_seq});
      const Array lens = Array::from_data(
          std::vector<std::int32_t>(static_cast<std::size_t>(batch), tokens), {batch});
      kreg::eval({block_table, lens});
      stream.synchronize();
      for (const int splits : split_counts) {
        kreg::ops::DecodeAttentionOptions options;
        options.splits = splits;
        const auto [eager, graph] = time_call(stream, [&] {
          kreg::ops::decode_attention(q, k, v, block_table, lens, options).eval();
        });
        const double kv_bytes = 2.0 * batch * tokens * kKvHeads * kDim * 2;
        const double gbps = kv_bytes / (graph * 1e-3) / 1e9;
        const std::string name = "batch " + std::to_string(batch) + " x " + std::to_string(tokens) +
                                 " tokens" +
                                 (splits > 0 ? ", " + std::to_string(splits) + " splits" : "");
        std::printf("%-40s %12.1f %12.1f %10.0f %7.1f%%\n", name.c_str(), eager * 1e3, graph * 1e3,
                    gbps, 100.0 * gbps / copy.gbps);
      }
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
