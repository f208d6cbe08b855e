#pragma once
// What a kreg::Stream shares between its copies.

#include <memory>

namespace kreg::detail {

struct StreamState {
  void* native = nullptr;  // CUstream; null is the legacy default stream
  int device = 0;
  bool owned = false;  // destroyed with the last copy
  ~StreamState();
  // Memory released on the stream may be kept for reuse on it: the stream is never
  // destroyed (the default stream) or destroyed by kreg, which drops the kept memory first.
  bool reusable() const noexcept { return owned || native == nullptr; }
};

}  // namespace kreg::detail
