// The KV-cache append of a prefill step: two sequences' new keys and values written into the
// pages of a paged cache in place, K turned by RoPE on its way in, then one decode step that
// reads them. The cache is read back and checked against the rotation done on the host in
// double precision, and the decode against a float64 attention over the same rows.
//
// Without a GPU the example checks the arguments of both ops, prints what it would run, and
// skips the run.
#include <kreg/kreg.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

namespace {

constexpr int kKvHeads = 2;
constexpr int kQHeads = 4;
constexpr int kDim = 64;
constexpr int kPage = 16;
constexpr int kPages = 6;
constexpr int kMaxPages = 2;
constexpr double kBase = 10000.0;

// Adjacent-pair RoPE of one head at `position`, as ops::rope turns it.
void turn(std::vector<double>& head, int position) {
  for (std::size_t i = 0; i < kDim / 2; ++i) {
    const double angle = position * std::pow(kBase, -2.0 * static_cast<double>(i) / kDim);
    const double x0 = head[2 * i];
    const double x1 = head[2 * i + 1];
    head[2 * i] = x0 * std::cos(angle) - x1 * std::sin(angle);
    head[2 * i + 1] = x0 * std::sin(angle) + x1 * std::cos(angle);
  }
}

}  // namespace

int main() {
  try {
    // Sequence 0 takes 20 tokens into pages 4 and 1; sequence 1 takes 7 into page 3. The slot of
    // token t of sequence b is page * kPage + t % kPage; positions count from 0 in each.
    const std::vector<int> table = {4, 1, 3, 0};
    const std::vector<int> lens = {20, 7};
    std::vector<int> slots;
    std::vector<int> positions;
    for (int b = 0; b < 2; ++b) {
      for (int t = 0; t < lens[b]; ++t) {
        slots.push_back(table[b * kMaxPages + t / kPage] * kPage + t % kPage);
        positions.push_back(t);
      }
    }
    const auto tokens = static_cast<std::int64_t>(slots.size());
    const auto value = [](std::size_t i, double salt) {
      return static_cast<float>(std::sin(0.61 * static_cast<double>(i) + salt));
    };
    const std::size_t row = static_cast<std::size_t>(kKvHeads) * kDim;
    std::vector<kreg::bfloat16> k(tokens * row);
    std::vector<kreg::bfloat16> v(k.size());
    std::vector<kreg::bfloat16> q(std::size_t{2} * kQHeads * kDim);
    for (std::size_t i = 0; i < k.size(); ++i) k[i] = kreg::bfloat16(value(i, 0.4));
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = kreg::bfloat16(value(i, 1.3));
    for (std::size_t i = 0; i < q.size(); ++i) q[i] = kreg::bfloat16(value(i, 2.2));

    const kreg::Shape cache_shape{kPages, kPage, kKvHeads, kDim};
    if (kreg::devices().empty()) {
      std::printf("no GPU: would append %lld tokens into a [%d, %d, %d, %d] cache; run skipped\n",
                  static_cast<long long>(tokens), kPages, kPage, kKvHeads, kDim);
      return 0;
    }
    const std::vector<kreg::bfloat16> zeros(static_cast<std::size_t>(kPages) * kPage * row,
                                            kreg::bfloat16(0.0F));
    const kreg::Array k_cache = kreg::Array::from_data(zeros, cache_shape);
    const kreg::Array v_cache = kreg::Array::from_data(zeros, cache_shape);
    kreg::ops::KvAppendOptions options;
    options.rope_positions = kreg::Array::from_data(positions, {tokens});
    kreg::ops::kv_append(k_cache, v_cache, kreg::Array::from_data(k, {tokens, kKvHeads, kDim}),
                         kreg::Array::from_data(v, {tokens, kKvHeads, kDim}),
                         kreg::Array::from_data(slots, {tokens}), options);

    // What the cache holds, against K turned on the host.
    const std::vector<kreg::bfloat16> k_got = k_cache.to_vector<kreg::bfloat16>();
    const std::vector<kreg::bfloat16> v_got = v_cache.to_vector<kreg::bfloat16>();
    std::vector<double> k_want(zeros.size(), 0.0);
    double worst_cache = 0;
    for (std::int64_t t = 0; t < tokens; ++t) {
      for (std::size_t h = 0; h < kKvHeads; ++h) {
        std::vector<double> head(kDim);
        for (int d = 0; d < kDim; ++d) head[d] = static_cast<float>(k[t * row + h * kDim + d]);
        turn(head, positions[t]);
        const std::size_t at = static_cast<std::size_t>(slots[t]) * row + h * kDim;
        for (int d = 0; d < kDim; ++d) {
          k_want[at + d] = head[d];
          worst_cache =
              std::max({worst_cache, std::abs(static_cast<float>(k_got[at + d]) - head[d]),
                        std::abs(static_cast<double>(static_cast<float>(v_got[at + d])) -
                                 static_cast<float>(v[t * row + h * kDim + d]))});
        }
      }
    }

    // One decode step over the appended keys (q as it is: the example leaves it unturned).
    const kreg::Array out = kreg::ops::decode_attention(
        kreg::Array::from_data(q, {2, kQHeads, kDim}), k_cache, v_cache,
        kreg::Array::from_data(table, {2, kMaxPages}), kreg::Array::from_data(lens, {2}));
    const std::vector<kreg::bfloat16> got = out.to_vector<kreg::bfloat16>();
    double worst_decode = 0;
    for (int b = 0; b < 2; ++b) {
      for (int h = 0; h < kQHeads; ++h) {
        const int kv = h / (kQHeads / kKvHeads);
        std::vector<double> weights;
        for (int t = 0; t < lens[b]; ++t) {
          const std::size_t at =
              static_cast<std::size_t>(table[b * kMaxPages + t / kPage] * kPage + t % kPage) * row +
              static_cast<std::size_t>(kv) * kDim;
          double s = 0;
          for (int d = 0; d < kDim; ++d) {
            s += static_cast<float>(q[(b * kQHeads + h) * kDim + d]) *
                 static_cast<float>(kreg::bfloat16(static_cast<float>(k_want[at + d])));
          }
          weights.push_back(s / std::sqrt(static_cast<double>(kDim)));
        }
        const double top = *std::max_element(weights.begin(), weights.end());
        double total = 0;
        for (double& w : weights) total += (w = std::exp(w - top));
        for (int d = 0; d < kDim; ++d) {
          double want = 0;
          for (int t = 0; t < lens[b]; ++t) {
            const std::size_t at =
                static_cast<std::size_t>(table[b * kMaxPages + t / kPage] * kPage + t % kPage) *
                    row +
                static_cast<std::size_t>(kv) * kDim;
            want += weights[t] / total * static_cast<float>(v_got[at + d]);
          }
          worst_decode = std::max(
              worst_decode, std::abs(static_cast<float>(got[(b * kQHeads + h) * kDim + d]) - want));
        }
      }
    }
    std::printf(
        "kv_append: %lld tokens with RoPE, largest cache error %.2g; decode after it %.2g\n",
        static_cast<long long>(tokens), worst_cache, worst_decode);
    return worst_cache < 2e-2 && worst_decode < 1.6e-2 ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
