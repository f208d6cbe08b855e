// A decode step against a layer kept in llama.cpp's Q4_K blocks, as a GGUF file stores its
// tensors: the blocks are made here on the host (random codes, scales and mins; a real model
// would read them from its file), one token's activations are multiplied by them with
// ops::ggml_matmul, and the result is checked against the same product over the decoded
// weight in double precision.
//
// Without a GPU the example builds the call, prints its shape, and skips the run.
#include <kreg/device/ggml.cuh>
#include <kreg/kreg.hpp>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

namespace {

constexpr int kIn = 2048;
constexpr int kOut = 512;

// Weight l of sub-block j of a Q4_K block, decoded with kreg's own helpers.
float weight(const std::uint8_t* block, int j, int l) {
  std::uint16_t d = 0;
  std::uint16_t dmin = 0;
  std::memcpy(&d, block, 2);
  std::memcpy(&dmin, block + 2, 2);
  unsigned w[3];
  std::memcpy(w, block + kreg::ggml::kQ4_KScalesAt, sizeof(w));
  const kreg::ggml::ScaleMin sm = kreg::ggml::q4_k_scale_min(w[0], w[1], w[2], j);
  const int q = kreg::ggml::q4_k_code(block + kreg::ggml::kQ4_KCodesAt, j, l);
  return kreg::ggml::half_bits_to_float(d) * static_cast<float>(sm.scale) * static_cast<float>(q) -
         kreg::ggml::half_bits_to_float(dmin) * static_cast<float>(sm.min);
}

}  // namespace

int main() {
  try {
    using kreg::ops::GgmlFormat;
    std::mt19937 rng(9);
    const std::int64_t row_bytes = kreg::ops::ggml_row_bytes(GgmlFormat::Q4_K, kIn);
    std::vector<std::uint8_t> blocks(static_cast<std::size_t>(kOut * row_bytes));
    for (std::uint8_t& b : blocks) b = static_cast<std::uint8_t>(rng());
    for (std::size_t at = 0; at < blocks.size(); at += kreg::ggml::kQ4_KBytes) {
      const std::uint16_t d = kreg::half(0.002F).bits;
      const std::uint16_t dmin = kreg::half(0.001F).bits;
      std::memcpy(&blocks[at], &d, 2);
      std::memcpy(&blocks[at + 2], &dmin, 2);
    }
    std::normal_distribution<float> dist(0.0F, 1.0F);
    std::vector<kreg::bfloat16> x(kIn);
    for (auto& v : x) v = kreg::bfloat16(dist(rng));

    const kreg::ops::GgmlWeight w{kreg::Array::from_data(blocks, {kOut, row_bytes}),
                                  GgmlFormat::Q4_K};
    const kreg::Array y = kreg::ops::ggml_matmul(kreg::Array::from_data(x, {1, kIn}), w);
    if (kreg::devices().empty()) {
      std::printf(
          "no GPU: built the product [%lld, %lld] over %lld bytes of Q4_K blocks; run "
          "skipped\n",
          static_cast<long long>(y.shape()[0]), static_cast<long long>(y.shape()[1]),
          static_cast<long long>(blocks.size()));
      return 0;
    }
    const std::vector<kreg::bfloat16> got = y.to_vector<kreg::bfloat16>();
    double err = 0.0;
    double norm = 0.0;
    for (int r = 0; r < kOut; ++r) {
      double want = 0.0;
      for (int c = 0; c < kIn; ++c) {
        const std::int64_t at = r * row_bytes + std::int64_t{c / 256} * kreg::ggml::kQ4_KBytes;
        const std::uint8_t* block = &blocks[static_cast<std::size_t>(at)];
        want += static_cast<double>(static_cast<float>(x[c])) * weight(block, c % 256 / 32, c % 32);
      }
      const double g = static_cast<float>(got[r]);
      err += (g - want) * (g - want);
      norm += want * want;
    }
    const double relative = std::sqrt(err / norm);
    std::printf("decode step: 1 x %d x %d from %lld bytes of Q4_K (%.2f bits a weight)\n", kOut,
                kIn, static_cast<long long>(blocks.size()),
                8.0 * static_cast<double>(row_bytes) / kIn);
    std::printf("error against the decoded weight in double: %.2e\n", relative);
    return relative < 6e-3 ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ggml_matmul: %s\n", e.what());
    return 1;
  }
}
