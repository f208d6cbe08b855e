// ops::tune on the GPU: a decode matmul, a decode quantized matmul, a MoE layer and a causal
// attention prefill, each tuned for a bucket no earlier run has tuned in this cache; every
// candidate runs and gives the right result (against float64 for matmul, against the rule's own
// result for the others), the winner is the fastest, a second tuning times nothing, and the op
// then launches the winner. Each run poisons its output first.
#include "gpu/poison.hpp"
#include "ops/wgmma_target.hpp"
#include "test_support.hpp"

#include <kreg/cache.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>
#include <string>

namespace kreg {
namespace {

// The first n from `first` up (in steps of `step`) whose bucket `prefix + n + suffix` has no
// tuning record in the ops' cache: a first tuning of it times every candidate.
std::int64_t untuned(const std::string& prefix, std::int64_t first, std::int64_t step,
                     const std::string& suffix) {
  std::set<std::string> buckets;
  for (const TuningEntry& e : cache_tuning(device_registry().cache_dir())) buckets.insert(e.bucket);
  const auto bucket = [&](std::int64_t n) {
    std::string b = prefix;
    b += std::to_string(n);
    b += suffix;
    return b;
  };
  std::int64_t n = first;
  while (buckets.contains(bucket(n))) n += step;
  return n;
}

// The relative L2 distance of `got` from `want`.
double distance(const std::vector<double>& got, const std::vector<double>& want) {
  double err = 0;
  double norm = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    err += (got[i] - want[i]) * (got[i] - want[i]);
    norm += want[i] * want[i];
  }
  return std::sqrt(err / std::max(norm, 1e-30));
}

// Whether the device takes the ops' wgmma and copy-engine kernels, as the ops decide it.
bool on_hopper() {
  return ops::targets_wgmma(device_registry());
}

std::vector<double> widen(const Array& a) {
  std::vector<double> out;
  for (const bfloat16 v : a.to_vector<bfloat16>()) out.push_back(static_cast<float>(v));
  return out;
}

// `count` random bfloat16 values in [-1, 1).
std::vector<bfloat16> random_bf16(std::mt19937& rng, std::int64_t count) {
  std::vector<bfloat16> v;
  std::vector<double> exact;
  test::random_values(rng, static_cast<std::size_t>(count), v, exact);
  return v;
}

// Short tuning runs whose check compares `out`, the call's last result, with `want`, counting
// its calls in `checks`.
TuneOptions checking(const Array& out, const std::vector<double>& want, double tolerance,
                     int& checks) {
  TuneOptions options;
  options.warmup = 1;
  options.repeats = 5;
  options.check = [&out, &want, tolerance, &checks](const Constants& c) {
    ++checks;
    const double d = distance(widen(out), want);
    EXPECT_LT(d, tolerance) << constants_key(c);
    return d < tolerance;
  };
  return options;
}

void expect_tuned(const ops::OpTuning& t, std::size_t candidates, const std::string& kernel) {
  EXPECT_EQ(t.kernel, kernel);
  ASSERT_EQ(t.result.candidates.size(), candidates) << t.bucket;
  EXPECT_EQ(t.result.timed, candidates) << t.bucket;
  double fastest = 1e30;
  for (const TuneResult::Candidate& c : t.result.candidates) {
    EXPECT_TRUE(c.ok) << c.label << ": " << c.why;
    EXPECT_GT(c.ms, 0.0) << c.label;
    fastest = std::min(fastest, c.ms);
  }
  EXPECT_DOUBLE_EQ(t.result.ms, fastest);
}

TEST(OpsTuneGpu, DecodeMatmulTimesEveryCandidateAndThenLaunchesTheWinner) {
  KREG_REQUIRE_GPU();
  constexpr std::int64_t m = 13;  // bucket m16
  constexpr std::int64_t k = 512;
  const std::int64_t n = untuned("m16_n", 1032, 8, "_k512");
  std::mt19937 rng(7);
  std::vector<bfloat16> av;
  std::vector<bfloat16> wv;
  std::vector<double> ax;
  std::vector<double> wx;
  test::random_values(rng, static_cast<std::size_t>(m * k), av, ax);
  test::random_values(rng, static_cast<std::size_t>(n * k), wv, wx);
  std::vector<double> want(static_cast<std::size_t>(m * n), 0.0);
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t j = 0; j < n; ++j) {
      double sum = 0;
      for (std::int64_t p = 0; p < k; ++p) sum += ax[i * k + p] * wx[j * k + p];
      want[i * n + j] = sum;
    }
  }
  const Array a = Array::from_data(av, {m, k});
  const Array b = Array::from_data(wv, {n, k}).transpose();
  Array out;
  // Each run's output poisoned first, so a candidate that leaves it unwritten fails.
  const auto call = [&] {
    test::poison(static_cast<std::size_t>(m * n) * 2, 2);
    out = ops::matmul(a, b);
    out.eval();
  };
  int checks = 0;
  const TuneOptions options = checking(out, want, 1e-2, checks);
  // On sm_90 the streaming kernel (8, 4 or 6 stages), elsewhere the skinny one (32 or 16
  // columns, 16, 8 or 4 warps).
  const bool hopper = on_hopper();
  const std::string kernel = hopper ? "matmul_stream_bf16" : "matmul_skinny_bf16";
  const std::size_t candidates = hopper ? 3 : 6;
  const std::vector<ops::OpTuning> tuned = ops::tune(call, options);
  ASSERT_EQ(tuned.size(), 1U);
  EXPECT_EQ(tuned[0].bucket, "m16_n" + std::to_string(n) + "_k512");
  expect_tuned(tuned[0], candidates, kernel);
  EXPECT_EQ(checks, static_cast<int>(candidates));

  const std::vector<ops::OpTuning> again = ops::tune(call, options);
  ASSERT_EQ(again.size(), 1U);
  EXPECT_EQ(again[0].result.timed, 0U);
  EXPECT_EQ(constants_key(again[0].result.winner), constants_key(tuned[0].result.winner));

  // The op launches the winner, with the kernel's defaults (8 stages; 32 columns, 16 warps)
  // left out.
  call();
  EXPECT_LT(distance(widen(out), want), 1e-2);
  Constants launched;
  for (const auto& [index, value] : tuned[0].result.winner.ints) {
    const int kernel_default = index == 305 ? 8 : index == 302 ? 32 : 16;
    if (value != kernel_default) launched.ints.emplace_back(index, value);
  }
  EXPECT_TRUE(device_registry().is_cached("kreg::" + kernel, launched)) << constants_key(launched);
}

