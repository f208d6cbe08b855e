#pragma once
// How the self-check compares GPU results with float64 CPU references.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace kreg::cli {

// Sets `ok` when every element is within `tol` of `want`, relative to max(1, |want|); a
// non-finite element fails. Returns the largest error, or the first element beyond `tol`.
template <class T>
std::string compare(const std::vector<T>& got, const std::vector<double>& want, double tol,
                    bool& ok) {
  ok = false;
  if (got.size() != want.size()) return "size " + std::to_string(got.size());
  double worst = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const auto g = static_cast<double>(got[i]);
    const double err = std::abs(g - want[i]) / std::max(1.0, std::abs(want[i]));
    if (!(err <= tol)) {
      return "element " + std::to_string(i) + " is " + std::to_string(g) + ", want " +
             std::to_string(want[i]) + " (off by " + std::to_string(err) + ")";
    }
    worst = std::max(worst, err);
  }
  ok = true;
  char text[64];
  std::snprintf(text, sizeof(text), "max rel err %.1e, n=%zu", worst, got.size());
  return text;
}

}  // namespace kreg::cli
