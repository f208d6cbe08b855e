// Must build: the control for the probes that must not, so that their failure is the
// include rule and nothing else.
#include <kreg/error.hpp>

#include "core/hash.hpp"

namespace kreg::core {

std::uint64_t layer_probe(std::string_view text) {
  return hash64(text);
}

}  // namespace kreg::core
