// A mixture-of-experts layer in the shape of Qwen3-MoE's (64 experts, each token routed to 8,
// SwiGLU experts), for a decode step of four tokens: ops::moe takes the router's logits to
// the layer's output, reading the weights of each chosen expert once. Checked against the same
// layer computed in double precision on the host, expert by expert, from the routing that
// ops::moe_route reports.
//
// Without a GPU the example builds the calls, prints their shapes, and skips the run.
#include <kreg/kreg.hpp>

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

namespace {

constexpr int kTokens = 4;
constexpr int kExperts = 64;
constexpr int kTopK = 8;
constexpr int kHidden = 512;
constexpr int kFfn = 256;

template <class T>
std::vector<double> as_double(const std::vector<T>& v) {
  std::vector<double> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) out[i] = static_cast<float>(v[i]);
  return out;
}

std::vector<kreg::bfloat16> random_values(std::mt19937& rng, std::size_t n, float scale) {
  std::normal_distribution<float> dist(0.0F, scale);
  std::vector<kreg::bfloat16> v(n);
  for (auto& x : v) x = kreg::bfloat16(dist(rng));
  return v;
}

// Expert e's output for one token, in double: down (silu(gate x) * up x).
std::vector<double> expert(const std::vector<double>& gate, const std::vector<double>& up,
                           const std::vector<double>& down, int e, const double* x) {
  std::vector<double> h(kFfn);
  for (int f = 0; f < kFfn; ++f) {
    double g = 0.0;
    double u = 0.0;
    const std::size_t row = (static_cast<std::size_t>(e) * kFfn + f) * kHidden;
    for (int c = 0; c < kHidden; ++c) {
      g += gate[row + c] * x[c];
      u += up[row + c] * x[c];
    }
    h[f] = g / (1.0 + std::exp(-g)) * u;
  }
  std::vector<double> y(kHidden);
  for (int c = 0; c < kHidden; ++c) {
    const std::size_t row = (static_cast<std::size_t>(e) * kHidden + c) * kFfn;
    double s = 0.0;
    for (int f = 0; f < kFfn; ++f) s += down[row + f] * h[f];
    y[c] = s;
  }
  return y;
}

}  // namespace

int main() {
  try {
    std::mt19937 rng(5);
    const std::size_t stack = static_cast<std::size_t>(kExperts) * kFfn * kHidden;
    const auto x = random_values(rng, static_cast<std::size_t>(kTokens) * kHidden, 1.0F);
    const auto logits = random_values(rng, static_cast<std::size_t>(kTokens) * kExperts, 1.0F);
    const auto gate = random_values(rng, stack, 0.05F);
    const auto up = random_values(rng, stack, 0.05F);
    const auto down = random_values(rng, stack, 0.05F);
    const kreg::Array xa = kreg::Array::from_data(x, {kTokens, kHidden});
    const kreg::Array la = kreg::Array::from_data(logits, {kTokens, kExperts});
    const kreg::ops::MoeExperts experts{kreg::Array::from_data(gate, {kExperts, kFfn, kHidden}),
                                        kreg::Array::from_data(up, {kExperts, kFfn, kHidden}),
                                        kreg::Array::from_data(down, {kExperts, kHidden, kFfn})};

    const kreg::Array out = kreg::ops::moe(xa, la, experts, {kTopK, true});
    const kreg::ops::MoeRouting routing = kreg::ops::moe_route(la, kTopK);
    if (kreg::devices().empty()) {
      std::printf(
          "no GPU: built the router (choices [%lld, %lld]) and the layer [%lld, %lld] over %d "
          "experts; run skipped\n",
          static_cast<long long>(routing.ids.shape()[0]),
          static_cast<long long>(routing.ids.shape()[1]), static_cast<long long>(out.shape()[0]),
          static_cast<long long>(out.shape()[1]), kExperts);
      return 0;
    }
    const std::vector<double> got = as_double(out.to_vector<kreg::bfloat16>());
    const std::vector<int> ids = routing.ids.to_vector<int>();
    const std::vector<float> weights = routing.weights.to_vector<float>();
    const std::vector<double> xd = as_double(x);
    const std::vector<double> gd = as_double(gate);
    const std::vector<double> ud = as_double(up);
    const std::vector<double> dd = as_double(down);
    double err = 0.0;
    double norm = 0.0;
    for (int t = 0; t < kTokens; ++t) {
      std::vector<double> want(kHidden, 0.0);
      std::printf("token %d:", t);
      for (int j = 0; j < kTopK; ++j) {
        const int e = ids[static_cast<std::size_t>(t) * kTopK + j];
        const double w = weights[static_cast<std::size_t>(t) * kTopK + j];
        std::printf(" %d (%.3f)", e, w);
        const std::vector<double> y =
            expert(gd, ud, dd, e, &xd[static_cast<std::size_t>(t) * kHidden]);
        for (int c = 0; c < kHidden; ++c) want[c] += w * y[c];
      }
      std::printf("\n");
      for (int c = 0; c < kHidden; ++c) {
        const double d = got[static_cast<std::size_t>(t) * kHidden + c] - want[c];
        err += d * d;
        norm += want[c] * want[c];
      }
    }
    const double relative = std::sqrt(err / norm);
    std::printf("moe [%d, %d], %d experts, top %d: relative error %.2e against float64\n", kTokens,
                kHidden, kExperts, kTopK, relative);
    return relative < 1.5e-2 ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "example_moe: %s\n", e.what());
    return 1;
  }
}
