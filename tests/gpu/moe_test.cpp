// ops::moe_route, ops::moe_experts and ops::moe on the GPU, against float64 references on the
// host: the router's ids exactly (ties to the lower expert) and its weights, with and without
// renormalizing, NaN and -inf rows; whole layers at odd sizes (columns and k that leave
// partial blocks and chunks), both tile heights, experts that get no token, every token on one
// expert, ids outside the experts, and no tokens at all. Outputs are poisoned first.
#include "gpu/poison.hpp"
#include "test_support.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <string>

namespace kreg {
namespace {

struct Choice {
  int expert;
  double weight;
};

// Softmax, then the top k (higher first, the lower expert on a tie), as moe_route defines it.
std::vector<Choice> reference_route(const std::vector<double>& logits, int k, bool renormalize) {
  const double top = *std::max_element(logits.begin(), logits.end());
  std::vector<double> p(logits.size());
  double sum = 0.0;
  for (std::size_t e = 0; e < logits.size(); ++e) sum += p[e] = std::exp(logits[e] - top);
  std::vector<int> order(logits.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return logits[a] > logits[b]; });
  std::vector<Choice> out;
  double chosen = 0.0;
  for (int r = 0; r < k; ++r) {
    out.push_back({order[r], p[order[r]] / sum});
    chosen += out.back().weight;
  }
  if (renormalize) {
    for (Choice& c : out) c.weight /= chosen;
  }
  return out;
}

template <class T>
struct HostExperts {
  std::int64_t count = 0;
  std::int64_t hidden = 0;
  std::int64_t ffn = 0;
  std::vector<T> gate, up, down;
  std::vector<double> gate_d, up_d, down_d;

  ops::MoeExperts upload() const {
    return {Array::from_data(gate, {count, ffn, hidden}),
            Array::from_data(up, {count, ffn, hidden}),
            Array::from_data(down, {count, hidden, ffn})};
  }

  // Expert e's output for one row of x, in float64.
  std::vector<double> apply(int e, const double* x) const {
    std::vector<double> h(static_cast<std::size_t>(ffn));
    for (std::int64_t f = 0; f < ffn; ++f) {
      double g = 0.0;
      double u = 0.0;
      const auto row = static_cast<std::size_t>((e * ffn + f) * hidden);
      for (std::int64_t c = 0; c < hidden; ++c) {
        g += gate_d[row + c] * x[c];
        u += up_d[row + c] * x[c];
      }
      h[f] = g / (1.0 + std::exp(-g)) * u;
    }
    std::vector<double> y(static_cast<std::size_t>(hidden));
    for (std::int64_t c = 0; c < hidden; ++c) {
      double s = 0.0;
      const auto row = static_cast<std::size_t>((e * hidden + c) * ffn);
      for (std::int64_t f = 0; f < ffn; ++f) s += down_d[row + f] * h[f];
      y[c] = s;
    }
    return y;
  }
};

template <class T>
HostExperts<T> random_experts(std::mt19937& rng, std::int64_t count, std::int64_t hidden,
                              std::int64_t ffn) {
  HostExperts<T> w;
  w.count = count;
  w.hidden = hidden;
  w.ffn = ffn;
  const auto size = static_cast<std::size_t>(count * hidden * ffn);
  test::random_values(rng, size, w.gate, w.gate_d);
  test::random_values(rng, size, w.up, w.up_d);
  test::random_values(rng, size, w.down, w.down_d);
  // Keep the intermediate near 1 whatever the sizes, so that errors read as relative ones.
  const double s = 2.0 / std::sqrt(static_cast<double>(hidden));
  for (std::size_t i = 0; i < size; ++i) {
    w.gate[i] = T(static_cast<float>(w.gate_d[i] * s));
    w.gate_d[i] = static_cast<float>(w.gate[i]);
    w.up[i] = T(static_cast<float>(w.up_d[i] * s));
    w.up_d[i] = static_cast<float>(w.up[i]);
  }
  return w;
}

template <class T>
class MoeGpu : public ::testing::Test {
 protected:
  void SetUp() override { KREG_REQUIRE_GPU(); }

