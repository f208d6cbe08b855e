#include "cache/signed_value.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <array>
#include <cstring>

namespace kreg::cache {
namespace {

constexpr std::string_view kMagic("KREGSIG\0", 8);
constexpr std::string_view kContext("kreg signed entry 1\0", 20);
constexpr std::size_t kTagBytes = 32;

using Tag = std::array<unsigned char, kTagBytes>;

// False only if OpenSSL fails (out of memory): then nothing is signed or accepted.
bool tag(std::string_view secret, std::string_view entry, Tag& out) {
  EVP_MAC* mac = EVP_MAC_fetch(nullptr, "HMAC", nullptr);
  if (mac == nullptr) return false;
  EVP_MAC_CTX* ctx = EVP_MAC_CTX_new(mac);
  EVP_MAC_free(mac);
  if (ctx == nullptr) return false;
  char digest[] = "SHA256";
  const OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string("digest", digest, 0),
                               OSSL_PARAM_construct_end()};
  std::size_t written = 0;
  const bool ok = EVP_MAC_init(ctx, reinterpret_cast<const unsigned char*>(secret.data()),
                               secret.size(), params) == 1 &&
                  EVP_MAC_update(ctx, reinterpret_cast<const unsigned char*>(kContext.data()),
                                 kContext.size()) == 1 &&
                  EVP_MAC_update(ctx, reinterpret_cast<const unsigned char*>(entry.data()),
                                 entry.size()) == 1 &&
                  EVP_MAC_final(ctx, out.data(), &written, out.size()) == 1 && written == kTagBytes;
  EVP_MAC_CTX_free(ctx);
  return ok;
}

}  // namespace

std::string seal_value(std::string_view entry, std::string_view secret) {
  if (secret.empty()) return std::string(entry);
  Tag t{};
  if (!tag(secret, entry, t)) return {};  // an empty value is never accepted
  std::string out;
  out.reserve(kMagic.size() + kTagBytes + entry.size());
  out.append(kMagic);
  out.append(reinterpret_cast<const char*>(t.data()), t.size());
  out.append(entry);
  return out;
}

std::optional<std::string_view> open_value(std::string_view value, std::string_view secret,
                                           std::string* why) {
  auto fail = [&](const char* reason) -> std::optional<std::string_view> {
    if (why != nullptr) *why = reason;
    return std::nullopt;
  };
  const bool is_signed = value.starts_with(kMagic);
  if (!is_signed) {
    if (!secret.empty()) return fail("not signed, and a secret is set");
    return value;
  }
  if (value.size() < kMagic.size() + kTagBytes) return fail("truncated signature");
  const std::string_view given = value.substr(kMagic.size(), kTagBytes);
  const std::string_view entry = value.substr(kMagic.size() + kTagBytes);
  if (secret.empty()) return entry;
  Tag expected{};
  if (!tag(secret, entry, expected)) return fail("cannot compute the signature");
  // Constant time: how far a forged tag matched must not show in how long it took.
  if (CRYPTO_memcmp(expected.data(), given.data(), kTagBytes) != 0) {
    return fail("signed with another secret, or altered");
  }
  return entry;
}

}  // namespace kreg::cache
