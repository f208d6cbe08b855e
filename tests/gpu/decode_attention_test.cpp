// ops::decode_attention on random paged caches against a float64 reference computed from the
// same (rounded) inputs: every head dim, GQA ratios 1 to 16, lengths of 1, 17 and 4099, pages
// of 1 to 256 tokens partly filled and scattered, soft-capping, windows, sequences without
// keys, lengths past the table. Outputs are poisoned; table entries past a sequence point at
// a page of NaNs.
#include "gpu/poison.hpp"
#include "test_support.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>

namespace kreg {
namespace {

using test::expect_error;
using test::poison;

struct Case {
  int q_heads = 8;
  int kv_heads = 8;
  int head_dim = 128;
  int page_size = 16;
  std::vector<int> lens;
  int spare_pages = 0;   // table entries past the longest sequence
  int table_tokens = 0;  // if set, the table holds this many tokens, whatever the lengths
  ops::DecodeAttentionOptions options;
};

std::string describe(const Case& c) {
  std::string lens;
  for (int l : c.lens) lens += std::to_string(l) + " ";
  return "q_heads " + std::to_string(c.q_heads) + ", kv_heads " + std::to_string(c.kv_heads) +
         ", head_dim " + std::to_string(c.head_dim) + ", page " + std::to_string(c.page_size) +
         ", lens " + lens + "soft_cap " + std::to_string(c.options.soft_cap) + ", window " +
         std::to_string(c.options.window_left) + ", splits " + std::to_string(c.options.splits);
}

template <class T>
class DecodeAttentionGpu : public ::testing::Test {
 protected:
  void SetUp() override { KREG_REQUIRE_GPU(); }

  void check(const Case& c, double tolerance) {
    const int batch = static_cast<int>(c.lens.size());
    const int d = c.head_dim;
    const int group = c.q_heads / c.kv_heads;
    const std::int64_t row = static_cast<std::int64_t>(c.kv_heads) * d;  // one token's K
    int longest = 1;
    for (int l : c.lens) longest = std::max(longest, l);
    const int table_tokens = c.table_tokens > 0 ? c.table_tokens : longest;
    const int max_pages = (table_tokens + c.page_size - 1) / c.page_size + c.spare_pages;
    const int capacity = max_pages * c.page_size;

    // Pages in a shuffled order, one more than the sequences use: page 0 is all NaN, and
    // every table entry a sequence does not need points at it.
    std::vector<int> table(static_cast<std::size_t>(batch) * max_pages, 0);
    std::vector<int> order;
    for (int b = 0; b < batch; ++b) {
      const int used = (std::min(c.lens[b], capacity) + c.page_size - 1) / c.page_size;
      for (int p = 0; p < used; ++p) order.push_back(b * max_pages + p);
    }
    std::vector<int> ids(order.size());
    std::iota(ids.begin(), ids.end(), 1);
    std::shuffle(ids.begin(), ids.end(), rng_);
    for (std::size_t i = 0; i < order.size(); ++i) table[order[i]] = ids[i];
    const int pages = static_cast<int>(order.size()) + 1;

    const auto random_values = [&](std::size_t n, std::vector<T>& values,
                                   std::vector<double>& exact) {
      test::random_values(rng_, n, values, exact);
    };
    std::vector<T> q, k, v;
    std::vector<double> qx, kx, vx;
    const std::size_t cache_elements = static_cast<std::size_t>(pages) * c.page_size * row;
    random_values(static_cast<std::size_t>(batch) * c.q_heads * d, q, qx);
    random_values(cache_elements, k, kx);
    random_values(cache_elements, v, vx);
    const T nan(std::numeric_limits<float>::quiet_NaN());
    std::fill(k.begin(), k.begin() + c.page_size * row, nan);
    std::fill(v.begin(), v.begin() + c.page_size * row, nan);

    // The reference, in float64.
    const double scale = c.options.scale.value_or(1.0 / std::sqrt(static_cast<double>(d)));
    std::vector<double> want(q.size(), 0.0);
    for (int b = 0; b < batch; ++b) {
      const int length = std::clamp(c.lens[b], 0, capacity);
      int first = 0;
      if (c.options.window_left >= 0) first = std::max(0, length - 1 - c.options.window_left);
      for (int h = 0; h < c.q_heads; ++h) {
        const double* qh = &qx[(static_cast<std::size_t>(b) * c.q_heads + h) * d];
        const int kvh = h / group;
        std::vector<double> scores;
        std::vector<std::size_t> rows;
        for (int t = first; t < length; ++t) {
          const int page = table[b * max_pages + t / c.page_size];
          const std::size_t at =
              (static_cast<std::size_t>(page) * c.page_size + t % c.page_size) * row +
              static_cast<std::size_t>(kvh) * d;
          double s = 0;
          for (int i = 0; i < d; ++i) s += qh[i] * kx[at + i];
          s *= scale;
          if (c.options.soft_cap > 0) s = c.options.soft_cap * std::tanh(s / c.options.soft_cap);
          scores.push_back(s);
          rows.push_back(at);
        }
        if (scores.empty()) continue;
        const double top = *std::max_element(scores.begin(), scores.end());
        double total = 0;
        for (double& s : scores) total += (s = std::exp(s - top));
        double* out = &want[(static_cast<std::size_t>(b) * c.q_heads + h) * d];
        for (std::size_t j = 0; j < scores.size(); ++j) {
          for (int i = 0; i < d; ++i) out[i] += scores[j] / total * vx[rows[j] + i];
        }
      }
    }

    poison(q.size() * sizeof(T), 2);
    const Array got = ops::decode_attention(
        Array::from_data(q, {batch, c.q_heads, d}),
        Array::from_data(k, {pages, c.page_size, c.kv_heads, d}),
        Array::from_data(v, {pages, c.page_size, c.kv_heads, d}),
        Array::from_data(table, {batch, max_pages}), Array::from_data(c.lens, {batch}), c.options);
    ASSERT_EQ(got.shape(), (Shape{batch, c.q_heads, d}));
    const std::vector<T> values = got.to_vector<T>();
    for (std::size_t i = 0; i < want.size(); ++i) {
      const auto g = static_cast<double>(static_cast<float>(values[i]));
      ASSERT_TRUE(std::abs(g - want[i]) <= tolerance)
          << describe(c) << ": element " << i << " (sequence " << i / (c.q_heads * d) << ", head "
          << i / d % c.q_heads << ") is " << g << ", want " << want[i];
    }
  }

