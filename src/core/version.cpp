#include <kreg/version.hpp>

namespace kreg {

const char* version() noexcept {
  return KREG_VERSION;
}

}  // namespace kreg
