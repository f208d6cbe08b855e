#include "cache/entry.hpp"

#include "core/hash.hpp"

#define XXH_INLINE_ALL
#include <xxhash.h>

#include <cstring>

namespace kreg::cache {
namespace {

constexpr char kMagic[8] = {'K', 'R', 'E', 'G', 'B', 'I', 'N', '\0'};
constexpr std::size_t kChecksumBytes = 16;

void put_u32(std::string& out, std::uint32_t v) {
  out.append(reinterpret_cast<const char*>(&v), 4);
}
void put_u64(std::string& out, std::uint64_t v) {
  out.append(reinterpret_cast<const char*>(&v), 8);
}

std::string checksum(std::string_view bytes) {
  const XXH128_hash_t h = XXH3_128bits(bytes.data(), bytes.size());
  std::string out(kChecksumBytes, '\0');
  std::memcpy(out.data(), &h.low64, 8);
  std::memcpy(out.data() + 8, &h.high64, 8);
  return out;
}

}  // namespace

std::string encode_entry(std::string_view key, std::string_view payload) {
  std::string out;
  out.reserve(sizeof(kMagic) + 4 + 16 + key.size() + payload.size() + kChecksumBytes);
  out.append(kMagic, sizeof(kMagic));
  put_u32(out, kFormatVersion);
  put_u64(out, key.size());
  out.append(key);
  put_u64(out, payload.size());
  out.append(payload);
  out += checksum(out);
  return out;
}

std::optional<DecodedEntry> decode_entry(std::string_view bytes, std::string* why) {
  auto fail = [&](const char* reason) -> std::optional<DecodedEntry> {
    if (why != nullptr) *why = reason;
    return std::nullopt;
  };
  if (bytes.empty()) return fail("empty file");
  if (bytes.size() < sizeof(kMagic) + 4 + 8 + 8 + kChecksumBytes) return fail("truncated");
  if (std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0) return fail("not a kreg cache entry");
  std::uint32_t version = 0;
  std::memcpy(&version, bytes.data() + 8, 4);
  if (version != kFormatVersion) return fail("written by another cache format version");
  const std::string_view body = bytes.substr(0, bytes.size() - kChecksumBytes);
  if (checksum(body) != bytes.substr(body.size())) return fail("checksum mismatch");
  std::size_t at = 12;
  auto take = [&](std::string& out) {
    std::uint64_t n = 0;
    if (body.size() - at < 8) return false;
    std::memcpy(&n, body.data() + at, 8);
    at += 8;
    if (n > body.size() - at) return false;
    out.assign(body.substr(at, n));
    at += n;
    return true;
  };
  DecodedEntry entry;
  if (!take(entry.key) || !take(entry.payload) || at != body.size()) return fail("malformed");
  return entry;
}

std::string key_digest(std::string_view key) {
  const XXH128_hash_t h = XXH3_128bits(key.data(), key.size());
  return core::hex64(h.high64) + core::hex64(h.low64);
}

}  // namespace kreg::cache
