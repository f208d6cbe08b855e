#pragma once
// Stable, fast hashing (XXH3). Stable across runs and machines, unlike std::hash, so the
// same values can key the memory table and, later, files on disk.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace kreg::core {

std::uint64_t hash64(std::string_view bytes) noexcept;

// `value` as 16 hex digits, zero-padded: names made from a hash.
std::string hex64(std::uint64_t value);

// The XXH3-128 of a file's content, as 32 hex digits; std::nullopt if it cannot be read.
std::optional<std::string> file_digest(const std::filesystem::path& path);

}  // namespace kreg::core
