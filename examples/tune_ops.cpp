// Tuning a built-in op for the shapes a model runs: ops::tune times the decode matmul's block
// shapes for one 16 x 4096 x 4096 product, keeps each candidate's time in the caches, and from
// then on every matmul of that bucket, in this process or another sharing the caches, launches
// the winner. A second tuning of the same shape times nothing.
//
// Without a GPU the example says so and exits.
#include <kreg/kreg.hpp>

#include <cstdio>
#include <vector>

int main() {
  try {
    if (kreg::devices().empty()) {
      std::printf("no GPU: ops::tune times kernels on one; skipped\n");
      return 0;
    }
    constexpr std::int64_t kRows = 16;
    constexpr std::int64_t kIn = 4096;
    constexpr std::int64_t kOut = 4096;
    const kreg::Array x = kreg::Array::from_data(
        std::vector<kreg::bfloat16>(kRows * kIn, kreg::bfloat16(0.5F)), {kRows, kIn});
    // A linear layer's weight, [out, in], read transposed in place.
    const kreg::Array w = kreg::Array::from_data(
        std::vector<kreg::bfloat16>(kOut * kIn, kreg::bfloat16(0.01F)), {kOut, kIn});
    const auto layer = [&] { kreg::ops::matmul(x, w.transpose()).eval(); };

    for (const kreg::ops::OpTuning& t : kreg::ops::tune(layer)) {
      std::printf("%s, bucket %s: %zu candidates, %zu timed now\n", t.kernel.c_str(),
                  t.bucket.c_str(), t.result.candidates.size(), t.result.timed);
      for (const kreg::TuneResult::Candidate& c : t.result.candidates) {
        std::printf("  %-40s %8.2f us%s\n", c.label.c_str(), c.ms * 1000,
                    c.constants.ints == t.result.winner.ints ? "  <- winner" : "");
      }
    }
    const std::vector<kreg::ops::OpTuning> again = kreg::ops::tune(layer);
    std::printf("tuned again: %zu timed (the records are in the caches)\n",
                again.front().result.timed);
    layer();  // launches the winner
    return again.front().result.timed == 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
