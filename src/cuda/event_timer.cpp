#include "cuda/event_timer.hpp"

#include "cuda/context.hpp"
#include "cuda/driver_api.hpp"
#include "cuda/launch_journal.hpp"

#include <kreg/error.hpp>

namespace kreg::cuda {
namespace {

// An event that times, destroyed with its owner.
class TimingEvent {
 public:
  TimingEvent() {
    check(driver().cuEventCreate(&event_, CU_EVENT_DEFAULT), ErrorCode::CudaError, "cuEventCreate");
  }
  ~TimingEvent() {
    if (event_ != nullptr) driver().cuEventDestroy(event_);
  }
  TimingEvent(const TimingEvent&) = delete;
  TimingEvent& operator=(const TimingEvent&) = delete;
  TimingEvent(TimingEvent&& other) noexcept : event_(other.event_) { other.event_ = nullptr; }
  TimingEvent& operator=(TimingEvent&&) = delete;

  CUevent get() const noexcept { return event_; }

 private:
  CUevent event_ = nullptr;
};

}  // namespace

std::vector<double> time_launches(int device, void* stream, const std::function<void()>& launch,
                                  int repeats) {
  const DriverApi& api = driver();
  const ContextScope on(device);
  auto* s = static_cast<CUstream>(stream);
  std::vector<TimingEvent> events;
  events.reserve(static_cast<std::size_t>(repeats) + 1);
  for (int i = 0; i <= repeats; ++i) events.emplace_back();
  // Back to back: the event that ends one call starts the next.
  check(api.cuEventRecord(events[0].get(), s), ErrorCode::CudaError, "cuEventRecord");
  for (int i = 0; i < repeats; ++i) {
    launch();
    check(api.cuEventRecord(events[static_cast<std::size_t>(i) + 1].get(), s), ErrorCode::CudaError,
          "cuEventRecord");
  }
  check_stream(api.cuEventSynchronize(events.back().get()), stream, "timing launches");
  std::vector<double> ms;
  ms.reserve(static_cast<std::size_t>(repeats));
  for (int i = 0; i < repeats; ++i) {
    float elapsed = 0;
    check(api.cuEventElapsedTime(&elapsed, events[static_cast<std::size_t>(i)].get(),
                                 events[static_cast<std::size_t>(i) + 1].get()),
          ErrorCode::CudaError, "cuEventElapsedTime");
    ms.push_back(elapsed);
  }
  return ms;
}

}  // namespace kreg::cuda
