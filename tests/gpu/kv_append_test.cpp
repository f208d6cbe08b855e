// ops::kv_append on random caches: the new rows land in their slots exactly, every other row
// keeps its old value, padding and out-of-range slots write nothing, K turned by RoPE matches
// a float64 rotation of the same (rounded) inputs, and writes through a view reach the array
// it views. Then decode_attention reads what the append wrote.
#include "gpu/poison.hpp"
#include "test_support.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

namespace kreg {
namespace {

struct Case {
  int pages = 6;
  int page_size = 16;
  int kv_heads = 2;
  int head_dim = 128;
  int tokens = 20;
  bool wide_slots = false;
  bool rope = false;
  bool neox = false;
  float base = 10000.0F;
};

std::string describe(const Case& c) {
  return "pages " + std::to_string(c.pages) + " x " + std::to_string(c.page_size) + ", kv_heads " +
         std::to_string(c.kv_heads) + ", head_dim " + std::to_string(c.head_dim) + ", tokens " +
         std::to_string(c.tokens) + (c.wide_slots ? ", int64 slots" : "") +
         (c.rope ? (c.neox ? ", rope neox" : ", rope") : "");
}

template <class T>
class KvAppendGpu : public ::testing::Test {
 protected:
  void SetUp() override { KREG_REQUIRE_GPU(); }

  // Token t's slot: distinct slots in a shuffled order, every fifth token padding (-1) and
  // every seventh past the cache's end.
  std::vector<long long> slots_for(const Case& c) {
    std::vector<long long> all(static_cast<std::size_t>(c.pages) * c.page_size);
    std::iota(all.begin(), all.end(), 0);
    std::shuffle(all.begin(), all.end(), rng_);
    std::vector<long long> slots(c.tokens);
    for (int t = 0; t < c.tokens; ++t) {
      slots[t] = t % 5 == 4 ? -1 : t % 7 == 6 ? static_cast<long long>(all.size()) + t : all[t];
    }
    return slots;
  }

  void check(const Case& c) {
    const std::int64_t row = static_cast<std::int64_t>(c.kv_heads) * c.head_dim;
    const std::size_t cache_elements = static_cast<std::size_t>(c.pages) * c.page_size * row;
    std::vector<T> k_old;
    std::vector<T> v_old;
    std::vector<T> k;
    std::vector<T> v;
    std::vector<double> k_old_x;
    std::vector<double> v_old_x;
    std::vector<double> kx;
    std::vector<double> vx;
    test::random_values(rng_, cache_elements, k_old, k_old_x);
    test::random_values(rng_, cache_elements, v_old, v_old_x);
    test::random_values(rng_, static_cast<std::size_t>(c.tokens) * row, k, kx);
    test::random_values(rng_, static_cast<std::size_t>(c.tokens) * row, v, vx);
    const std::vector<long long> slots = slots_for(c);
    std::vector<int> positions(c.tokens);
    for (int t = 0; t < c.tokens; ++t) positions[t] = static_cast<int>((t * 37 + 5) % 3000);

    const Shape shape{c.pages, c.page_size, c.kv_heads, c.head_dim};
    const Array k_cache = Array::from_data(k_old, shape);
    const Array v_cache = Array::from_data(v_old, shape);
    k_cache.eval();
    v_cache.eval();
    const Array slot_array =
        c.wide_slots
            ? Array::from_data(std::vector<std::int64_t>(slots.begin(), slots.end()), {c.tokens})
            : Array::from_data(std::vector<std::int32_t>(slots.begin(), slots.end()), {c.tokens});
    ops::KvAppendOptions options;
    if (c.rope) {
      options.rope_positions = Array::from_data(positions, {c.tokens});
      options.rope_base = c.base;
      options.rope_neox = c.neox;
    }
    ops::kv_append(k_cache, v_cache, Array::from_data(k, {c.tokens, c.kv_heads, c.head_dim}),
                   Array::from_data(v, {c.tokens, c.kv_heads, c.head_dim}), slot_array, options);

    // What each cache row should hold: the old values, or the token written there.
    std::vector<int> writer(static_cast<std::size_t>(c.pages) * c.page_size, -1);
    for (int t = 0; t < c.tokens; ++t) {
      if (slots[t] >= 0 && slots[t] < static_cast<long long>(writer.size())) writer[slots[t]] = t;
    }
    const std::vector<T> k_got = k_cache.to_vector<T>();
    const std::vector<T> v_got = v_cache.to_vector<T>();
    const int half_dim = c.head_dim / 2;
    const double tolerance = std::is_same_v<T, half> ? 2e-3 : 1.6e-2;
    for (std::size_t s = 0; s < writer.size(); ++s) {
      const int t = writer[s];
      for (std::int64_t e = 0; e < row; ++e) {
        const std::size_t at = s * row + e;
        const float v_want = t < 0 ? static_cast<float>(v_old[at])
                                   : static_cast<float>(v[static_cast<std::size_t>(t) * row + e]);
        ASSERT_EQ(static_cast<float>(v_got[at]), v_want)
            << describe(c) << ": V of slot " << s << " (token " << t << "), element " << e;
        if (t < 0 || !c.rope) {
          const float k_want = t < 0 ? static_cast<float>(k_old[at])
                                     : static_cast<float>(k[static_cast<std::size_t>(t) * row + e]);
          ASSERT_EQ(static_cast<float>(k_got[at]), k_want)
              << describe(c) << ": K of slot " << s << " (token " << t << "), element " << e;
          continue;
        }
        // K turned: pair i of a head by positions[t] * base^(-2i / head_dim).
        const std::int64_t head = e / c.head_dim;
        const int d = static_cast<int>(e % c.head_dim);
        const int i = c.neox ? d % half_dim : d / 2;
        const int a = c.neox ? i : 2 * i;
        const int b = c.neox ? i + half_dim : 2 * i + 1;
        const double angle =
            positions[t] * std::pow(static_cast<double>(c.base), -2.0 * i / c.head_dim);
        const std::size_t from = static_cast<std::size_t>(t) * row + head * c.head_dim;
        const double x0 = kx[from + a];
        const double x1 = kx[from + b];
        const double want = d == a ? x0 * std::cos(angle) - x1 * std::sin(angle)
                                   : x0 * std::sin(angle) + x1 * std::cos(angle);
        const double g = static_cast<float>(k_got[at]);
        ASSERT_TRUE(std::abs(g - want) <= tolerance)
            << describe(c) << ": K of slot " << s << " (token " << t << "), element " << e << " is "
            << g << ", want " << want;
      }
    }
  }

