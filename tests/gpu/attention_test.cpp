// ops::attention (prefill) on random inputs against a float64 reference computed from the
// same (rounded) inputs: every head dim, causal and not, GQA ratios 1, 4 and 8, fixed and
// ragged batches, odd lengths (1, 17, 4099), fewer queries than keys, additive and boolean
// masks with rows that hide every key, sliding windows and soft-capping. Outputs are
// poisoned, and the rows of k and v past every sequence are NaN.
#include "gpu/poison.hpp"
#include "test_support.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

namespace kreg {
namespace {

using test::poison;

enum class MaskKind { None, Additive, Boolean };

struct Case {
  int q_heads = 4;
  int kv_heads = 4;
  int head_dim = 128;
  std::vector<int> q_lens;  // one per sequence
  std::vector<int> k_lens;  // empty: the q lengths
  bool packed = false;      // the cu_seqlens form; otherwise every length must be the same
  MaskKind mask = MaskKind::None;
  bool mask_per_head = false;
  ops::AttentionOptions options;
};

std::string describe(const Case& c) {
  std::string lens;
  for (std::size_t b = 0; b < c.q_lens.size(); ++b) {
    lens += std::to_string(c.q_lens[b]) + "x" +
            std::to_string(c.k_lens.empty() ? c.q_lens[b] : c.k_lens[b]) + " ";
  }
  return "q_heads " + std::to_string(c.q_heads) + ", kv_heads " + std::to_string(c.kv_heads) +
         ", head_dim " + std::to_string(c.head_dim) + ", lens " + lens +
         (c.packed ? "packed, " : "") + "causal " + std::to_string(c.options.causal) +
         ", soft_cap " + std::to_string(c.options.soft_cap) + ", window " +
         std::to_string(c.options.window_left) + ", mask " +
         std::to_string(static_cast<int>(c.mask));
}

template <class T>
class AttentionGpu : public ::testing::Test {
 protected:
  void SetUp() override { KREG_REQUIRE_GPU(); }