TEST(OpsTuneGpu, QuantizedDecodeAndMoeLayersGiveTheRulesResultUnderEveryCandidate) {
  KREG_REQUIRE_GPU();
  std::mt19937 rng(11);
  const auto values = [&](std::int64_t count) { return random_bf16(rng, count); };
  // 4-bit decode, 1 row.
  constexpr std::int64_t k = 1024;
  const std::int64_t n = untuned("m1_n", 2056, 8, "_k1024");
  const Array x = Array::from_data(values(k), {1, k});
  const ops::QuantizedWeight w = ops::quantize(Array::from_data(values(n * k), {n, k}));
  const std::vector<double> rule = widen(ops::quantized_matmul(x, w));
  Array out;
  int checks = 0;
  const std::vector<ops::OpTuning> q = ops::tune(
      [&] {
        test::poison(static_cast<std::size_t>(n) * 2, 2);
        out = ops::quantized_matmul(x, w);
        out.eval();
      },
      checking(out, rule, 1e-2, checks));
  ASSERT_EQ(q.size(), 1U);
  expect_tuned(q[0], 6, "quantized_matmul_bf16");
  EXPECT_EQ(checks, 6);

  // A MoE layer: two grouped products, each a choice of its own.
  constexpr std::int64_t tokens = 16;
  constexpr std::int64_t experts = 8;
  constexpr std::int64_t hidden = 256;
  const std::int64_t ffn = untuned("s32_e8_n", 136, 8, "_k256");  // the gated product's bucket
  const Array h = Array::from_data(values(tokens * hidden), {tokens, hidden});
  const Array logits = Array::from_data(values(tokens * experts), {tokens, experts});
  const ops::MoeExperts layer{
      Array::from_data(values(experts * ffn * hidden), {experts, ffn, hidden}),
      Array::from_data(values(experts * ffn * hidden), {experts, ffn, hidden}),
      Array::from_data(values(experts * hidden * ffn), {experts, hidden, ffn})};
  ops::MoeOptions moe_options;
  moe_options.top_k = 2;
  const std::vector<double> moe_rule = widen(ops::moe(h, logits, layer, moe_options));
  checks = 0;
  const std::vector<ops::OpTuning> moe = ops::tune(
      [&] {
        test::poison(static_cast<std::size_t>(tokens * hidden) * 2, 2);
        out = ops::moe(h, logits, layer, moe_options);
        out.eval();
      },
      checking(out, moe_rule, 2e-2, checks));
  ASSERT_EQ(moe.size(), 2U);
  EXPECT_EQ(moe[0].bucket, "s32_e8_n" + std::to_string(ffn) + "_k256");
  expect_tuned(moe[0], 4, "moe_matmul_bf16");  // gated: 4, 2, 8 or 16 warps
  EXPECT_EQ(moe[1].bucket, "s32_e8_n256_k" + std::to_string(ffn));
  expect_tuned(moe[1], 8, "moe_matmul_bf16");  // and 32 or 16 columns
  EXPECT_EQ(checks, 12);
}

