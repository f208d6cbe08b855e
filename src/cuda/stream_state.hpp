#pragma once
// What a kreg::Stream shares between its copies, and the one way kreg's own code reaches it.

#include <kreg/stream.hpp>

#include <memory>

namespace kreg::cuda {

struct StreamState {
  void* native = nullptr;  // CUstream; null is the legacy default stream
  int device = 0;
  bool owned = false;  // destroyed with the last copy
  ~StreamState();
  // Memory released on the stream may be kept for reuse on it: the stream is never
  // destroyed (the default stream) or destroyed by kreg, which drops the kept memory first.
  bool reusable() const noexcept { return owned || native == nullptr; }
};

// Stream's friend: the state behind a Stream, and a Stream around a state.
struct StreamAccess {
  static const std::shared_ptr<const StreamState>& state(const Stream& stream) noexcept {
    return stream.state_;
  }
  static Stream make(std::shared_ptr<const StreamState> state) noexcept {
    return Stream(std::move(state));
  }
};

}  // namespace kreg::cuda
