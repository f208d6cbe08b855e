#include "cuda/selection.hpp"

#include "cuda/stream_state.hpp"

namespace kreg::cuda {

Selection& selection() noexcept {
  thread_local Selection current;
  return current;
}

}  // namespace kreg::cuda
