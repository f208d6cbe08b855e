// Prefill attention: two sequences of different lengths packed into one batch (24 and 70
// tokens), 8 query heads sharing 2 KV heads of 128, causal. The result is checked against a
// float64 reference on the host.
//
// Without a GPU the example builds the op (checking its arguments), prints the result's
// shape, and skips the run.
#include <kreg/kreg.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

int main() {
  try {
    constexpr int kQHeads = 8;
    constexpr int kKvHeads = 2;
    constexpr int kDim = 128;
    const std::vector<int> cu_seqlens = {0, 24, 94};  // sequence b is rows [cu[b], cu[b + 1])
    const int tokens = cu_seqlens.back();

    const auto value = [](std::size_t i, double salt) {
      return static_cast<float>(std::sin(0.37 * static_cast<double>(i) + salt));
    };
    std::vector<kreg::bfloat16> q(static_cast<std::size_t>(tokens) * kQHeads * kDim);
    std::vector<kreg::bfloat16> k(static_cast<std::size_t>(tokens) * kKvHeads * kDim);
    std::vector<kreg::bfloat16> v(k.size());
    for (std::size_t i = 0; i < q.size(); ++i) q[i] = kreg::bfloat16(value(i, 0.1));
    for (std::size_t i = 0; i < k.size(); ++i) k[i] = kreg::bfloat16(value(i, 0.2));
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = kreg::bfloat16(value(i, 0.3));

    kreg::ops::AttentionOptions options;
    options.causal = true;
    const kreg::Array cu = kreg::Array::from_data(cu_seqlens, {3});
    const kreg::Array out = kreg::ops::attention(
        kreg::Array::from_data(q, {tokens, kQHeads, kDim}),
        kreg::Array::from_data(k, {tokens, kKvHeads, kDim}),
        kreg::Array::from_data(v, {tokens, kKvHeads, kDim}), cu, cu, options);
    if (kreg::devices().empty()) {
      std::printf("no GPU: built attention, result [%lld, %lld, %lld]; run skipped\n",
                  static_cast<long long>(out.shape()[0]), static_cast<long long>(out.shape()[1]),
                  static_cast<long long>(out.shape()[2]));
      return 0;
    }

    const std::vector<kreg::bfloat16> got = out.to_vector<kreg::bfloat16>();
    const auto at = [](int token, int heads, int head) {
      return (static_cast<std::size_t>(token) * heads + head) * kDim;
    };
    double worst = 0;
    for (int b = 0; b < 2; ++b) {
      const int first = cu_seqlens[b];
      const int length = cu_seqlens[b + 1] - first;
      for (int h = 0; h < kQHeads; ++h) {
        const int kv = h / (kQHeads / kKvHeads);
        for (int i = 0; i < length; ++i) {
          std::vector<double> scores;  // keys 0 to i: causal
          for (int j = 0; j <= i; ++j) {
            double s = 0;
            for (int d = 0; d < kDim; ++d) {
              s += static_cast<float>(q[at(first + i, kQHeads, h) + d]) *
                   static_cast<float>(k[at(first + j, kKvHeads, kv) + d]);
            }
            scores.push_back(s / std::sqrt(static_cast<double>(kDim)));
          }
          const double top = *std::max_element(scores.begin(), scores.end());
          double total = 0;
          for (double& s : scores) total += (s = std::exp(s - top));
          for (int d = 0; d < kDim; ++d) {
            double want = 0;
            for (int j = 0; j <= i; ++j) {
              want += scores[j] / total * static_cast<float>(v[at(first + j, kKvHeads, kv) + d]);
            }
            const double g = static_cast<float>(got[at(first + i, kQHeads, h) + d]);
            worst = std::max(worst, std::abs(g - want));
          }
        }
      }
    }
    std::printf("attention over %d packed tokens: largest error %.2e\n", tokens, worst);
    return worst < 2e-2 ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
