// Dense matmul, bfloat16 (ops::matmul): the large products of a transformer layer, and the
// decode shapes (1 to 16 rows against a weight), whose floor is reading the weight once: the
// time of one call, its TFLOP/s (2 m n k) and the bandwidth it reads the weight at, against a
// device-to-device copy measured in the same run. Then the decode shapes against weights in
// MLX's affine format (ops::quantized_matmul, 4 and 8 bits) and in llama.cpp's Q8_0 and Q4_K
// blocks (ops::ggml_matmul), each beside the bfloat16 product.
// Decode shapes rotate through copies of their weights that together are far past L2, so that
// each call reads its weight from memory, as a model's layers do. The
// weight is [n, k], as linear layers keep it, passed as its transpose (K-major), or [k, n]
// (N-major).
//
//   kreg_matmul_bench [dense | quantized | ggml]   (one part, or all three)
//
// "eager" and "graph" are timed as in attention_bench.cpp; bench/matmul_torch.py times
// torch.matmul (cuBLAS) on the same shapes.
#include <kreg/kreg.hpp>

#include "call_timing.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

using kreg::Array;
using kreg::bench::random_array;
using kreg::bench::time_call;

// Copies of a weight of `bytes` whose total is well past the 50 MB of L2.
int copies_for(double bytes) {
  return std::max(1, static_cast<int>(std::ceil(256e6 / bytes)));
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const std::string only = argc > 1 ? argv[1] : "";
    if (!only.empty() && only != "dense" && only != "quantized" && only != "ggml") {
      std::fprintf(stderr, "usage: kreg_matmul_bench [dense | quantized | ggml]\n");
      return 2;
    }
    const auto wanted = [&](const char* part) { return only.empty() || only == part; };
    kreg::bench::start_driver();
    const kreg::Stream stream(0);
    const kreg::StreamScope scope(stream);
    const kreg::bench::CopyRoofline copy = kreg::bench::copy_roofline(stream);
    std::printf("%-44s %9.1f us %8.0f GB/s\n", "copy (cuMemcpyDtoD, 1 GiB)", copy.us, copy.gbps);
    struct Shape {
      int m;
      int n;
      int k;
      bool b_by_k;
    };
    int salt = 1;
    if (wanted("dense")) {
      std::printf("%-44s %10s %10s %9s %9s\n", "matmul bfloat16, m x n x k", "eager us", "graph us",
                  "TFLOP/s", "w GB/s");
      for (const Shape& s :
           {Shape{4096, 4096, 4096, true}, Shape{4096, 4096, 4096, false},
            Shape{8192, 8192, 8192, true}, Shape{4096, 14336, 4096, true},
            Shape{4096, 4096, 14336, true}, Shape{1, 4096, 4096, true}, Shape{1, 14336, 4096, true},
            Shape{1, 4096, 14336, true}, Shape{4, 4096, 14336, true}, Shape{8, 14336, 4096, true},
            Shape{16, 4096, 4096, true}, Shape{16, 14336, 4096, true},
            Shape{16, 4096, 14336, true}}) {
        const Array a = random_array({s.m, s.k}, salt++);
        // Decode shapes rotate through copies of the weight, so that none is in L2 (50 MB) when
        // it is read, as in a model whose layers each have their own.
        const int copies = s.m <= 16 ? copies_for(2.0 * s.n * s.k) : 1;
        std::vector<Array> ws;
        ws.reserve(static_cast<std::size_t>(copies));
        for (int c = 0; c < copies; ++c) {
          ws.push_back(s.b_by_k ? random_array({s.n, s.k}, salt++).transpose()
                                : random_array({s.k, s.n}, salt++));
        }
        kreg::eval(ws);
        std::size_t turn = 0;
        const auto [eager, graph] =
            time_call(stream, [&] { kreg::ops::matmul(a, ws[turn++ % ws.size()]).eval(); });
        const double flops = 2.0 * s.m * s.n * s.k;
        const double weight = 2.0 * s.n * s.k;
        char name[96];
        std::snprintf(name, sizeof name, "%d x %d x %d, weight %s", s.m, s.n, s.k,
                      s.b_by_k ? "[n, k]^T" : "[k, n]");
        std::printf("%-44s %10.1f %10.1f %9.1f %9.0f\n", name, eager * 1e3, graph * 1e3,
                    flops / (graph * 1e-3) / 1e12, weight / (graph * 1e-3) / 1e9);
      }
    }
    if (wanted("quantized")) {
      // Affine-quantized weights (ops::quantized_matmul), against the bfloat16 product of the
      // same shape: the bytes read are the codes, scales and biases.
      std::printf("%-44s %10s %10s %9s %9s\n", "quantized_matmul bfloat16, m x n x k", "eager us",
                  "graph us", "GB/s", "vs bf16");
      for (const int bits : {4, 8}) {
        for (const Shape& s : {Shape{1, 4096, 4096, true}, Shape{16, 4096, 4096, true},
                               Shape{1, 14336, 4096, true}, Shape{16, 14336, 4096, true},
                               Shape{1, 4096, 14336, true}, Shape{16, 4096, 14336, true}}) {
          constexpr int kGroup = 64;
          const Array x = random_array({s.m, s.k}, salt++);
          const double bytes = static_cast<double>(s.n) * s.k * bits / 8.0 +
                               2.0 * 2.0 * static_cast<double>(s.n) * s.k / kGroup;
          std::vector<kreg::ops::QuantizedWeight> ws;
          ws.reserve(static_cast<std::size_t>(copies_for(bytes)));
          std::vector<Array> dense;
          dense.reserve(static_cast<std::size_t>(copies_for(2.0 * s.n * s.k)));
          for (int c = 0; c < copies_for(2.0 * s.n * s.k); ++c) {
            dense.push_back(random_array({s.n, s.k}, salt++));
          }
          for (int c = 0; c < copies_for(bytes); ++c) {
            ws.push_back(kreg::ops::quantize(dense[c % dense.size()], kGroup, bits));
            kreg::eval({ws.back().weight, ws.back().scales, ws.back().biases});
          }
          std::size_t turn = 0;
          const auto [eager, graph] = time_call(
              stream, [&] { kreg::ops::quantized_matmul(x, ws[turn++ % ws.size()]).eval(); });
          const auto [bf_eager, bf_graph] = time_call(stream, [&] {
            kreg::ops::matmul(x, dense[turn++ % dense.size()].transpose()).eval();
          });
          (void)bf_eager;
          char name[96];
          std::snprintf(name, sizeof name, "%d x %d x %d, %d bits, groups of %d", s.m, s.n, s.k,
                        bits, kGroup);
          std::printf("%-44s %10.1f %10.1f %9.0f %8.2fx\n", name, eager * 1e3, graph * 1e3,
                      bytes / (graph * 1e-3) / 1e9, bf_graph / graph);
        }
      }
    }
    if (wanted("ggml")) {
      // llama.cpp's blocks (ops::ggml_matmul), against the bfloat16 product of the same shape:
      // the bytes read are the blocks. Their contents are random bytes with small finite scales.
      std::printf("%-44s %10s %10s %9s %9s\n", "ggml_matmul bfloat16, m x n x k", "eager us",
                  "graph us", "GB/s", "vs bf16");
      std::mt19937_64 rng(17);
      for (const kreg::ops::GgmlFormat format :
           {kreg::ops::GgmlFormat::Q8_0, kreg::ops::GgmlFormat::Q4_K}) {
        const bool q8 = format == kreg::ops::GgmlFormat::Q8_0;
        for (const Shape& s : {Shape{1, 4096, 4096, true}, Shape{16, 4096, 4096, true},
                               Shape{1, 14336, 4096, true}, Shape{16, 14336, 4096, true},
                               Shape{1, 4096, 14336, true}, Shape{16, 4096, 14336, true}}) {
          const Array x = random_array({s.m, s.k}, salt++);
          const std::int64_t row_bytes = kreg::ops::ggml_row_bytes(format, s.k);
          const double bytes = static_cast<double>(s.n) * static_cast<double>(row_bytes);
          std::vector<kreg::ops::GgmlWeight> ws;
          ws.reserve(static_cast<std::size_t>(copies_for(bytes)));
          for (int c = 0; c < copies_for(bytes); ++c) {
            std::vector<std::uint8_t> blocks(static_cast<std::size_t>(s.n * row_bytes));
            for (std::size_t at = 0; at + 8 <= blocks.size(); at += 8) {
              const std::uint64_t word = rng();
              std::memcpy(&blocks[at], &word, 8);
            }
            const std::size_t block = q8 ? 34 : 144;
            for (std::size_t at = 0; at < blocks.size(); at += block) {
              blocks[at + 1] = 0x1c;  // d (and dmin) about 0.004
              if (!q8) blocks[at + 3] = 0x1c;
            }
            ws.push_back({Array::from_data(blocks, {s.n, row_bytes}), format});
            ws.back().blocks.eval();
          }
          std::vector<Array> dense(static_cast<std::size_t>(copies_for(2.0 * s.n * s.k)));
          for (Array& d : dense) d = random_array({s.n, s.k}, salt++);
          kreg::eval(dense);
          std::size_t turn = 0;
          const auto [eager, graph] =
              time_call(stream, [&] { kreg::ops::ggml_matmul(x, ws[turn++ % ws.size()]).eval(); });
          const auto [bf_eager, bf_graph] = time_call(stream, [&] {
            kreg::ops::matmul(x, dense[turn++ % dense.size()].transpose()).eval();
          });
          (void)bf_eager;
          char name[96];
          std::snprintf(name, sizeof name, "%d x %d x %d, %s", s.m, s.n, s.k, q8 ? "Q8_0" : "Q4_K");
          std::printf("%-44s %10.1f %10.1f %9.0f %8.2fx\n", name, eager * 1e3, graph * 1e3,
                      bytes / (graph * 1e-3) / 1e9, bf_graph / graph);
        }
      }
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kreg_matmul_bench: %s\n", e.what());
    return 1;
  }
}