  // moe_experts over explicit choices, against float64; returns the relative error.
  double check_layer(const HostExperts<T>& w, std::int64_t tokens, int k,
                     const std::vector<int>& ids, const std::vector<float>& weights,
                     const std::string& what) {
    std::vector<T> xv;
    std::vector<double> xd;
    test::random_values(rng_, static_cast<std::size_t>(tokens * w.hidden), xv, xd);
    test::poison(static_cast<std::size_t>(tokens * w.hidden) * sizeof(T), 2);
    const Array out = ops::moe_experts(Array::from_data(xv, {tokens, w.hidden}),
                                       Array::from_data(weights, {tokens, k}),
                                       Array::from_data(ids, {tokens, k}), w.upload());
    EXPECT_EQ(out.shape(), (Shape{tokens, w.hidden})) << what;
    const std::vector<T> got = out.to_vector<T>();
    double err = 0.0;
    double norm = 0.0;
    for (std::int64_t t = 0; t < tokens; ++t) {
      std::vector<double> want(static_cast<std::size_t>(w.hidden), 0.0);
      for (int j = 0; j < k; ++j) {
        const int e = ids[static_cast<std::size_t>(t * k + j)];
        if (e < 0 || e >= w.count) continue;
        const std::vector<double> y = w.apply(e, &xd[static_cast<std::size_t>(t * w.hidden)]);
        for (std::int64_t c = 0; c < w.hidden; ++c) {
          want[c] += static_cast<double>(weights[static_cast<std::size_t>(t * k + j)]) * y[c];
        }
      }
      for (std::int64_t c = 0; c < w.hidden; ++c) {
        const double g = static_cast<float>(got[static_cast<std::size_t>(t * w.hidden + c)]);
        EXPECT_TRUE(std::isfinite(g)) << what << ": token " << t << ", column " << c;
        if (!std::isfinite(g)) return 1.0;
        err += (g - want[c]) * (g - want[c]);
        norm += want[c] * want[c];
      }
    }
    return norm == 0.0 ? std::sqrt(err) : std::sqrt(err / norm);
  }

  // Random distinct choices for each token, and random positive weights.
  void random_choices(std::int64_t tokens, int k, std::int64_t experts, std::vector<int>& ids,
                      std::vector<float>& weights) {
    ids.clear();
    weights.clear();
    std::vector<int> all(static_cast<std::size_t>(experts));
    std::iota(all.begin(), all.end(), 0);
    std::uniform_real_distribution<float> weight(0.1F, 1.0F);
    for (std::int64_t t = 0; t < tokens; ++t) {
      std::shuffle(all.begin(), all.end(), rng_);
      for (int j = 0; j < k; ++j) {
        ids.push_back(all[static_cast<std::size_t>(j)]);
        weights.push_back(weight(rng_));
      }
    }
  }

  static double limit() { return std::is_same_v<T, half> ? 2e-3 : 1.2e-2; }