TEST(OpsTuneGpu, AttentionPrefillGivesTheRulesResultWithEitherChoice) {
  KREG_REQUIRE_GPU();
  std::mt19937 rng(13);
  const auto values = [&](std::int64_t count) { return random_bf16(rng, count); };
  constexpr std::int64_t len = 300;  // bucket q512_k512
  constexpr std::int64_t kv_heads = 2;
  constexpr std::int64_t dim = 128;
  const std::int64_t heads = untuned("q512_k512_b1_h", 8, 2, "");
  const Array q = Array::from_data(values(len * heads * dim), {1, len, heads, dim});
  const Array k = Array::from_data(values(len * kv_heads * dim), {1, len, kv_heads, dim});
  const Array v = Array::from_data(values(len * kv_heads * dim), {1, len, kv_heads, dim});
  ops::AttentionOptions options;
  options.causal = true;
  const std::vector<double> rule = widen(ops::attention(q, k, v, options));
  Array out;
  int checks = 0;
  const std::vector<ops::OpTuning> t = ops::tune(
      [&] {
        test::poison(static_cast<std::size_t>(len * heads * dim) * 2, 2);
        out = ops::attention(q, k, v, options);
        out.eval();
      },
      checking(out, rule, 1e-3, checks));
  ASSERT_EQ(t.size(), 1U);
  EXPECT_EQ(t[0].bucket, "q512_k512_b1_h" + std::to_string(heads));
  // Hopper: the copy-engine kernel, its consumers taking turns or not; elsewhere 4 warps (the
  // default), or 8.
  const bool hopper = on_hopper();
  expect_tuned(t[0], 2, hopper ? "attention_tma_bf16" : "attention_bf16");
  EXPECT_EQ(checks, 2);
}

TEST(OpsTuneGpu, ACallWithNoChoiceIsRefused) {
  KREG_REQUIRE_GPU();
  const Array a = Array::from_data(std::vector<float>(8, 1.0F), {8});
  const std::string m = test::expect_error(ErrorCode::InvalidArgument,
                                           [&] { ops::tune([&] { ops::scale(a, 2.0F).eval(); }); });
  EXPECT_NE(m.find("no tunable choice"), std::string::npos) << m;
  test::expect_error(ErrorCode::InvalidArgument, [&] { ops::tune({}); });
}

}  // namespace
}  // namespace kreg
