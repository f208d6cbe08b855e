#include "cache/entry.hpp"

#include <gtest/gtest.h>

namespace kreg::cache {
namespace {

TEST(CacheEntry, RoundTrips) {
  const std::string payload(
      "\x7f"
      "ELF\0binary",
      11);
  auto entry = decode_entry(encode_entry("the key", payload));
  ASSERT_TRUE(entry.has_value());
  EXPECT_EQ(entry->key, "the key");
  EXPECT_EQ(entry->payload, payload);
}

TEST(CacheEntry, EveryTruncationIsDetected) {
  const std::string bytes = encode_entry("key", std::string(300, 'x'));
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    std::string why;
    EXPECT_FALSE(decode_entry(bytes.substr(0, n), &why).has_value()) << n;
    EXPECT_FALSE(why.empty());
  }
}

TEST(CacheEntry, EveryFlippedBitIsDetected) {
  const std::string bytes = encode_entry("key", "payload bytes");
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string bad = bytes;
      bad[i] = static_cast<char>(bad[i] ^ (1 << bit));
      EXPECT_FALSE(decode_entry(bad).has_value()) << i << ":" << bit;
    }
  }
}

TEST(CacheEntry, ZeroLengthWrongVersionAndForeignFilesAreRejected) {
  std::string why;
  EXPECT_FALSE(decode_entry("", &why).has_value());
  EXPECT_EQ(why, "empty file");
  std::string other_version = encode_entry("k", "p");
  other_version[8] = static_cast<char>(kFormatVersion + 1);
  EXPECT_FALSE(decode_entry(other_version, &why).has_value());
  EXPECT_NE(why.find("version"), std::string::npos);
  EXPECT_FALSE(decode_entry(std::string(100, 'z'), &why).has_value());
}

TEST(CacheEntry, DigestIsStableAndDistinct) {
  EXPECT_EQ(key_digest("abc").size(), 32u);
  EXPECT_EQ(key_digest("abc"), key_digest("abc"));
  EXPECT_NE(key_digest("abc"), key_digest("abd"));
  // Stable across runs and machines: XXH3-128 of "abc".
  EXPECT_EQ(key_digest("abc"), "06b05ab6733a618578af5f94892f3950");
}

}  // namespace
}  // namespace kreg::cache
