// One decode step of attention over a paged KV cache: two sequences, 8 query heads sharing 2
// KV heads of 64, pages of 16 tokens scattered through the cache. The result is checked
// against a float64 reference on the host.
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
    constexpr int kDim = 64;
    constexpr int kPage = 16;
    constexpr int kPages = 8;  // the cache
    const std::vector<int> lens = {37, 5};
    // Sequence 0 holds pages 6, 2, 4; sequence 1 page 7 (its other entries are never read).
    const std::vector<int> table = {6, 2, 4, 7, 0, 0};
    constexpr int kMaxPages = 3;

    const auto value = [](std::size_t i, double salt) {
      return static_cast<float>(std::sin(0.37 * static_cast<double>(i) + salt));
    };
    std::vector<kreg::bfloat16> q(2 * kQHeads * kDim);
    std::vector<kreg::bfloat16> k(static_cast<std::size_t>(kPages) * kPage * kKvHeads * kDim);
    std::vector<kreg::bfloat16> v(k.size());
    for (std::size_t i = 0; i < q.size(); ++i) q[i] = kreg::bfloat16(value(i, 0.1));
    for (std::size_t i = 0; i < k.size(); ++i) k[i] = kreg::bfloat16(value(i, 0.2));
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = kreg::bfloat16(value(i, 0.3));

    const kreg::Array out = kreg::ops::decode_attention(
        kreg::Array::from_data(q, {2, kQHeads, kDim}),
        kreg::Array::from_data(k, {kPages, kPage, kKvHeads, kDim}),
        kreg::Array::from_data(v, {kPages, kPage, kKvHeads, kDim}),
        kreg::Array::from_data(table, {2, kMaxPages}), kreg::Array::from_data(lens, {2}));
    if (kreg::devices().empty()) {
      std::printf("no GPU: built decode_attention, result [%lld, %lld, %lld]; run skipped\n",
                  static_cast<long long>(out.shape()[0]), static_cast<long long>(out.shape()[1]),
                  static_cast<long long>(out.shape()[2]));
      return 0;
    }

    const std::vector<kreg::bfloat16> got = out.to_vector<kreg::bfloat16>();
    double worst = 0;
    for (int b = 0; b < 2; ++b) {
      for (int h = 0; h < kQHeads; ++h) {
        const int kv = h / (kQHeads / kKvHeads);
        std::vector<double> scores;
        for (int t = 0; t < lens[b]; ++t) {
          const std::size_t row =
              ((static_cast<std::size_t>(table[b * kMaxPages + t / kPage]) * kPage + t % kPage) *
                   kKvHeads +
               kv) *
              kDim;
          double s = 0;
          for (int d = 0; d < kDim; ++d) {
            s += static_cast<float>(q[(b * kQHeads + h) * kDim + d]) *
                 static_cast<float>(k[row + d]);
          }
          scores.push_back(s / std::sqrt(static_cast<double>(kDim)));
        }
        const double top = *std::max_element(scores.begin(), scores.end());
        double total = 0;
        for (double& s : scores) total += (s = std::exp(s - top));
        for (int d = 0; d < kDim; ++d) {
          double want = 0;
          for (int t = 0; t < lens[b]; ++t) {
            const std::size_t row =
                ((static_cast<std::size_t>(table[b * kMaxPages + t / kPage]) * kPage + t % kPage) *
                     kKvHeads +
                 kv) *
                kDim;
            want += scores[t] / total * static_cast<float>(v[row + d]);
          }
          const double g = static_cast<float>(got[(b * kQHeads + h) * kDim + d]);
          worst = std::max(worst, std::abs(g - want));
        }
      }
    }
    std::printf("decode_attention: 2 sequences (37 and 5 keys), largest error %.2g\n", worst);
    return worst < 1.6e-2 ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
