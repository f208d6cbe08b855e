#pragma once
// The built-in kernel sources as kreg embeds them from kernels/, and copies of them edited the
// way a kernel's contract could drift, for the tests of the op contracts.

#include "core/embedded.hpp"

#include <gtest/gtest.h>

#include <regex>
#include <string>

namespace kreg::test {

// Embedded in the library, so that the tests run from any folder, on any machine.
inline std::string builtin_source(const std::string& file) {
  for (const core::EmbeddedFile& source : core::embedded_sources()) {
    if (source.name == file) return std::string(source.text);
  }
  ADD_FAILURE() << "kreg embeds no kernels/" << file;
  return {};
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
