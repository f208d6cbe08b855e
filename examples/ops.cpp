// Typed ops over arrays: an RMS norm and a softmax, checked against a CPU reference.
//
// Ops are lazy like custom kernels: each returns a pending array, and the built-in kernel
// runs when the result is read. Without a GPU the example builds the ops (checking their
// arguments), prints the result shapes, and skips the run.
#include <kreg/kreg.hpp>

#include <cmath>
#include <cstdio>
#include <limits>
#include <vector>

int main() {
  try {
    constexpr int rows = 4;
    constexpr int cols = 1000;
    std::vector<float> x(static_cast<std::size_t>(rows) * cols);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.01f * static_cast<float>(i));
    const kreg::Array input = kreg::Array::from_data(x, {rows, cols});
    const kreg::Array weight = kreg::Array::from_data(std::vector<float>(cols, 2.0f), {cols});

    const kreg::Array normed = kreg::ops::rms_norm(input, weight, 1e-6f);
    const kreg::Array probs = kreg::ops::softmax(normed, 0.5f);
    const kreg::Array best = kreg::ops::argmax(probs);
    if (kreg::devices().empty()) {
      std::printf(
          "no GPU: built rms_norm -> softmax -> argmax, shapes [%lld, %lld] and [%lld]; "
          "run skipped\n",
          static_cast<long long>(probs.shape()[0]), static_cast<long long>(probs.shape()[1]),
          static_cast<long long>(best.shape()[0]));
      return 0;
    }

    const std::vector<float> p = probs.to_vector<float>();  // runs the rms_norm and the softmax
    const std::vector<std::int64_t> b = best.to_vector<std::int64_t>();
    double worst = 0;
    for (int r = 0; r < rows; ++r) {
      double sum = 0;
      for (int c = 0; c < cols; ++c) sum += double(x[r * cols + c]) * x[r * cols + c];
      const double inv = 1.0 / std::sqrt(sum / cols + 1e-6);
      double top = -std::numeric_limits<double>::infinity();
      std::vector<double> logits(cols);
      for (int c = 0; c < cols; ++c) {
        logits[c] = 0.5 * (x[r * cols + c] * inv * 2.0);
        top = std::max(top, logits[c]);
      }
      double total = 0;
      for (double l : logits) total += std::exp(l - top);
      for (int c = 0; c < cols; ++c) {
        worst = std::max(worst, std::abs(p[r * cols + c] - std::exp(logits[c] - top) / total));
      }
    }
    std::printf("softmax(rms_norm(x)): worst error %.2e against float64; argmax of row 0: %lld\n",
                worst, static_cast<long long>(b[0]));
    return worst < 1e-6 ? 0 : 1;
  } catch (const kreg::Error& e) {
    std::fprintf(stderr, "%s: %s\n", kreg::to_string(e.code()), e.what());
    return 1;
  }
}
