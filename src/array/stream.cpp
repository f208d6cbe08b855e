#include <kreg/error.hpp>
#include <kreg/stream.hpp>

#include "array/stream_state.hpp"
#include "core/scoped_gpu.hpp"
#include "cuda/context.hpp"
#include "cuda/device.hpp"
#include "cuda/memory.hpp"
#include "cuda/stream.hpp"

#include <array>
#include <string>

namespace kreg {
namespace detail {

StreamState::~StreamState() {
  if (!owned) return;
  try {
    cuda::ContextScope context(device);
    cuda::release_cached(device, native);
    cuda::destroy_stream(native);
  } catch (...) {
    // The driver is gone (process exit): so is the stream.
  }
}

const std::shared_ptr<const StreamState>& stream_state(const Stream& stream) noexcept {
  return stream.state_;
}

Stream make_stream(std::shared_ptr<const StreamState> state) noexcept {
  return Stream(std::move(state));
}

namespace {

// The selection made by the innermost scope on this thread.
struct Selection {
  std::shared_ptr<const StreamState> stream;  // null: the device's default stream
  int device = 0;
  bool cpu = false;
};

Selection& selection() noexcept {
  thread_local Selection current;
  return current;
}

}  // namespace
}  // namespace detail

Stream::Stream(int device) {
  cuda::check_device(device);
  cuda::ContextScope context(device);
  auto state = std::make_shared<detail::StreamState>();
  state->device = device;
  state->native = cuda::create_stream();
  state->owned = true;
  state_ = std::move(state);
}

Stream Stream::default_stream(int device) {
  auto state = std::make_shared<detail::StreamState>();
  state->device = device;
  return Stream(std::move(state));
}

Stream Stream::wrap(StreamRef native, int device) {
  cuda::check_device(device);
  auto state = std::make_shared<detail::StreamState>();
  state->native = native.native;
  state->device = device;
  return Stream(std::move(state));
}

int Stream::device() const noexcept {
  return state_->device;
}

StreamRef Stream::native() const noexcept {
  return {state_->native};
}

void Stream::synchronize() const {
  cuda::ContextScope context(state_->device);
  cuda::synchronize_stream(state_->native);
}

StreamScope::StreamScope(const Stream& stream) {
  detail::Selection& current = detail::selection();
  previous_ = current.stream;
  previous_device_ = current.device;
  previous_cpu_ = current.cpu;
  previous_scoped_gpu_ = core::scoped_gpu();
  current.device = stream.device();
  current.cpu = false;
  current.stream = detail::stream_state(stream);
  core::set_scoped_gpu(current.device);
}

StreamScope::~StreamScope() {
  detail::Selection& current = detail::selection();
  current.stream = std::move(previous_);
  current.device = previous_device_;
  current.cpu = previous_cpu_;
  core::set_scoped_gpu(previous_scoped_gpu_);
}

DeviceScope::DeviceScope(Device device) {
  if (device.type == Device::Type::Gpu) cuda::check_device(device.index);
  detail::Selection& current = detail::selection();
  previous_ = current.stream;
  previous_device_ = current.device;
  previous_cpu_ = current.cpu;
  previous_scoped_gpu_ = core::scoped_gpu();
  current.stream = nullptr;
  current.cpu = device.type == Device::Type::Cpu;
  current.device = current.cpu ? 0 : device.index;
  core::set_scoped_gpu(current.cpu ? -1 : current.device);
}

DeviceScope::~DeviceScope() {
  detail::Selection& current = detail::selection();
  current.stream = std::move(previous_);
  current.device = previous_device_;
  current.cpu = previous_cpu_;
  core::set_scoped_gpu(previous_scoped_gpu_);
}

Device current_device() noexcept {
  const detail::Selection& current = detail::selection();
  return current.cpu ? Device::cpu() : Device::gpu(current.device);
}

Stream current_stream() {
  const detail::Selection& current = detail::selection();
  if (current.cpu) {
    throw Error(ErrorCode::InvalidArgument,
                "kreg: custom kernels run only on a GPU, and this thread selected the CPU "
                "(DeviceScope(Device::cpu()))");
  }
  if (current.stream != nullptr) return detail::make_stream(current.stream);
  // Shared, immutable states for the default streams: apply asks on every call.
  static const auto defaults = [] {
    std::array<std::shared_ptr<const detail::StreamState>, 64> states;
    for (std::size_t i = 0; i < states.size(); ++i) {
      auto state = std::make_shared<detail::StreamState>();
      state->device = static_cast<int>(i);
      states[i] = std::move(state);
    }
    return states;
  }();
  if (current.device >= 0 && static_cast<std::size_t>(current.device) < defaults.size()) {
    return detail::make_stream(defaults[current.device]);
  }
  return Stream::default_stream(current.device);
}

}  // namespace kreg
