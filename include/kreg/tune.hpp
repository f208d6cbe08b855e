#pragma once
/// \file
/// Tuning a kernel's constants: which of a set of candidate specializations runs fastest on
/// this GPU for one bucket of problem shapes (see `Registry::tune`).

#include <kreg/constants.hpp>
#include <kreg/kernel.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace kreg {

/// The candidates of a tuning run: every combination of the listed values of a kernel's int
/// constants and of its listed bool constants (each false and true), on top of `fixed`,
/// less those `accept` refuses.
struct TuneSpace {
  /// An int constant's index and the values to try, e.g. {{302, {16, 32}}, {303, {4, 16}}}.
  std::vector<std::pair<int, std::vector<std::int32_t>>> ints;
  /// Bool constants tried both ways.
  std::vector<int> bools;
  /// Constants every candidate has (the problem's own, such as a head dimension). An index
  /// may not be both fixed and tuned.
  Constants fixed;
  /// Refuses combinations that cannot work (a tile that does not fit, say); unset: none.
  std::function<bool(const Constants&)> accept;

  /// The candidates, in a fixed order: ints by index, values in the order given, then bools,
  /// false first; each with `fixed` merged in. The first is the default: the first value of
  /// each int and false for each bool (unless `accept` refuses it; then the first accepted).
  /// Throws `InvalidArgument` for an index listed twice, an int without values, or a space
  /// whose every combination `accept` refuses.
  std::vector<Constants> candidates() const;
};

/// How `Registry::tune` times and checks candidates.
struct TuneOptions {
  /// Launches before the timed ones (first loads, caches), then timed launches; a
  /// candidate's time is the median of the timed ones.
  int warmup = 3;
  int repeats = 20;
  /// After a candidate's warm-up launches (and a wait for them): whether its outputs are
  /// right, compared with the default's, say. A candidate that fails it is not timed and
  /// cannot win; unset: every candidate that runs is right.
  std::function<bool(const Constants&)> check;
  /// Replaces the GPU timer (CUDA events on the current stream around each launch): gets a
  /// candidate and a function that launches it once, returns its time in ms. For tests and
  /// for other clocks; `launch` need not be called.
  std::function<double(const Constants&, const std::function<void()>& launch)> timer;
};

/// What `Registry::tune` found.
struct TuneResult {
  struct Candidate {
    Constants constants;
    std::string label;   ///< the kernel's key, e.g. "attn|300:i64|302:i4"
    double ms = 0;       ///< median time; 0 for one that did not run
    bool ok = false;     ///< compiled, ran and passed the check
    bool timed = false;  ///< timed in this call, rather than read from the caches
    std::string why;     ///< for one that is not ok
  };
  /// The fastest candidate that is ok, and its time.
  Constants winner;
  double ms = 0;
  /// Every candidate, in the space's order.
  std::vector<Candidate> candidates;
  /// Candidates timed in this call: 0 when every time came from the caches.
  std::size_t timed = 0;
};

/// Launches kernel `kernel` (one candidate) once, on the current stream, with the problem's
/// arguments.
using TuneRun = std::function<void(const Kernel& kernel)>;

}  // namespace kreg
