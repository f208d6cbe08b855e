// Runs one case of every op family on the GPU, through kreg::ops and the built-in kernels
// behind them, against float64 CPU references computed from the same rounded inputs.
#include "commands.hpp"
#include "compare.hpp"

#include <kreg/kreg.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace kreg::cli {
namespace {

template <class T>
std::vector<T> uniform(std::size_t n, std::mt19937& rng, double lo = -2, double hi = 2) {
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<T> values(n);
  for (T& v : values) v = T(static_cast<float>(dist(rng)));
  return values;
}

// The values as doubles: the references start from the inputs as rounded to T.
template <class T>
std::vector<double> widen(const std::vector<T>& values) {
  std::vector<double> exact(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    exact[i] = static_cast<double>(static_cast<float>(values[i]));
  }
  return exact;
}

// Random values and their exact doubles.
template <class T>
struct Data {
  explicit Data(std::vector<T> v) : values(std::move(v)), exact(widen(values)) {}
  std::vector<T> values;
  std::vector<double> exact;
};

template <class T>
Data<T> random_data(std::size_t n, std::mt19937& rng, double lo = -2, double hi = 2) {
  return Data<T>(uniform<T>(n, rng, lo, hi));
}

template <class T>
double tolerance() {
  return std::is_same_v<T, float> ? 1e-5 : 1.6e-2;  // bfloat16 keeps 8 bits
}

// The op's result against the reference (compare.hpp).
template <class T>
std::string compare(const Array& got, const std::vector<double>& want, double tol, bool& ok) {
  return cli::compare(got.to_vector<T>(), want, tol, ok);
}

using OpCheck = std::function<std::string(std::mt19937&, bool&)>;

std::string add_f32(std::mt19937& rng, bool& ok) {
  const std::size_t rows = 301;
  const std::size_t cols = 333;
  const auto a = random_data<float>(rows * cols, rng);
  const auto b = random_data<float>(cols, rng);  // a row, broadcast
  std::vector<double> want(rows * cols);
  for (std::size_t i = 0; i < want.size(); ++i) want[i] = a.exact[i] + b.exact[i % cols];
  const Array out =
      ops::add(Array::from_data(a.values, {301, 333}), Array::from_data(b.values, {333}));
  return compare<float>(out, want, tolerance<float>(), ok);
}

std::string scale_and_cast(std::mt19937& rng, bool& ok) {
  const auto a = random_data<float>(100003, rng);
  std::vector<double> want(a.exact.size());
  for (std::size_t i = 0; i < want.size(); ++i) want[i] = a.exact[i] * 1.5;
  const Array x = Array::from_data(a.values, {100003});
  const Array out = ops::scale(ops::cast(x, Dtype::BFloat16), 1.5F);
  return compare<bfloat16>(out, want, 2 * tolerance<bfloat16>(), ok);
}

std::string rms_norm_bf16(std::mt19937& rng, bool& ok) {
  const int rows = 7;
  const int cols = 4096;
  const auto x = random_data<bfloat16>(static_cast<std::size_t>(rows) * cols, rng);
  const auto w = random_data<bfloat16>(cols, rng, 0.5, 1.5);
  std::vector<double> want(x.exact.size());
  for (int r = 0; r < rows; ++r) {
    double squares = 0;
    for (int c = 0; c < cols; ++c) squares += x.exact[r * cols + c] * x.exact[r * cols + c];
    const double inv = 1.0 / std::sqrt(squares / cols + 1e-6);
    for (int c = 0; c < cols; ++c) want[r * cols + c] = x.exact[r * cols + c] * inv * w.exact[c];
  }
  const Array out = ops::rms_norm(Array::from_data(x.values, {rows, cols}),
                                  Array::from_data(w.values, {cols}), 1e-6F);
  return compare<bfloat16>(out, want, 2 * tolerance<bfloat16>(), ok);
}

std::string layer_norm_f32(std::mt19937& rng, bool& ok) {
  const int rows = 5;
  const int cols = 1000;
  const auto x = random_data<float>(static_cast<std::size_t>(rows) * cols, rng, 3, 5);
  const auto w = random_data<float>(cols, rng, 0.5, 1.5);
  const auto b = random_data<float>(cols, rng);
  std::vector<double> want(x.exact.size());
  for (int r = 0; r < rows; ++r) {
    double mean = 0;
    for (int c = 0; c < cols; ++c) mean += x.exact[r * cols + c];
    mean /= cols;
    double var = 0;
    for (int c = 0; c < cols; ++c) var += std::pow(x.exact[r * cols + c] - mean, 2);
    const double inv = 1.0 / std::sqrt(var / cols + 1e-5);
    for (int c = 0; c < cols; ++c) {
      want[r * cols + c] = (x.exact[r * cols + c] - mean) * inv * w.exact[c] + b.exact[c];
    }
  }
  const Array out =
      ops::layer_norm(Array::from_data(x.values, {rows, cols}), Array::from_data(w.values, {cols}),
                      Array::from_data(b.values, {cols}), 1e-5F);
  return compare<float>(out, want, 4 * tolerance<float>(), ok);
}

std::string softmax_bf16(std::mt19937& rng, bool& ok) {
  const int rows = 7;
  const int cols = 4096;
  const auto x = random_data<bfloat16>(static_cast<std::size_t>(rows) * cols, rng, -8, 8);
  std::vector<double> want(x.exact.size());
  for (int r = 0; r < rows; ++r) {
    double top = -std::numeric_limits<double>::infinity();
    for (int c = 0; c < cols; ++c) top = std::max(top, x.exact[r * cols + c] * 0.125);
    double sum = 0;
    for (int c = 0; c < cols; ++c) sum += std::exp(x.exact[r * cols + c] * 0.125 - top);
    for (int c = 0; c < cols; ++c) {
      want[r * cols + c] = std::exp(x.exact[r * cols + c] * 0.125 - top) / sum;
    }
  }
  const Array out = ops::softmax(Array::from_data(x.values, {rows, cols}), 0.125F);
  return compare<bfloat16>(out, want, tolerance<bfloat16>(), ok);
}

std::string activations(std::mt19937& rng, bool& ok) {
  const auto a = random_data<bfloat16>(100003, rng, -5, 5);
  const auto b = random_data<bfloat16>(100003, rng);
  std::vector<double> silu(a.exact.size());
  std::vector<double> gelu(a.exact.size());
  for (std::size_t i = 0; i < a.exact.size(); ++i) {
    const double v = a.exact[i];
    silu[i] = v / (1 + std::exp(-v)) * b.exact[i];
    gelu[i] = 0.5 * v * std::erfc(-v / std::sqrt(2.0));
  }
  const Array da = Array::from_data(a.values, {100003});
  const std::string first = compare<bfloat16>(ops::swiglu(da, Array::from_data(b.values, {100003})),
                                              silu, 2 * tolerance<bfloat16>(), ok);
  if (!ok) return "swiglu: " + first;
  return "swiglu " + first + "; gelu " +
         compare<bfloat16>(ops::gelu(da), gelu, 2 * tolerance<bfloat16>(), ok);
}

std::string rope_f32(std::mt19937& rng, bool& ok) {
  const int tokens = 9;
  const int heads = 4;
  const int dim = 64;
  const auto x = random_data<float>(static_cast<std::size_t>(tokens) * heads * dim, rng);
  std::vector<double> want(x.exact.size());
  for (int t = 0; t < tokens; ++t) {
    for (int h = 0; h < heads; ++h) {
      const std::size_t at = (static_cast<std::size_t>(t) * heads + h) * dim;
      for (int i = 0; i < dim / 2; ++i) {
        const double angle = (t + 10) * std::pow(10000.0, -2.0 * i / dim);
        const double x0 = x.exact[at + i];
        const double x1 = x.exact[at + i + dim / 2];
        want[at + i] = x0 * std::cos(angle) - x1 * std::sin(angle);
        want[at + i + dim / 2] = x0 * std::sin(angle) + x1 * std::cos(angle);
      }
    }
  }
  const Array out = ops::rope(Array::from_data(x.values, {tokens, heads, dim}), 10, 10000.0F, true);
  return compare<float>(out, want, 1e-4, ok);
}

std::string transpose_bf16(std::mt19937& rng, bool& ok) {
  const int rows = 130;
  const int cols = 68;
  const auto x = random_data<bfloat16>(static_cast<std::size_t>(rows) * cols, rng);
  std::vector<double> want(x.exact.size());
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) want[c * rows + r] = x.exact[r * cols + c];
  }
  return compare<bfloat16>(ops::transpose(Array::from_data(x.values, {rows, cols})), want, 0.0, ok);
}