  void check(Case c) {
    if (c.k_lens.empty()) c.k_lens = c.q_lens;
    const int batch = static_cast<int>(c.q_lens.size());
    const int d = c.head_dim;
    const int group = c.q_heads / c.kv_heads;
    std::vector<int> cu_q{0};
    std::vector<int> cu_k{0};
    for (int b = 0; b < batch; ++b) {
      cu_q.push_back(cu_q.back() + c.q_lens[b]);
      cu_k.push_back(cu_k.back() + c.k_lens[b]);
    }
    const int max_q = *std::max_element(c.q_lens.begin(), c.q_lens.end());
    const int max_k = *std::max_element(c.k_lens.begin(), c.k_lens.end());
    const int spare = 64;  // NaN rows of k and v after the last sequence's
    const std::size_t q_row = static_cast<std::size_t>(c.q_heads) * d;
    const std::size_t k_row = static_cast<std::size_t>(c.kv_heads) * d;

    const auto random_values = [&](std::size_t n, std::vector<T>& values,
                                   std::vector<double>& exact) {
      test::random_values(rng_, n, values, exact);
    };
    std::vector<T> q, k, v;
    std::vector<double> qx, kx, vx;
    random_values(cu_q.back() * q_row, q, qx);
    random_values((cu_k.back() + (c.packed ? spare : 0)) * k_row, k, kx);
    random_values(k.size(), v, vx);
    const T nan(std::numeric_limits<float>::quiet_NaN());
    std::fill(k.begin() + cu_k.back() * k_row, k.end(), nan);
    std::fill(v.begin() + cu_k.back() * k_row, v.end(), nan);

    // The mask, [batch, heads or 1, max_q, max_k]: random additive values with a few -inf, or
    // keys kept at random; query 0 of each sequence hides every key.
    const int mask_heads = c.mask_per_head ? c.q_heads : 1;
    const std::size_t mask_size = static_cast<std::size_t>(batch) * mask_heads * max_q * max_k;
    std::vector<T> additive;
    std::vector<double> additive_x;
    std::vector<bool> keep;
    if (c.mask == MaskKind::Additive) {
      random_values(mask_size, additive, additive_x);
      for (std::size_t i = 0; i < mask_size; ++i) {
        if ((i / max_k) % max_q == 0 || i % 7 == 3) {
          additive[i] = T(-std::numeric_limits<float>::infinity());
          additive_x[i] = -std::numeric_limits<double>::infinity();
        }
      }
    } else if (c.mask == MaskKind::Boolean) {
      std::bernoulli_distribution coin(0.7);
      keep.resize(mask_size);
      for (std::size_t i = 0; i < mask_size; ++i) keep[i] = (i / max_k) % max_q != 0 && coin(rng_);
    }

    // The reference, in float64.
    const double scale = c.options.scale.value_or(1.0 / std::sqrt(static_cast<double>(d)));
    std::vector<double> want(q.size(), 0.0);
    for (int b = 0; b < batch; ++b) {
      const int shift = c.k_lens[b] - c.q_lens[b];
      for (int h = 0; h < c.q_heads; ++h) {
        const int kvh = h / group;
        const std::size_t mask_at =
            (static_cast<std::size_t>(b) * mask_heads + (c.mask_per_head ? h : 0)) * max_q * max_k;
        for (int i = 0; i < c.q_lens[b]; ++i) {
          const double* qi = &qx[(cu_q[b] + i) * q_row + h * d];
          std::vector<double> scores;
          std::vector<std::size_t> rows;
          for (int j = 0; j < c.k_lens[b]; ++j) {
            if (c.options.causal && j > i + shift) continue;
            if (c.options.window_left >= 0 && j < i + shift - c.options.window_left) continue;
            const std::size_t m = mask_at + static_cast<std::size_t>(i) * max_k + j;
            if (c.mask == MaskKind::Boolean && !keep[m]) continue;
            const std::size_t at = (cu_k[b] + j) * k_row + kvh * d;
            double s = 0;
            for (int e = 0; e < d; ++e) s += qi[e] * kx[at + e];
            s *= scale;
            if (c.options.soft_cap > 0) s = c.options.soft_cap * std::tanh(s / c.options.soft_cap);
            if (c.mask == MaskKind::Additive) {
              if (std::isinf(additive_x[m])) continue;
              s += additive_x[m];
            }
            scores.push_back(s);
            rows.push_back(at);
          }
          if (scores.empty()) continue;
          const double top = *std::max_element(scores.begin(), scores.end());
          double total = 0;
          for (double& s : scores) total += (s = std::exp(s - top));
          double* out = &want[(cu_q[b] + i) * q_row + h * d];
          for (std::size_t j = 0; j < scores.size(); ++j) {
            for (int e = 0; e < d; ++e) out[e] += scores[j] / total * vx[rows[j] + e];
          }
        }
      }
    }

    ops::AttentionOptions options = c.options;
    if (c.mask == MaskKind::Additive) {
      options.mask = Array::from_data(additive, {batch, mask_heads, max_q, max_k});
    } else if (c.mask == MaskKind::Boolean) {
      options.mask = Array::from_data(keep, {batch, mask_heads, max_q, max_k});
    }
    poison(q.size() * sizeof(T), 2);
    Array got;
    if (c.packed) {
      got = ops::attention(Array::from_data(q, {cu_q.back(), c.q_heads, d}),
                           Array::from_data(k, {cu_k.back() + spare, c.kv_heads, d}),
                           Array::from_data(v, {cu_k.back() + spare, c.kv_heads, d}),
                           Array::from_data(cu_q, {batch + 1}), Array::from_data(cu_k, {batch + 1}),
                           options);
      ASSERT_EQ(got.shape(), (Shape{cu_q.back(), c.q_heads, d}));
    } else {
      got = ops::attention(Array::from_data(q, {batch, max_q, c.q_heads, d}),
                           Array::from_data(k, {batch, max_k, c.kv_heads, d}),
                           Array::from_data(v, {batch, max_k, c.kv_heads, d}), options);
      ASSERT_EQ(got.shape(), (Shape{batch, max_q, c.q_heads, d}));
    }
    const std::vector<T> values = got.to_vector<T>();
    for (std::size_t i = 0; i < want.size(); ++i) {
      const auto g = static_cast<double>(static_cast<float>(values[i]));
      ASSERT_TRUE(std::abs(g - want[i]) <= tolerance())
          << describe(c) << ": element " << i << " (token " << i / q_row << ", head "
          << i / d % c.q_heads << ", dim " << i % d << ") is " << g << ", want " << want[i];
    }
  }

  // Outputs are convex sums of values in [-1, 1]; the weights are rounded to T before they
  // multiply v, and T's rounding of the result dominates.
  static double tolerance() { return std::is_same_v<T, half> ? 2e-3 : 1.6e-2; }

