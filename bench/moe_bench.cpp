// Mixture-of-experts layers, bfloat16 (ops::moe): router logits to the layer's output, with
// SwiGLU experts. Decode sends a few tokens to most experts, so its floor is reading the weights
// of every expert that was chosen once; prefill sends many rows to each and is bound by the
// products. Each line gives the time of one call (and of the router alone), the bandwidth at
// which the chosen experts' weights are read, and the TFLOP/s of the products (2 x 3 x slots x
// hidden x ffn), against a device-to-device copy measured in the same run.
//
//   kreg_moe_bench [TOKENS [HIDDEN]]   (only the layers of that many tokens, and hidden size)
//
// "eager" and "graph" are timed as in matmul_bench.cpp; bench/moe_torch.py runs the same layers
// in PyTorch (a loop over the chosen experts, as transformers' Qwen3-MoE block does, and
// batched products over every expert).
#include <kreg/kreg.hpp>

#include "call_timing.hpp"

#include <cstdio>
#include <cstdlib>
#include <set>
#include <vector>

namespace {

using kreg::Array;
using kreg::bench::random_array;
using kreg::bench::time_call;

}  // namespace

int main(int argc, char** argv) {
  try {
    kreg::bench::start_driver();
    const kreg::Stream stream(0);
    const kreg::StreamScope scope(stream);
    const kreg::bench::CopyRoofline copy = kreg::bench::copy_roofline(stream);
    std::printf("%-46s %9.1f us %8.0f GB/s\n", "copy (cuMemcpyDtoD, 1 GiB)", copy.us, copy.gbps);
    std::printf("%-46s %9s %9s %9s %8s %9s %8s\n", "moe bfloat16, tokens x experts/top-k, h->f",
                "eager us", "graph us", "route us", "experts", "w GB/s", "TFLOP/s");
    struct Layer {
      int tokens;
      int experts;
      int top_k;
      int hidden;
      int ffn;
    };
    int salt = 1;
    for (const Layer& l : {Layer{1, 64, 8, 4096, 1408}, Layer{16, 64, 8, 4096, 1408},
                           Layer{1, 64, 8, 2048, 768}, Layer{16, 64, 8, 2048, 768},
                           Layer{512, 64, 8, 2048, 768}, Layer{2048, 64, 8, 2048, 768}}) {
      if ((argc > 1 && std::atoi(argv[1]) != l.tokens) ||
          (argc > 2 && std::atoi(argv[2]) != l.hidden)) {
        continue;
      }
      const Array x = random_array({l.tokens, l.hidden}, salt++);
      const Array logits = random_array({l.tokens, l.experts}, salt++);
      const kreg::ops::MoeExperts experts{random_array({l.experts, l.ffn, l.hidden}, salt++),
                                          random_array({l.experts, l.ffn, l.hidden}, salt++),
                                          random_array({l.experts, l.hidden, l.ffn}, salt++)};
      const kreg::ops::MoeOptions options{l.top_k, true};
      const std::vector<int> ids = kreg::ops::moe_route(logits, l.top_k).ids.to_vector<int>();
      const std::set<int> chosen(ids.begin(), ids.end());
      const auto [eager, graph] =
          time_call(stream, [&] { kreg::ops::moe(x, logits, experts, options).eval(); });
      const auto [route_eager, route_graph] = time_call(stream, [&] {
        const kreg::ops::MoeRouting r = kreg::ops::moe_route(logits, l.top_k);
        kreg::eval({r.weights, r.ids});
      });
      (void)route_eager;
      const double bytes = 3.0 * 2.0 * static_cast<double>(chosen.size()) * l.hidden * l.ffn;
      const double flops = 2.0 * 3.0 * l.tokens * l.top_k * static_cast<double>(l.hidden) * l.ffn;
      char name[96];
      std::snprintf(name, sizeof name, "%d x %d/%d, %d -> %d", l.tokens, l.experts, l.top_k,
                    l.hidden, l.ffn);
      std::printf("%-46s %9.1f %9.1f %9.1f %8zu %9.0f %8.1f\n", name, eager * 1e3, graph * 1e3,
                  route_graph * 1e3, chosen.size(), bytes / (graph * 1e-3) / 1e9,
                  flops / (graph * 1e-3) / 1e12);
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kreg_moe_bench: %s\n", e.what());
    return 1;
  }
}
