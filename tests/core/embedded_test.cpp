// The files embedded at build time, and the digests keys hold instead of their text.
#include "core/embedded.hpp"

#include <gtest/gtest.h>
#include <openssl/evp.h>

#include <array>
#include <cstdio>
#include <string>

namespace kreg::core {
namespace {

std::string sha256_hex(std::string_view text) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int size = 0;
  EXPECT_EQ(EVP_Digest(text.data(), text.size(), digest.data(), &size, EVP_sha256(), nullptr), 1);
  std::string hex;
  for (unsigned int i = 0; i < size; ++i) {
    char byte[3];
    std::snprintf(byte, sizeof(byte), "%02x", digest[i]);
    hex += byte;
  }
  return hex;
}

// A digest that is not its text's would let a changed header keep an old binary's key.
TEST(Embedded, EveryFileCarriesTheSha256OfItsText) {
  ASSERT_FALSE(embedded_headers().empty());
  ASSERT_FALSE(embedded_sources().empty());
  for (const auto files : {embedded_headers(), embedded_sources()}) {
    for (const EmbeddedFile& file : files) {
      EXPECT_EQ(file.sha256, sha256_hex(file.text)) << file.name;
    }
  }
}

// The set's digest covers every name and text: keys hold it in place of the headers.
TEST(Embedded, TheSetsDigestIsOfEveryNameAndDigest) {
  for (const auto& [files, digest] : {std::pair{embedded_headers(), embedded_headers_sha256()},
                                      std::pair{embedded_sources(), embedded_sources_sha256()}}) {
    std::string manifest;
    for (const EmbeddedFile& file : files) {
      manifest += std::string(file.name) + "\n" + std::string(file.sha256) + "\n";
    }
    EXPECT_EQ(digest, sha256_hex(manifest));
  }
}

TEST(Embedded, NamesAreUnique) {
  for (const auto files : {embedded_headers(), embedded_sources()}) {
    for (std::size_t i = 0; i < files.size(); ++i) {
      for (std::size_t j = i + 1; j < files.size(); ++j) {
        EXPECT_NE(files[i].name, files[j].name);
      }
    }
  }
}

}  // namespace
}  // namespace kreg::core
