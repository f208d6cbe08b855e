#pragma once
// The built-in kernel sources as they are in kernels/, and copies of them edited the way a
// kernel's contract could drift, for the tests of the op contracts.

#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <sstream>
#include <string>

namespace kreg::test {

inline std::string builtin_source(const std::string& file) {
  std::ifstream in(std::string(KREG_KERNELS_DIR) + "/" + file, std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot read kernels/" << file;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// `text` with its one occurrence of `from` replaced by `to`; a test whose edit no longer
// applies fails here instead of testing the unedited source.
inline std::string edited(std::string text, const std::string& from, const std::string& to) {
  const std::size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << "'" << from << "' is not in the source";
  EXPECT_EQ(text.find(from, at + 1), std::string::npos) << "'" << from << "' is there twice";
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

// `text` without its `// kreg:specialization` lines, which name constants by index too.
inline std::string without_specializations(const std::string& text) {
  return std::regex_replace(text, std::regex(R"(// kreg:specialization [^\n]*\n)"), "");
}

}  // namespace kreg::test
