#include "core/hash.hpp"

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace kreg::core {

std::uint64_t hash64(std::string_view bytes) noexcept {
  return XXH3_64bits(bytes.data(), bytes.size());
}

}  // namespace kreg::core
