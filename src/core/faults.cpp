#include "core/faults.hpp"

#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>

namespace kreg::core::faults {
namespace {

static_assert(static_cast<std::size_t>(Point::LibraryLoad) + 1 == kPoints, "one slot per point");

struct Arm {
  int error = 0;
  int remaining = 0;  // < 0: every call
};

// The fault switch (see faults.hpp). `armed` holds one bit per point: it is all a call site
// reads while nothing is armed. The rest changes only under `mutex`.
struct Switch {
  std::atomic<std::uint32_t> armed{0};
  std::mutex mutex;
  std::array<Arm, kPoints> arms{};
  std::array<std::size_t, kPoints> fired{};
};

// Constant-initialized, so call sites never pass through a static-init guard.
constinit Switch the_switch;

std::size_t index(Point point) noexcept {
  return static_cast<std::size_t>(point);
}

std::uint32_t bit(Point point) noexcept {
  return std::uint32_t{1} << index(point);
}

}  // namespace

void arm(Point point, int error, int times) noexcept {
  if (times == 0) return disarm(point);
  std::lock_guard lock(the_switch.mutex);
  the_switch.arms[index(point)] = Arm{error, times};
  the_switch.armed.fetch_or(bit(point), std::memory_order_release);
}

void disarm(Point point) noexcept {
  std::lock_guard lock(the_switch.mutex);
  the_switch.arms[index(point)] = Arm{};
  the_switch.armed.fetch_and(~bit(point), std::memory_order_release);
}

void disarm_all() noexcept {
  std::lock_guard lock(the_switch.mutex);
  the_switch.arms.fill(Arm{});
  the_switch.armed.store(0, std::memory_order_release);
}

std::size_t fired(Point point) noexcept {
  std::lock_guard lock(the_switch.mutex);
  return the_switch.fired[index(point)];
}

std::optional<int> hit(Point point) noexcept {
  if ((the_switch.armed.load(std::memory_order_relaxed) & bit(point)) == 0) [[likely]] {
    return std::nullopt;
  }
  std::lock_guard lock(the_switch.mutex);
  Arm& arm = the_switch.arms[index(point)];
  if (arm.remaining == 0) return std::nullopt;  // used up by another thread just now
  if (arm.remaining > 0 && --arm.remaining == 0) {
    the_switch.armed.fetch_and(~bit(point), std::memory_order_relaxed);
  }
  ++the_switch.fired[index(point)];
  return arm.error;
}

}  // namespace kreg::core::faults
