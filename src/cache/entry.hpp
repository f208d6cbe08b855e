#pragma once
// The on-disk format of one cache entry. An entry describes itself, so a reader can tell a
// good entry from a truncated, corrupted, foreign or outdated one without trusting the file
// name:
//
//   entry    := magic version key_len key payload_len payload checksum
//   magic    := "KREGBIN\0"              8 bytes
//   version  := u32 (kFormatVersion)     little-endian, as every integer here
//   key      := the full key text        key_len (u64) bytes
//   payload  := the cached value         payload_len (u64) bytes
//   checksum := XXH3-128 of everything before it, 16 bytes

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace kreg::cache {

inline constexpr std::uint32_t kFormatVersion = 1;
// No entry is larger: it holds a key (a source and its headers) and one compile result
// (the largest CUBINs are tens of MB). A reader refuses a file past it before reading a byte.
inline constexpr std::uint64_t kMaxEntryBytes = std::uint64_t{512} << 20;

std::string encode_entry(std::string_view key, std::string_view payload);

struct DecodedEntry {
  std::string key;
  std::string payload;
};

// The entry's key and payload, or std::nullopt with `why` set ("truncated", "checksum
// mismatch", ...). Never throws on malformed input.
std::optional<DecodedEntry> decode_entry(std::string_view bytes, std::string* why = nullptr);

// The 32-hex-digit XXH3-128 of a key: the entry's file name.
std::string key_digest(std::string_view key);

}  // namespace kreg::cache
