// A SwiGLU MLP block of a transformer on ops::matmul, its weights kept as linear layers keep
// them ([out, in]) and read in place as transposes: up = x W_up^T, h = silu(x W_gate^T) * up
// (the gate fused into the product's epilogue), y = x + h W_down^T (the residual fused too).
// Checked against the same block in double precision on the host.
//
// Without a GPU the example builds the three products, prints their shapes, and skips the run.
#include <kreg/kreg.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

namespace {

constexpr int kTokens = 8;
constexpr int kModel = 256;
constexpr int kHidden = 512;

std::vector<kreg::bfloat16> random_bf16(std::mt19937& rng, std::size_t n, float scale) {
  std::uniform_real_distribution<float> dist(-scale, scale);
  std::vector<kreg::bfloat16> out(n);
  for (auto& v : out) v = kreg::bfloat16(dist(rng));
  return out;
}

// out[i][j] = sum_p a[i][p] w[j][p]: a [rows, inner] against a weight [cols, inner].
std::vector<double> times_weight(const std::vector<double>& a, const std::vector<kreg::bfloat16>& w,
                                 int rows, int cols, int inner) {
  std::vector<double> out(static_cast<std::size_t>(rows) * cols, 0.0);
  for (int i = 0; i < rows; ++i) {
    for (int j = 0; j < cols; ++j) {
      double s = 0;
      for (int p = 0; p < inner; ++p) s += a[i * inner + p] * static_cast<float>(w[j * inner + p]);
      out[static_cast<std::size_t>(i) * cols + j] = s;
    }
  }
  return out;
}

}  // namespace

int main() {
  try {
    std::mt19937 rng(7);
    const auto x = random_bf16(rng, std::size_t{kTokens} * kModel, 1.0F);
    const auto w_gate = random_bf16(rng, std::size_t{kHidden} * kModel, 0.1F);
    const auto w_up = random_bf16(rng, std::size_t{kHidden} * kModel, 0.1F);
    const auto w_down = random_bf16(rng, std::size_t{kModel} * kHidden, 0.1F);
    const kreg::Array xa = kreg::Array::from_data(x, {kTokens, kModel});
    const kreg::Array gate = kreg::Array::from_data(w_gate, {kHidden, kModel});
    const kreg::Array up_w = kreg::Array::from_data(w_up, {kHidden, kModel});
    const kreg::Array down = kreg::Array::from_data(w_down, {kModel, kHidden});

    const kreg::Array up = kreg::ops::matmul(xa, up_w.transpose());
    kreg::ops::MatmulOptions gated;
    gated.epilogue = kreg::ops::Epilogue::SiluGate;
    gated.other = up;
    const kreg::Array h = kreg::ops::matmul(xa, gate.transpose(), gated);
    kreg::ops::MatmulOptions residual;
    residual.epilogue = kreg::ops::Epilogue::Residual;
    residual.other = xa;
    const kreg::Array y = kreg::ops::matmul(h, down.transpose(), residual);
    if (kreg::devices().empty()) {
      std::printf("no GPU: built the MLP block, up [%lld, %lld], out [%lld, %lld]; run skipped\n",
                  static_cast<long long>(up.shape()[0]), static_cast<long long>(up.shape()[1]),
                  static_cast<long long>(y.shape()[0]), static_cast<long long>(y.shape()[1]));
      return 0;
    }
    const std::vector<kreg::bfloat16> got = y.to_vector<kreg::bfloat16>();

    // The same block in double, rounding h to bfloat16 where the GPU stores it.
    std::vector<double> xd(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) xd[i] = static_cast<float>(x[i]);
    const std::vector<double> u = times_weight(xd, w_up, kTokens, kHidden, kModel);
    const std::vector<double> g = times_weight(xd, w_gate, kTokens, kHidden, kModel);
    std::vector<double> hd(g.size());
    for (std::size_t i = 0; i < g.size(); ++i) {
      const double up_rounded = static_cast<float>(kreg::bfloat16(static_cast<float>(u[i])));
      const double silu = g[i] / (1.0 + std::exp(-g[i]));
      hd[i] = static_cast<float>(kreg::bfloat16(static_cast<float>(silu * up_rounded)));
    }
    const std::vector<double> d = times_weight(hd, w_down, kTokens, kModel, kHidden);
    double worst = 0;
    for (std::size_t i = 0; i < d.size(); ++i) {
      worst = std::max(worst, std::abs(static_cast<float>(got[i]) - (d[i] + xd[i])));
    }
    std::printf("matmul: SwiGLU block of %d tokens, %d -> %d -> %d, largest error %.2g\n", kTokens,
                kModel, kHidden, kModel, worst);
    return worst < 3e-2 ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