std::string embedding_f32(std::mt19937& rng, bool& ok) {
  const int vocab = 100;
  const int cols = 64;
  const auto table = random_data<float>(static_cast<std::size_t>(vocab) * cols, rng);
  std::vector<std::int32_t> ids(37);
  std::uniform_int_distribution<int> pick(0, vocab - 1);
  for (auto& id : ids) id = pick(rng);
  std::vector<double> want;
  for (std::int32_t id : ids) {
    const auto row = table.exact.begin() + static_cast<std::ptrdiff_t>(id) * cols;
    want.insert(want.end(), row, row + cols);
  }
  const Array out =
      ops::embedding(Array::from_data(table.values, {vocab, cols}), Array::from_data(ids, {37}));
  return compare<float>(out, want, 0.0, ok);
}

std::string reductions_f32(std::mt19937& rng, bool& ok) {
  const int rows = 33;
  const int cols = 5000;
  const auto x = random_data<float>(static_cast<std::size_t>(rows) * cols, rng);
  std::vector<double> sums(rows);
  std::vector<std::int64_t> best(rows);
  for (int r = 0; r < rows; ++r) {
    const auto first = x.exact.begin() + static_cast<std::ptrdiff_t>(r) * cols;
    for (int c = 0; c < cols; ++c) sums[r] += first[c];
    best[r] = std::max_element(first, first + cols) - first;
  }
  const Array dx = Array::from_data(x.values, {rows, cols});
  const std::string detail = compare<float>(ops::row_sum(dx), sums, 1e-4, ok);
  if (!ok) return "row_sum: " + detail;
  ok = ops::argmax(dx).to_vector<std::int64_t>() == best;
  return "row_sum " + detail + (ok ? "; argmax exact" : "; argmax differs");
}

