// A decode step against a linear layer kept in 4 bits: the layer's bfloat16 weight [out, in]
// quantized into MLX's affine format (groups of 64), one token's activations multiplied by it
// with ops::quantized_matmul, which reads each code, scale and bias once. Checked against the
// same product over the dequantized weight in double precision on the host, and against the
// unquantized weight, to show what 4 bits cost.
//
// Without a GPU the example builds the calls, prints their shapes, and skips the run.
#include <kreg/kreg.hpp>

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

namespace {

constexpr int kTokens = 1;
constexpr int kIn = 1024;
constexpr int kOut = 768;
constexpr int kGroup = 64;
constexpr int kBits = 4;

// Relative L2 distance of `got` from `want`.
double relative(const std::vector<double>& got, const std::vector<double>& want) {
  double err = 0.0;
  double norm = 0.0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    err += (got[i] - want[i]) * (got[i] - want[i]);
    norm += want[i] * want[i];
  }
  return std::sqrt(err / norm);
}

// x [kTokens, kIn] times w^T, w [kOut, kIn] as doubles.
std::vector<double> product(const std::vector<double>& x, const std::vector<double>& w) {
  std::vector<double> out(static_cast<std::size_t>(kTokens) * kOut, 0.0);
  for (int i = 0; i < kTokens; ++i) {
    for (int j = 0; j < kOut; ++j) {
      double s = 0.0;
      for (int p = 0; p < kIn; ++p) s += x[i * kIn + p] * w[static_cast<std::size_t>(j) * kIn + p];
      out[static_cast<std::size_t>(i) * kOut + j] = s;
    }
  }
  return out;
}

template <class T>
std::vector<double> as_double(const std::vector<T>& v) {
  std::vector<double> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) out[i] = static_cast<float>(v[i]);
  return out;
}

}  // namespace

int main() {
  try {
    std::mt19937 rng(3);
    std::normal_distribution<float> dist(0.0F, 1.0F);
    std::vector<kreg::bfloat16> x(static_cast<std::size_t>(kTokens) * kIn);
    std::vector<kreg::bfloat16> w(static_cast<std::size_t>(kOut) * kIn);
    for (auto& v : x) v = kreg::bfloat16(dist(rng));
    for (auto& v : w) v = kreg::bfloat16(0.05F * dist(rng));
    const kreg::Array xa = kreg::Array::from_data(x, {kTokens, kIn});
    const kreg::Array wa = kreg::Array::from_data(w, {kOut, kIn});

    const kreg::ops::QuantizedWeight q = kreg::ops::quantize(wa, kGroup, kBits);
    const kreg::Array y = kreg::ops::quantized_matmul(xa, q);
    const kreg::Array decoded = kreg::ops::dequantize(q);
    if (kreg::devices().empty()) {
      std::printf(
          "no GPU: built quantize (codes [%lld, %lld] uint32, scales [%lld, %lld]) and the decode "
          "product [%lld, %lld]; run skipped\n",
          static_cast<long long>(q.weight.shape()[0]), static_cast<long long>(q.weight.shape()[1]),
          static_cast<long long>(q.scales.shape()[0]), static_cast<long long>(q.scales.shape()[1]),
          static_cast<long long>(y.shape()[0]), static_cast<long long>(y.shape()[1]));
      return 0;
    }
    const std::vector<double> got = as_double(y.to_vector<kreg::bfloat16>());
    const std::vector<double> xd = as_double(x);
    const std::vector<double> exact = product(xd, as_double(decoded.to_vector<kreg::bfloat16>()));
    const std::vector<double> dense = product(xd, as_double(w));
    const double kernel_error = relative(got, exact);
    const double quantization_error = relative(exact, dense);
    const double bytes =
        static_cast<double>(kOut) * kIn * kBits / 8 + 2.0 * 2.0 * kOut * (kIn / kGroup);
    std::printf(
        "decode step: %d x %d x %d, %d bits, groups of %d: %.0f bytes of weight (%.2f x "
        "fewer than bfloat16)\n",
        kTokens, kOut, kIn, kBits, kGroup, bytes, 2.0 * kOut * kIn / bytes);
    std::printf("error against the dequantized weight in double: %.2e\n", kernel_error);
    std::printf("error of 4 bits against the bfloat16 weight: %.2e\n", quantization_error);
    return kernel_error < 6e-3 && quantization_error < 0.15 ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "quantized_matmul: %s\n", e.what());
    return 1;
  }
}
