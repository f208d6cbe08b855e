#include "cache/signed_value.hpp"
#include "cache/entry.hpp"

#include <gtest/gtest.h>

namespace kreg::cache {
namespace {

const std::string kEntry = encode_entry("the full key", std::string(300, 'p'));

TEST(SignedValue, WithoutASecretTheEntryTravelsAsItIs) {
  EXPECT_EQ(seal_value(kEntry, ""), kEntry);
  EXPECT_EQ(open_value(kEntry, "").value_or(""), kEntry);
}

TEST(SignedValue, ASignedValueOpensOnlyWithItsSecret) {
  const std::string value = seal_value(kEntry, "fleet secret");
  EXPECT_NE(value, kEntry);
  EXPECT_EQ(open_value(value, "fleet secret").value_or(""), kEntry);
  std::string why;
  EXPECT_FALSE(open_value(value, "another secret", &why).has_value());
  EXPECT_EQ(why, "signed with another secret, or altered");
  EXPECT_FALSE(open_value(kEntry, "fleet secret", &why).has_value());
  EXPECT_EQ(why, "not signed, and a secret is set");
  // A reader without a secret takes the entry; its checksum is still checked by decode_entry.
  EXPECT_EQ(open_value(value, "").value_or(""), kEntry);
}

TEST(SignedValue, EveryFlippedBitAndEveryTruncationIsRefused) {
  const std::string value = seal_value(kEntry, "k");
  for (std::size_t i = 0; i < value.size(); ++i) {
    std::string bad = value;
    bad[i] = static_cast<char>(bad[i] ^ 0x10);
    EXPECT_FALSE(open_value(bad, "k").has_value()) << "byte " << i;
  }
  for (std::size_t n = 0; n < value.size(); ++n) {
    EXPECT_FALSE(open_value(value.substr(0, n), "k").has_value()) << n << " bytes";
  }
}

}  // namespace
}  // namespace kreg::cache