std::string gemv_bf16(std::mt19937& rng, bool& ok) {
  const int rows = 64;
  const int cols = 1000;
  const auto w = random_data<bfloat16>(static_cast<std::size_t>(rows) * cols, rng);
  const auto v = random_data<float>(cols, rng);
  std::vector<double> want(rows);
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) want[r] += w.exact[r * cols + c] * v.exact[c];
  }
  const Array out =
      ops::gemv(Array::from_data(w.values, {rows, cols}), Array::from_data(v.values, {cols}));
  return compare<float>(out, want, 1e-4, ok);
}

}  // namespace

std::vector<GpuCheck> run_op_checks() {
  const std::vector<std::pair<std::string, OpCheck>> checks = {
      {"ops::add float32 (row broadcast)", add_f32},
      {"ops::cast, ops::scale bfloat16", scale_and_cast},
      {"ops::rms_norm bfloat16", rms_norm_bf16},
      {"ops::layer_norm float32", layer_norm_f32},
      {"ops::softmax bfloat16", softmax_bf16},
      {"ops::swiglu, ops::gelu bfloat16", activations},
      {"ops::rope float32 (NeoX)", rope_f32},
      {"ops::transpose bfloat16", transpose_bf16},
      {"ops::embedding float32", embedding_f32},
      {"ops::row_sum, ops::argmax float32", reductions_f32},
      {"ops::gemv bfloat16", gemv_bf16},
  };
  std::mt19937 rng(2027);
  std::vector<GpuCheck> results;
  for (const auto& [label, check] : checks) {
    results.push_back(run_check(label, [&](bool& ok) { return check(rng, ok); }));
  }
  return results;
}

}  // namespace kreg::cli