  std::mt19937 rng_{4321};
};

using HalfTypes = ::testing::Types<half, bfloat16>;
TYPED_TEST_SUITE(MoeGpu, HalfTypes);

template <class T>
void check_route(std::mt19937& rng, std::int64_t tokens, std::int64_t experts, int k,
                 bool renormalize) {
  std::vector<T> lv;
  std::vector<double> ld;
  test::random_values(rng, static_cast<std::size_t>(tokens * experts), lv, ld);
  for (double& v : ld) v *= 4.0;  // wider than [-1, 1): the softmax is not flat
  for (std::size_t i = 0; i < lv.size(); ++i) {
    lv[i] = T(static_cast<float>(ld[i]));
    ld[i] = static_cast<float>(lv[i]);
  }
  test::poison(static_cast<std::size_t>(tokens * k) * 4, 4);
  const ops::MoeRouting r = ops::moe_route(Array::from_data(lv, {tokens, experts}), k, renormalize);
  ASSERT_EQ(r.weights.shape(), (Shape{tokens, k}));
  ASSERT_EQ(r.ids.dtype(), Dtype::Int32);
  const std::vector<float> w = r.weights.to_vector<float>();
  const std::vector<int> ids = r.ids.to_vector<int>();
  for (std::int64_t t = 0; t < tokens; ++t) {
    const std::vector<double> row(ld.begin() + t * experts, ld.begin() + (t + 1) * experts);
    const std::vector<Choice> want = reference_route(row, k, renormalize);
    for (int j = 0; j < k; ++j) {
      const auto at = static_cast<std::size_t>(t * k + j);
      ASSERT_EQ(ids[at], want[j].expert)
          << experts << " experts, top " << k << ", token " << t << ", choice " << j;
      ASSERT_NEAR(w[at], want[j].weight, 2e-6 + 1e-5 * want[j].weight)
          << experts << " experts, top " << k << ", token " << t << ", choice " << j;
    }
  }
}

TYPED_TEST(MoeGpu, RouteAgainstFloat64) {
  for (const std::int64_t experts : {8, 64, 128, 257, 1024}) {
    for (const int k : {1, 2, 8}) {
      for (const bool renormalize : {true, false}) {
        check_route<TypeParam>(this->rng_, 37, experts, k, renormalize);
      }
    }
  }
}

TEST(MoeRouteGpu, Float32LogitsAndManyTokens) {
  KREG_REQUIRE_GPU();
  std::mt19937 rng(99);
  check_route<float>(rng, 1000, 64, 8, true);
  check_route<float>(rng, 3, 60, 6, false);
}

TEST(MoeRouteGpu, NanAndMinusInfinityRows) {
  KREG_REQUIRE_GPU();
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  // Row 0: a NaN among numbers; row 1: all -inf; row 2: -inf but for two experts.
  const std::vector<float> logits = {1.0F, nan,  3.0F, 2.0F, -inf, -inf,
                                     -inf, -inf, -inf, 0.5F, -inf, 0.5F};
  test::poison(sizeof(float) * 6, 4);
  const ops::MoeRouting r = ops::moe_route(Array::from_data(logits, {3, 4}), 2, false);
  const std::vector<float> w = r.weights.to_vector<float>();
  const std::vector<int> ids = r.ids.to_vector<int>();
  EXPECT_EQ(ids[0], 2);
  EXPECT_EQ(ids[1], 3);
  EXPECT_TRUE(std::isnan(w[0]) && std::isnan(w[1]));
  EXPECT_EQ(ids[2], 0);
  EXPECT_EQ(ids[3], 1);
  EXPECT_FLOAT_EQ(w[2], 0.25F);
  EXPECT_FLOAT_EQ(w[3], 0.25F);
  EXPECT_EQ(ids[4], 1);
  EXPECT_EQ(ids[5], 3);
  EXPECT_FLOAT_EQ(w[4], 0.5F);
  EXPECT_FLOAT_EQ(w[5], 0.5F);
}

// 40 columns of ffn and 136 of hidden leave partial column blocks in both products; k of 136
// and 40 leave partial chunks; 300 tokens x 4 choices over 8 experts take 32-row tiles.
TYPED_TEST(MoeGpu, LayersAgainstFloat64) {
  struct Shape3 {
    std::int64_t experts, hidden, ffn, tokens;
    int k;
  };
  for (const Shape3 s :
       {Shape3{8, 136, 40, 1, 2}, Shape3{8, 136, 40, 17, 2}, Shape3{8, 64, 48, 300, 4},
        Shape3{64, 512, 96, 16, 8}, Shape3{16, 1024, 256, 5, 3}}) {
    const HostExperts<TypeParam> w =
        random_experts<TypeParam>(this->rng_, s.experts, s.hidden, s.ffn);
    std::vector<int> ids;
    std::vector<float> weights;
    this->random_choices(s.tokens, s.k, s.experts, ids, weights);
    const std::string what = std::to_string(s.experts) + " experts, " + std::to_string(s.tokens) +
                             " tokens x " + std::to_string(s.k) + ", hidden " +
                             std::to_string(s.hidden) + ", ffn " + std::to_string(s.ffn);
    EXPECT_LT(this->check_layer(w, s.tokens, s.k, ids, weights, what), this->limit()) << what;
  }
}

// Every token on one expert (more rows than a tile, 100 on expert 5 of 8: the other experts
// get none), ids outside the experts (which add nothing), and repeated choices.
TYPED_TEST(MoeGpu, CrowdedIdleAndForeignExperts) {
  const HostExperts<TypeParam> w = random_experts<TypeParam>(this->rng_, 8, 72, 56);
  std::vector<int> ids(100, 5);
  std::vector<float> weights(100, 0.75F);
  EXPECT_LT(this->check_layer(w, 100, 1, ids, weights, "every token on expert 5"), this->limit());

  ids = {3, -1, 8, 3, 1000, 0, 7, 7};  // four tokens, two choices each
  weights = {0.5F, 2.0F, 3.0F, 0.25F, 1.0F, 1.0F, 0.5F, 0.5F};
  EXPECT_LT(this->check_layer(w, 4, 2, ids, weights, "foreign and repeated ids"), this->limit());
}

TYPED_TEST(MoeGpu, WholeLayerFromLogits) {
  using T = TypeParam;
  const std::int64_t tokens = 24;
  const std::int64_t experts = 16;
  const int k = 4;
  const HostExperts<T> w = random_experts<T>(this->rng_, experts, 128, 64);
  std::vector<T> lv;
  std::vector<double> ld;
  test::random_values(this->rng_, static_cast<std::size_t>(tokens * experts), lv, ld);
  // moe = moe_route then moe_experts: the same choices and weights, run by hand here.
  std::vector<int> ids;
  std::vector<float> weights;
  for (std::int64_t t = 0; t < tokens; ++t) {
    const std::vector<double> row(ld.begin() + t * experts, ld.begin() + (t + 1) * experts);
    for (const Choice& c : reference_route(row, k, true)) {
      ids.push_back(c.expert);
      weights.push_back(static_cast<float>(c.weight));
    }
  }
  std::vector<T> xv;
  std::vector<double> xd;
  test::random_values(this->rng_, static_cast<std::size_t>(tokens * 128), xv, xd);
  const Array x = Array::from_data(xv, {tokens, 128});
  test::poison(static_cast<std::size_t>(tokens * 128) * sizeof(T), 2);
  const std::vector<T> whole =
      ops::moe(x, Array::from_data(lv, {tokens, experts}), w.upload(), {k, true})
          .template to_vector<T>();
  const std::vector<T> by_hand = ops::moe_experts(x, Array::from_data(weights, {tokens, k}),
                                                  Array::from_data(ids, {tokens, k}), w.upload())
                                     .template to_vector<T>();
  double err = 0.0;
  double norm = 0.0;
  for (std::size_t i = 0; i < whole.size(); ++i) {
    const double a = static_cast<float>(whole[i]);
    const double b = static_cast<float>(by_hand[i]);
    ASSERT_TRUE(std::isfinite(a)) << i;
    err += (a - b) * (a - b);
    norm += b * b;
  }
  EXPECT_LT(std::sqrt(err / norm), 1e-3);
}

TEST(MoeRouteGpu, NoTokens) {
  KREG_REQUIRE_GPU();
  const ops::MoeRouting r = ops::moe_route(Array::from_data<float>({}, {0, 8}), 2);
  EXPECT_EQ(r.ids.shape(), (Shape{0, 2}));
  EXPECT_TRUE(r.ids.to_vector<int>().empty());
  const Array none = Array::from_data<bfloat16>({}, {0, 16});
  const ops::MoeExperts experts{Array::empty({2, 8, 16}, Dtype::BFloat16),
                                Array::empty({2, 8, 16}, Dtype::BFloat16),
                                Array::empty({2, 16, 8}, Dtype::BFloat16)};
  const Array out = ops::moe_experts(none, Array::from_data<float>({}, {0, 2}),
                                     Array::from_data<int>({}, {0, 2}), experts);
  EXPECT_EQ(out.shape(), (Shape{0, 16}));
  EXPECT_TRUE(out.to_vector<bfloat16>().empty());
}

}  // namespace
}  // namespace kreg