  // Outputs are convex sums of values in [-1, 1]; T's rounding of the result dominates.
  static double tolerance() { return std::is_same_v<T, half> ? 2e-3 : 1.6e-2; }

  std::mt19937 rng_{31};
};

using HalfTypes = ::testing::Types<half, bfloat16>;
TYPED_TEST_SUITE(DecodeAttentionGpu, HalfTypes);

TYPED_TEST(DecodeAttentionGpu, EveryHeadDimAndGroup) {
  for (const int d : {64, 128, 256}) {
    for (const int group : {1, 4, 8}) {
      Case c;
      c.kv_heads = group == 8 ? 2 : 4;
      c.q_heads = c.kv_heads * group;
      c.head_dim = d;
      c.lens = {1, 17, 300};
      this->check(c, this->tolerance());
    }
  }
}

// Sixteen query heads fill every row of the tensor-core tiles; pages smaller than the rows
// one copy instruction covers, or not dividing a tile, step across page boundaries.
TYPED_TEST(DecodeAttentionGpu, SixteenQueryHeadsAKvHeadAndSmallPages) {
  for (const int page : {1, 3, 8}) {
    for (const int d : {64, 128, 256}) {
      Case c;
      c.q_heads = 32;
      c.kv_heads = 2;
      c.head_dim = d;
      c.page_size = page;
      c.lens = {1, 45, 130};
      this->check(c, this->tolerance());
    }
  }
}

TYPED_TEST(DecodeAttentionGpu, LongAndOddLengthsSplitAndCombine) {
  Case c;
  c.q_heads = 32;
  c.kv_heads = 8;
  c.page_size = 32;
  c.lens = {4099, 64, 1};
  this->check(c, this->tolerance());
}

// Splits asked for rather than chosen: one (no combine), a few uneven ones, and the most.
TYPED_TEST(DecodeAttentionGpu, AskedSplits) {
  for (const int splits : {1, 3, 256}) {
    Case c;
    c.q_heads = 16;
    c.kv_heads = 4;
    c.page_size = 16;
    c.lens = {4099, 700, 1};
    c.options.splits = splits;
    this->check(c, this->tolerance());
  }
}

TYPED_TEST(DecodeAttentionGpu, PageSizesFrom16To256) {
  for (const int page : {16, 64, 256}) {
    Case c;
    c.q_heads = 8;
    c.kv_heads = 2;
    c.page_size = page;
    c.lens = {700, page - 1, page + 1};
    this->check(c, this->tolerance());
  }
}

TYPED_TEST(DecodeAttentionGpu, SoftCapAndScale) {
  Case c;
  c.q_heads = 16;
  c.kv_heads = 4;
  c.lens = {500, 33};
  c.options.scale = 0.5F;  // scores well past the cap
  c.options.soft_cap = 5.0F;
  this->check(c, this->tolerance());
}

TYPED_TEST(DecodeAttentionGpu, SlidingWindow) {
  for (const int window : {0, 100, 5000}) {
    Case c;
    c.q_heads = 8;
    c.kv_heads = 4;
    c.head_dim = 64;
    c.lens = {1000, 50, 1};
    c.options.window_left = window;
    this->check(c, this->tolerance());
  }
}

TYPED_TEST(DecodeAttentionGpu, SequencesWithoutKeysGiveZeros) {
  Case c;
  c.q_heads = 4;
  c.kv_heads = 1;
  c.lens = {0, 5, -3};
  this->check(c, this->tolerance());
}

TYPED_TEST(DecodeAttentionGpu, LengthsPastTheTableAreCutToIt) {
  Case c;
  c.q_heads = 4;
  c.kv_heads = 4;
  c.lens = {1500, 20};
  c.table_tokens = 992;  // 62 pages of 16: the first sequence claims more than its table holds
  this->check(c, this->tolerance());
}

TYPED_TEST(DecodeAttentionGpu, UnusedTableEntriesAreNotRead) {
  Case c;
  c.q_heads = 8;
  c.kv_heads = 8;
  c.lens = {40, 3};
  c.spare_pages = 6;  // entries pointing at the NaN page, past every sequence
  this->check(c, this->tolerance());
}

}  // namespace
}  // namespace kreg
