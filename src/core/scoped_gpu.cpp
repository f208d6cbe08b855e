#include "core/scoped_gpu.hpp"

namespace kreg::core {
namespace {

thread_local int scoped = -1;

}  // namespace

int scoped_gpu() noexcept {
  return scoped;
}

void set_scoped_gpu(int device) noexcept {
  scoped = device;
}

}  // namespace kreg::core
