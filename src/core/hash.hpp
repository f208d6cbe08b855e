#pragma once
// Stable, fast hashing (XXH3). Stable across runs and machines, unlike std::hash, so the
// same values can key the memory table and, later, files on disk.

#include <cstdint>
#include <string_view>

namespace kreg::core {

std::uint64_t hash64(std::string_view bytes) noexcept;

}  // namespace kreg::core
