#pragma once
// Elapsed wall time since construction, on the steady clock.

#include <chrono>
#include <cstdint>

namespace kreg::core {

class Stopwatch {
 public:
  std::uint64_t nanoseconds() const noexcept {
    return static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start_).count());
  }

 private:
  using Clock = std::chrono::steady_clock;
  Clock::time_point start_ = Clock::now();
};

}  // namespace kreg::core