  std::mt19937 rng_{47};
};

using HalfTypes = ::testing::Types<half, bfloat16>;
TYPED_TEST_SUITE(AttentionGpu, HalfTypes);

TYPED_TEST(AttentionGpu, EveryHeadDimCausalAndNot) {
  for (const int d : {64, 128, 256}) {
    for (const bool causal : {false, true}) {
      Case c;
      c.head_dim = d;
      c.q_heads = 2;
      c.kv_heads = 2;
      c.q_lens = {130, 130};
      c.options.causal = causal;
      this->check(c);
    }
  }
}

TYPED_TEST(AttentionGpu, GroupedQueryHeads) {
  for (const int group : {1, 4, 8}) {
    Case c;
    c.kv_heads = 2;
    c.q_heads = 2 * group;
    c.q_lens = {77};
    c.options.causal = true;
    this->check(c);
  }
}

TYPED_TEST(AttentionGpu, OddLengthsFixed) {
  for (const int len : {1, 17}) {
    Case c;
    c.q_lens = {len, len, len};
    this->check(c);
  }
}

TYPED_TEST(AttentionGpu, LongSequence4099) {
  for (const bool causal : {false, true}) {
    Case c;
    c.q_heads = 1;
    c.kv_heads = 1;
    c.head_dim = 64;
    c.q_lens = {4099};
    c.options.causal = causal;
    this->check(c);
  }
}

// Sequences of one length at head dims 64 and 128 (the copy-engine kernel on Hopper), long
// enough that the key tiles cycle through their stages several times, with a window and a
// soft-cap.
TYPED_TEST(AttentionGpu, ManyKeyTilesWindowAndSoftCap) {
  for (const int window : {-1, 200}) {
    for (const bool causal : {false, true}) {
      Case c;
      c.head_dim = causal == (window >= 0) ? 64 : 128;
      c.q_heads = 4;
      c.kv_heads = 1;
      c.q_lens = {520, 520};
      c.k_lens = {600, 600};
      c.options.causal = causal;
      c.options.window_left = window;
      if (window >= 0) {
        c.options.scale = 0.3F;
        c.options.soft_cap = 20.0F;
      }
      this->check(c);
    }
  }
}

// More query tiles than a GPU has multiprocessors (2 x 32 heads x 3 tiles), so that the
// copy-engine kernel's blocks take several items each; with more queries than keys and a
// causal mask, the first two tiles of each head see no key at all.
TYPED_TEST(AttentionGpu, MoreTilesThanMultiprocessors) {
  for (const int d : {64, 128}) {
    for (const bool causal : {false, true}) {
      Case c;
      c.head_dim = d;
      c.q_heads = 32;
      c.kv_heads = 8;
      c.q_lens = {300, 300};
      c.k_lens = causal ? std::vector<int>{40, 40} : std::vector<int>{260, 260};
      c.options.causal = causal;
      this->check(c);
    }
  }
  // Items of unequal cost, more than blocks: taken in pairs of a head's tiles, with an even
  // (768) and an odd (600) number of tiles a head.
  for (const int len : {768, 600}) {
    Case c;
    c.q_heads = 16;
    c.kv_heads = 4;
    c.q_lens = {len, len};
    c.k_lens = {len, len};
    c.options.causal = true;
    this->check(c);
    c.options.causal = false;
    c.options.window_left = 200;
    this->check(c);
  }
}

TYPED_TEST(AttentionGpu, FewerQueriesThanKeysAlignAtTheEnd) {
  for (const bool causal : {false, true}) {
    Case c;
    c.q_heads = 8;
    c.kv_heads = 2;
    c.q_lens = {37, 1};
    c.k_lens = {300, 300};
    c.packed = true;
    c.options.causal = causal;
    this->check(c);
    c.q_lens = {37, 37};
    c.packed = false;
    this->check(c);
  }
}

TYPED_TEST(AttentionGpu, MoreQueriesThanKeysCausalHidesTheFirst) {
  Case c;
  c.q_lens = {100};
  c.k_lens = {40};  // queries 0 to 59 see no key: zeros
  c.options.causal = true;
  this->check(c);
}

TYPED_TEST(AttentionGpu, RaggedPackedBatch) {
  for (const bool causal : {false, true}) {
    Case c;
    c.q_heads = 8;
    c.kv_heads = 4;
    c.packed = true;
    c.q_lens = {1, 17, 64, 0, 130, 65};
    c.k_lens = {1, 40, 64, 12, 130, 200};
    c.options.causal = causal;
    this->check(c);
  }
}

TYPED_TEST(AttentionGpu, SlidingWindow) {
  for (const int window : {0, 31, 500}) {
    for (const bool causal : {false, true}) {
      Case c;
      c.head_dim = 64;
      c.q_lens = {200, 7};
      c.k_lens = {260, 7};
      c.packed = true;
      c.options.causal = causal;
      c.options.window_left = window;
      this->check(c);
    }
  }
}

TYPED_TEST(AttentionGpu, SoftCapAndScale) {
  Case c;
  c.q_heads = 4;
  c.kv_heads = 1;
  c.head_dim = 256;
  c.q_lens = {90};
  c.options.scale = 0.5F;  // scores well past the cap
  c.options.soft_cap = 5.0F;
  c.options.causal = true;
  this->check(c);
}

TYPED_TEST(AttentionGpu, AdditiveMask) {
  for (const bool per_head : {false, true}) {
    Case c;
    c.q_lens = {70, 70};
    c.k_lens = {150, 150};
    c.mask = MaskKind::Additive;
    c.mask_per_head = per_head;
    this->check(c);
  }
}

TYPED_TEST(AttentionGpu, BooleanMaskPackedWithSoftCap) {
  Case c;
  c.q_heads = 8;
  c.kv_heads = 2;
  c.packed = true;
  c.q_lens = {33, 90};
  c.k_lens = {33, 120};
  c.mask = MaskKind::Boolean;
  c.options.soft_cap = 30.0F;
  c.options.causal = true;
  this->check(c);
}

}  // namespace
}  // namespace kreg
