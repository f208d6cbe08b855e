#include "core/hash.hpp"

#include <gtest/gtest.h>

#include <unistd.h>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

namespace kreg::core {
namespace {

TEST(Hash, HexIsSixteenLowercaseDigitsZeroPadded) {
  EXPECT_EQ(hex64(0), "0000000000000000");
  EXPECT_EQ(hex64(0xabc), "0000000000000abc");
  EXPECT_EQ(hex64(UINT64_MAX), "ffffffffffffffff");
  EXPECT_EQ(hex64(0x0123456789abcdefULL), "0123456789abcdef");
}

TEST(Hash, StableAcrossRunsAndSensitiveToEveryByte) {
  EXPECT_EQ(hash64("kreg"), hash64(std::string("kreg")));
  EXPECT_NE(hash64("kreg"), hash64("kreh"));
  EXPECT_NE(hash64(""), hash64(std::string(1, '\0')));
}

TEST(Hash, AFileDigestIsThirtyTwoHexDigitsOfItsContent) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("kreg_hash_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto write = [&](const char* name, const std::string& content) {
    std::ofstream(dir / name, std::ios::binary) << content;
    return dir / name;
  };
  const std::optional<std::string> a = file_digest(write("a", "same"));
  const std::optional<std::string> b = file_digest(write("b", "same"));
  const std::optional<std::string> c = file_digest(write("c", "other"));
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->size(), 32U);
  EXPECT_EQ(a->find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_FALSE(file_digest(dir / "missing").has_value());
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace kreg::core
