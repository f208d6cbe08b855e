#include "core/label.hpp"

#include <kreg/constants.hpp>
#include <kreg/error.hpp>

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace kreg {
namespace {

TEST(Label, NameAloneWithoutConstants) {
  EXPECT_EQ(kernel_label("elementwise_add_f32", {}), "elementwise_add_f32");
  EXPECT_EQ(constants_key({}), "");
}

TEST(Label, SeedFormatSortedByIndex) {
  Constants c{.bools = {{200, true}}, .ints = {{300, 64}}};
  EXPECT_EQ(kernel_label("attn", c), "attn|200:b1|300:i64");
  EXPECT_EQ(constants_key(c), "200:b1|300:i64");
}

TEST(Label, OrderOfGivenConstantsDoesNotMatter) {
  Constants a{.bools = {{201, false}, {200, true}}, .ints = {{300, 4}, {5, -7}}};
  Constants b{.bools = {{200, true}, {201, false}}, .ints = {{5, -7}, {300, 4}}};
  EXPECT_EQ(kernel_label("k", a), kernel_label("k", b));
  EXPECT_EQ(kernel_label("k", a), "k|5:i-7|200:b1|201:b0|300:i4");
}

TEST(Label, BoolsAndIntsInterleaveByIndex) {
  Constants c{.bools = {{2, false}}, .ints = {{1, 10}, {3, 30}}};
  EXPECT_EQ(kernel_label("k", c), "k|1:i10|2:b0|3:i30");
}

TEST(Label, ExtremeValues) {
  Constants c{.ints = {{0, INT32_MIN}, {2147483647, INT32_MAX}}};
  EXPECT_EQ(kernel_label("k", c), "k|0:i-2147483648|2147483647:i2147483647");
}

TEST(Label, RepeatedIndexIsInvalidArgument) {
  Constants twice{.bools = {{7, true}}, .ints = {{7, 1}}};
  try {
    kernel_label("k", twice);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
    EXPECT_NE(std::string(e.what()).find("7"), std::string::npos);
  }
  EXPECT_THROW(constants_key(twice), Error);
}

TEST(Label, ManyConstantsFormatLikeFew) {
  Constants c;
  for (int i = 99; i >= 0; --i) c.ints.emplace_back(i, -i * 1000003);
  const std::string label = kernel_label("n", c);
  EXPECT_EQ(label.substr(0, 16), "n|0:i0|1:i-10000");
  EXPECT_EQ(label.substr(label.size() - 14), "|99:i-99000297");
}

TEST(Label, ParseRoundTripsTheCanonicalText) {
  Constants c{.bools = {{200, true}, {2, false}}, .ints = {{300, -64}, {0, 7}}};
  const std::string key = constants_key(c);
  EXPECT_EQ(constants_key(parse_constants(key)), key);
  EXPECT_TRUE(parse_constants("").empty());
  for (const char* bad : {"200", "200:x1", "200:b2", ":b1", "a:b1", "1:i", "1:i1|", "1:i1|1:b0",
                          "1:i99999999999", "-1:i1", "1:i1x"}) {
    EXPECT_THROW(parse_constants(bad), Error) << bad;
  }
}

TEST(LookupKey, CanonicalAndDistinct) {
  core::LookupKey a_builder, b_builder, c_builder;
  Constants a{.bools = {{200, true}}, .ints = {{300, 4}, {1, 2}}};
  Constants b{.bools = {{200, true}}, .ints = {{1, 2}, {300, 4}}};
  Constants c{.bools = {{200, true}}, .ints = {{1, 2}, {300, 5}}};
  EXPECT_EQ(a_builder.build("k", a), b_builder.build("k", b));
  EXPECT_NE(a_builder.build("k", a), c_builder.build("k", c));
  core::LookupKey plain;
  EXPECT_EQ(plain.build("k", {}), "k");
  // A name crafted to look like a packed key never matches one.
  core::LookupKey packed, crafted;
  const std::string key(packed.build("k", a));
  EXPECT_EQ(crafted.build(key, {}), "");
  // Names of other lengths with constants cannot alias either.
  core::LookupKey longer;
  EXPECT_NE(longer.build("kk", a), key);
}

// The key's records are the constants in sorted_constants' order (stable: a repeated index
// keeps bools before ints and each in the order given), for sets of every size.
TEST(LookupKey, RecordsFollowTheSortedConstants) {
  std::mt19937 random(7);
  for (int round = 0; round < 500; ++round) {
    Constants c;
    const int bools = static_cast<int>(random() % 6);
    const int ints = static_cast<int>(random() % (round % 50 == 0 ? 60 : 6));
    for (int i = 0; i < bools; ++i)
      c.bools.emplace_back(static_cast<int>(random() % 8), random() % 2);
    for (int i = 0; i < ints; ++i) {
      c.ints.emplace_back(static_cast<int>(random() % 8), static_cast<std::int32_t>(random()));
    }
    std::string want;
    if (bools + ints == 0) {
      want = "kernel";
    } else {
      want = std::string(1, core::LookupKey::kMarker) + std::string("\x06\x00", 2) + "kernel";
      for (const core::ConstantValue& v : core::sorted_constants(c)) {
        want.append(reinterpret_cast<const char*>(&v.index), 4);
        want.push_back(v.is_bool ? 'b' : 'i');
        want.append(reinterpret_cast<const char*>(&v.value), 4);
      }
    }
    core::LookupKey key;
    EXPECT_EQ(key.build("kernel", c), want) << round;
  }
}

TEST(LookupKey, LargeSetsUseTheHeap) {
  Constants big;
  for (int i = 0; i < 100; ++i) big.ints.emplace_back(99 - i, i);
  Constants sorted;
  for (int i = 0; i < 100; ++i) sorted.ints.emplace_back(i, 99 - i);
  core::LookupKey x, y;
  EXPECT_EQ(x.build("name", big), y.build("name", sorted));
  EXPECT_EQ(x.build("name", big).size(), 3 + 4 + 100 * 9u);
}

}  // namespace
}  // namespace kreg
