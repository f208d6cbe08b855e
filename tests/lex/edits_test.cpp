// Rewrites as edits at token offsets, applied once (src/lex/edits.hpp).
#include "lex/edits.hpp"

#include <kreg/error.hpp>

#include <gtest/gtest.h>

namespace kreg::lex {
namespace {

using Side = Edits::Side;

TEST(Edits, UntouchedTextComesOutAsWritten) {
  const Tokens t("a /* c */\n  b;\r\n");
  Edits edits(t);
  EXPECT_EQ(edits.apply(), t.text());
  edits.replace(10, 13, "x");  // "  b" -> "x"
  EXPECT_EQ(edits.apply(), "a /* c */\nx;\r\n");
}

TEST(Edits, TheOrderOfPassesDoesNotMatter) {
  const std::string text = "threadgroup float t; device int* p;";
  const Tokens t(text);
  Edits one(t);
  Edits two(t);
  one.replace(0, 11, "__shared__");
  one.erase(21, 28);
  two.erase(21, 28);
  two.replace(0, 11, "__shared__");
  EXPECT_EQ(one.apply(), "__shared__ float t; int* p;");
  EXPECT_EQ(two.apply(), one.apply());
}

TEST(Edits, InsertionsGoBeforeAReplacementAtTheirOffset) {
  const Tokens t("f(x)");
  Edits edits(t);
  edits.replace(2, 3, "y");
  edits.insert(2, "[");
  edits.insert(3, "]", Side::Close);
  EXPECT_EQ(edits.apply(), "f([y])");
}

TEST(Edits, OpenersOutermostFirstAndClosersInnermostFirst) {
  const Tokens t("x");
  Edits edits(t);
  edits.insert(0, "(", Side::Open, 2);
  edits.insert(0, "{", Side::Open, 1);
  edits.insert(1, "}", Side::Close, 1);
  edits.insert(1, ")", Side::Close, 2);
  EXPECT_EQ(edits.apply(), "{(x)}");
}

// A copy renders its range with the edits inside it, and of the insertions at its ends only
// those of deeper levels: a construct's copy of its operand holds the operand's own nested
// rewrites, never the construct's own wrapper.
TEST(Edits, ACopyHoldsTheRewritesInsideItsRange) {
  const std::string text = "c ? a : b";
  const Tokens t(text);
  Edits edits(t);
  edits.insert(3, {Edits::text("<"), Edits::copy(7, 9, false), Edits::text(">")}, Side::Open, 1);
  edits.insert(5, "|", Side::Close, 1);
  edits.insert(7, {Edits::text("<"), Edits::copy(3, 5, false), Edits::text(">")}, Side::Open, 1);
  edits.insert(9, "|", Side::Close, 1);
  edits.replace(8, 9, "B");
  EXPECT_EQ(edits.apply(), "c ?< B> a| :< a> B|");
}

TEST(Edits, AFlatCopyIsOneLineWithoutComments) {
  const std::string text = "x = (a /* one\ntwo */ +\n b); y";
  const Tokens t(text);
  Edits edits(t);
  edits.insert(text.size(), {Edits::text(" // "), Edits::copy(4, 26, true)}, Side::Open, 1);
  EXPECT_EQ(edits.apply(), text + " // (a   +  b)");
}

TEST(Edits, OverlappingReplacementsAreRefused) {
  const Tokens t("abcdef");
  Edits edits(t);
  edits.replace(0, 4, "x");
  edits.replace(2, 5, "y");
  EXPECT_THROW(edits.apply(), Error);
}

}  // namespace
}  // namespace kreg::lex
