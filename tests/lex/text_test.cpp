// What readers and rewrites ask of a text's tokens (src/lex/text.hpp).
#include "lex/text.hpp"

#include <gtest/gtest.h>

namespace kreg::lex {
namespace {

bool names(std::string_view text, std::string_view word) {
  return Text(text).names(word);
}
bool names_before(std::string_view text, std::string_view word, std::string_view next) {
  return Text(text).names_before(word, next);
}

TEST(Text, NamesWholeIdentifiersOnly) {
  EXPECT_TRUE(names("a_shape[0]", "a_shape"));
  EXPECT_TRUE(names("x+a_shape", "a_shape"));
  EXPECT_FALSE(names("a_shapes[0]", "a_shape"));
  EXPECT_FALSE(names("my_a_shape", "a_shape"));
  EXPECT_FALSE(names("a_shape2", "a_shape"));
  EXPECT_TRUE(names("a_shapes + a_shape", "a_shape"));
  // Words in comments and literals are not names; those in a directive are.
  EXPECT_FALSE(names("// a_shape\n\"a_shape\" 'a' R\"(a_shape)\"", "a_shape"));
  EXPECT_TRUE(names("#define S a_shape[0]\n", "a_shape"));
  EXPECT_TRUE(names("a_sh\\\nape", "a_shape"));
}

TEST(Text, AWordBeforeWhatFollowsIt) {
  EXPECT_TRUE(names_before("out = d[0];", "d", "["));
  EXPECT_TRUE(names_before("out = d \t\n [0];", "d", "["));
  EXPECT_FALSE(names_before("out = d;", "d", "["));
  EXPECT_FALSE(names_before("out = dd[0] + d;", "d", "["));
  EXPECT_FALSE(names_before("out = (d)[0];", "d", "["));
  EXPECT_TRUE(names_before("auto g = cg::this_grid();", "cg", "::"));
  EXPECT_FALSE(names_before("auto g = mcg::x;", "cg", "::"));
  EXPECT_TRUE(names_before("as_type<uint>(x)", "as_type", "<"));
  EXPECT_FALSE(names_before("d[0]", "", "["));
  EXPECT_FALSE(names_before("d /* */ [0]", "d", "["));
}

TEST(Text, PairsDefinesAndPunctuators) {
  const Text t("struct Limits<float> {};\nnamespace cg = x;\n#define WARP 32\nc ? a : b;");
  EXPECT_TRUE(t.has_pair("struct", "Limits"));
  EXPECT_TRUE(t.has_pair("namespace", "cg"));
  EXPECT_FALSE(t.has_pair("class", "Limits"));
  EXPECT_TRUE(t.defines("WARP"));
  EXPECT_FALSE(t.defines("WARP_SIZE"));
  EXPECT_TRUE(t.has("?"));
  EXPECT_FALSE(Text("// c ? a : b\n\"?\"").has("?"));
  EXPECT_TRUE(Text("p.xy + q").stands_alone("q"));
  EXPECT_FALSE(Text("p.xy + r->xy").stands_alone("xy"));
}

TEST(Text, IncludedHeadersByName) {
  const Text t(
      "#include <kreg/kernel.cuh>\n  # include \"cuda_fp16.h\"\n#inc\\\nlude <cuda/std/cstdint>\n"
      "#include HEADER\n// #include <commented.h>\nconst char* s = \"#include <string.h>\";\n");
  EXPECT_EQ(t.included_headers(),
            (std::vector<std::string>{"kreg/kernel.cuh", "cuda_fp16.h", "cuda/std/cstdint", ""}));
  for (std::size_t i = 0; i < t.tokens().size(); ++i) {
    if (t.tokens().raw(i) == "s") EXPECT_FALSE(t.in_include(i));
    if (t.tokens().raw(i) == "cuda_fp16.h" || t.tokens().raw(i) == "\"cuda_fp16.h\"") {
      EXPECT_TRUE(t.in_include(i));
    }
  }
}

TEST(Text, NumberedListingNumbersEveryLine) {
  EXPECT_EQ(numbered("a\nb\n"), "   1 | a\n   2 | b\n");
  EXPECT_EQ(numbered("x"), "   1 | x\n");
  EXPECT_EQ(numbered(""), "");
  EXPECT_EQ(numbered("\n\n"), "   1 | \n   2 | \n");
  std::string long_text;
  for (int i = 0; i < 10000; ++i) long_text += "l\n";
  EXPECT_NE(numbered(long_text).find("\n10000 | l\n"), std::string::npos);
}

}  // namespace
}  // namespace kreg::lex