  std::mt19937 rng_{47};
};

using HalfTypes = ::testing::Types<half, bfloat16>;
TYPED_TEST_SUITE(KvAppendGpu, HalfTypes);

TYPED_TEST(KvAppendGpu, RowsLandInTheirSlotsAndNothingElseChanges) {
  for (const int d : {64, 128, 256}) {
    Case c;
    c.head_dim = d;
    this->check(c);
  }
}

TYPED_TEST(KvAppendGpu, Int64SlotsAndLargePages) {
  Case c;
  c.wide_slots = true;
  c.page_size = 256;
  c.pages = 3;
  c.kv_heads = 8;
  c.tokens = 300;
  this->check(c);
}

TYPED_TEST(KvAppendGpu, KTurnedByRopeOnTheWayIn) {
  for (const bool neox : {false, true}) {
    for (const int d : {64, 128}) {
      Case c;
      c.rope = true;
      c.neox = neox;
      c.head_dim = d;
      c.kv_heads = 4;
      this->check(c);
    }
  }
  Case c;  // another base
  c.rope = true;
  c.base = 500000.0F;
  this->check(c);
}

TYPED_TEST(KvAppendGpu, UnalignedWidthsTakeTheScalarPath) {
  for (const bool rope : {false, true}) {
    for (const bool neox : {false, true}) {
      Case c;
      c.head_dim = 6;  // a row of 18 elements: no vector fits it
      c.kv_heads = 3;
      c.rope = rope;
      c.neox = neox;
      this->check(c);
    }
  }
}

TYPED_TEST(KvAppendGpu, NoTokensWritesNothing) {
  Case c;
  c.tokens = 0;
  this->check(c);
}

TYPED_TEST(KvAppendGpu, AViewOfALargerCacheIsWrittenThrough) {
  using T = TypeParam;
  // Two layers of [4 pages, 16, 2, 64]; the append goes to layer 1 through a slice.
  const Shape layer{4, 16, 2, 64};
  const std::size_t per_layer = std::size_t{4} * 16 * 2 * 64;
  const std::vector<T> zeros(2 * per_layer, T(0.0F));
  const Array k_all = Array::from_data(zeros, {8, 16, 2, 64});
  const Array v_all = Array::from_data(zeros, {8, 16, 2, 64});
  const Array k_layer = k_all.slice(0, 4, 8);
  const Array v_layer = v_all.slice(0, 4, 8);
  ASSERT_EQ(k_layer.shape(), layer);
  const std::vector<T> rows(2 * 2 * 64, T(1.5F));
  ops::kv_append(k_layer, v_layer, Array::from_data(rows, {2, 2, 64}),
                 Array::from_data(rows, {2, 2, 64}),
                 Array::from_data(std::vector<int>{3, 17}, {2}));
  for (const Array* all : {&k_all, &v_all}) {
    const std::vector<T> got = all->to_vector<T>();
    for (std::size_t i = 0; i < got.size(); ++i) {
      const std::size_t slot = i / 128;  // of the whole array: layer 1 starts at slot 64
      const float want = slot == 64 + 3 || slot == 64 + 17 ? 1.5F : 0.0F;
      ASSERT_EQ(static_cast<float>(got[i]), want) << "element " << i << " (slot " << slot << ")";
    }
  }
}

TYPED_TEST(KvAppendGpu, DecodeReadsWhatTheAppendWrote) {
  using T = TypeParam;
  // One sequence of 40 tokens over pages 2, 0 and 1 (page_size 16), appended in two steps (a
  // prefill of 39, then the decode token), against the same cache written on the host.
  const int d = 128;
  const int kv_heads = 2;
  const int q_heads = 8;
  const int tokens = 40;
  const std::vector<int> table{2, 0, 1};
  std::vector<T> k;
  std::vector<T> v;
  std::vector<T> q;
  std::vector<double> unused;
  test::random_values(this->rng_, static_cast<std::size_t>(tokens) * kv_heads * d, k, unused);
  test::random_values(this->rng_, static_cast<std::size_t>(tokens) * kv_heads * d, v, unused);
  test::random_values(this->rng_, static_cast<std::size_t>(q_heads) * d, q, unused);
  const std::size_t row = static_cast<std::size_t>(kv_heads) * d;
  std::vector<T> k_host(std::size_t{3} * 16 * row, T(0.0F));
  std::vector<T> v_host(std::size_t{3} * 16 * row, T(0.0F));
  std::vector<int> slots(tokens);
  for (int t = 0; t < tokens; ++t) {
    slots[t] = table[t / 16] * 16 + t % 16;
    std::copy_n(k.begin() + t * row, row, k_host.begin() + slots[t] * row);
    std::copy_n(v.begin() + t * row, row, v_host.begin() + slots[t] * row);
  }
  const Shape shape{3, 16, kv_heads, d};
  const Array k_cache = Array::from_data(std::vector<T>(k_host.size(), T(0.0F)), shape);
  const Array v_cache = Array::from_data(std::vector<T>(v_host.size(), T(0.0F)), shape);
  const auto rows = [&](const std::vector<T>& all, int first, int count) {
    return Array::from_data(
        std::vector<T>(all.begin() + first * row, all.begin() + (first + count) * row),
        {count, kv_heads, d});
  };
  const auto slot_array = [&](int first, int count) {
    return Array::from_data(std::vector<int>(slots.begin() + first, slots.begin() + first + count),
                            {count});
  };
  ops::kv_append(k_cache, v_cache, rows(k, 0, 39), rows(v, 0, 39), slot_array(0, 39));
  ops::kv_append(k_cache, v_cache, rows(k, 39, 1), rows(v, 39, 1), slot_array(39, 1));
  const Array qa = Array::from_data(q, {1, q_heads, d});
  const Array table_array = Array::from_data(table, {1, 3});
  const Array lens = Array::from_data(std::vector<int>{tokens}, {1});
  const std::vector<T> got =
      ops::decode_attention(qa, k_cache, v_cache, table_array, lens).template to_vector<T>();
  const std::vector<T> want =
      ops::decode_attention(qa, Array::from_data(k_host, shape), Array::from_data(v_host, shape),
                            table_array, lens)
          .template to_vector<T>();
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(static_cast<float>(got[i]), static_cast<float>(want[i])) << "element " << i;
  }
}

}  // namespace
}  // namespace kreg
