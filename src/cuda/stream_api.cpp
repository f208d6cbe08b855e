// The public streams and scopes (<kreg/stream.hpp>).
#include <kreg/error.hpp>
#include <kreg/stream.hpp>

#include "cuda/context.hpp"
#include "cuda/device.hpp"
#include "cuda/memory.hpp"
#include "cuda/selection.hpp"
#include "cuda/stream.hpp"
#include "cuda/stream_state.hpp"

#include <array>
#include <string>

namespace kreg {
namespace cuda {

StreamState::~StreamState() {
  if (!owned) return;
  try {
    ContextScope context(device);
    release_cached(device, native);
    destroy_stream(native);
  } catch (...) {
    // The driver is gone (process exit): so is the stream.
  }
}

}  // namespace cuda

Stream::Stream(int device) {
  cuda::check_device(device);
  cuda::ContextScope context(device);
  auto state = std::make_shared<cuda::StreamState>();
  state->device = device;
  state->native = cuda::create_stream();
  state->owned = true;
  state_ = std::move(state);
}

Stream Stream::default_stream(int device) {
  auto state = std::make_shared<cuda::StreamState>();
  state->device = device;
  return Stream(std::move(state));
}

Stream Stream::wrap(StreamRef native, int device) {
  cuda::check_device(device);
  auto state = std::make_shared<cuda::StreamState>();
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
  cuda::Selection& current = cuda::selection();
  previous_ = std::move(current.stream);
  previous_device_ = current.device;
  previous_cpu_ = current.cpu;
  current = {cuda::StreamAccess::state(stream), stream.device(), false};
}

StreamScope::~StreamScope() {
  cuda::selection() = {std::move(previous_), previous_device_, previous_cpu_};
}

DeviceScope::DeviceScope(Device device) {
  if (device.type == Device::Type::Gpu) cuda::check_device(device.index);
  cuda::Selection& current = cuda::selection();
  previous_ = std::move(current.stream);
  previous_device_ = current.device;
  previous_cpu_ = current.cpu;
  const bool cpu = device.type == Device::Type::Cpu;
  current = {nullptr, cpu ? -1 : device.index, cpu};
}

DeviceScope::~DeviceScope() {
  cuda::selection() = {std::move(previous_), previous_device_, previous_cpu_};
}

Device current_device() noexcept {
  const cuda::Selection& current = cuda::selection();
  if (current.cpu) return Device::cpu();
  return Device::gpu(current.device < 0 ? 0 : current.device);
}

Stream current_stream() {
  const cuda::Selection& current = cuda::selection();
  if (current.cpu) {
    throw Error(ErrorCode::InvalidArgument,
                "custom kernels run only on a GPU, and this thread selected the CPU "
                "(DeviceScope(Device::cpu()))");
  }
  if (current.stream != nullptr) return cuda::StreamAccess::make(current.stream);
  // Shared, immutable states for the default streams: apply asks on every call.
  static const auto defaults = [] {
    std::array<std::shared_ptr<const cuda::StreamState>, cuda::kMaxDevices> states;
    for (std::size_t i = 0; i < states.size(); ++i) {
      auto state = std::make_shared<cuda::StreamState>();
      state->device = static_cast<int>(i);
      states[i] = std::move(state);
    }
    return states;
  }();
  const int device = current.device < 0 ? 0 : current.device;
  if (device < cuda::kMaxDevices) return cuda::StreamAccess::make(defaults[device]);
  return Stream::default_stream(device);
}

}  // namespace kreg
