// TuneSpace::candidates: the combinations a tuning run tries, in a fixed order.

#include <kreg/error.hpp>
#include <kreg/tune.hpp>

#include <set>
#include <string>

namespace kreg {

std::vector<Constants> TuneSpace::candidates() const {
  std::set<int> seen;
  const auto claim = [&seen](int index, const char* what) {
    if (!seen.insert(index).second) {
      throw Error(ErrorCode::InvalidArgument,
                  "tune: constant " + std::to_string(index) + " is listed twice (" + what + ")");
    }
  };
  for (const auto& [index, value] : fixed.bools) claim(index, "fixed");
  for (const auto& [index, value] : fixed.ints) claim(index, "fixed");
  for (const auto& [index, values] : ints) {
    claim(index, "tuned");
    if (values.empty()) {
      throw Error(ErrorCode::InvalidArgument,
                  "tune: int constant " + std::to_string(index) + " has no values to try");
    }
  }
  for (const int index : bools) claim(index, "tuned");

  // An odometer over the choices: ints by their order, then bools; the first choice varies
  // slowest, so the first candidate takes every first value.
  std::vector<std::size_t> sizes;
  for (const auto& entry : ints) sizes.push_back(entry.second.size());
  sizes.insert(sizes.end(), bools.size(), 2);
  std::vector<std::size_t> at(sizes.size(), 0);
  std::vector<Constants> out;
  for (;;) {
    Constants c = fixed;
    for (std::size_t i = 0; i < ints.size(); ++i) {
      c.ints.emplace_back(ints[i].first, ints[i].second[at[i]]);
    }
    for (std::size_t i = 0; i < bools.size(); ++i) {
      c.bools.emplace_back(bools[i], at[ints.size() + i] == 1);
    }
    if (!accept || accept(c)) out.push_back(std::move(c));
    std::size_t i = sizes.size();
    while (i > 0 && ++at[i - 1] == sizes[i - 1]) at[--i] = 0;
    if (i == 0) break;
  }
  if (out.empty()) {
    throw Error(ErrorCode::InvalidArgument, "tune: the space's rule refuses every combination");
  }
  return out;
}

}  // namespace kreg
