// The lexer every reader and rewrite of C++ text in kreg shares (src/lex/lexer.hpp).
#include "lex/lexer.hpp"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace kreg::lex {
namespace {

struct Seen {
  Kind kind;
  std::string text;
};

std::vector<Seen> seen(std::string_view text) {
  const Tokens tokens(text);
  std::vector<Seen> out;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    out.push_back({tokens[i].kind, std::string(tokens.raw(i))});
  }
  return out;
}

std::vector<std::string> texts(std::string_view text) {
  std::vector<std::string> out;
  for (const Seen& s : seen(text)) out.push_back(s.text);
  return out;
}

using V = std::vector<std::string>;

TEST(Lexer, NumbersWithSeparatorsExponentsAndSuffixes) {
  EXPECT_EQ(texts("int n = 1'000'000;"), (V{"int", "n", "=", "1'000'000", ";"}));
  EXPECT_EQ(texts("0x1F'FFu 1.5e-3f .5 1e+10 12_km 0b1010'0101"),
            (V{"0x1F'FFu", "1.5e-3f", ".5", "1e+10", "12_km", "0b1010'0101"}));
  EXPECT_EQ(seen("1'0")[0].kind, Kind::Number);
  // A separator is followed by a digit or letter: 1'+'... is a number, then a literal.
  EXPECT_EQ(texts("x = 1 '+';"), (V{"x", "=", "1", "'+'", ";"}));
  EXPECT_EQ(texts("a.b 1.f"), (V{"a", ".", "b", "1.f"}));
}

TEST(Lexer, CharacterAndStringLiteralsWithPrefixesAndSuffixes) {
  EXPECT_EQ(texts(R"(c = u8'x'; d = L'\''; e = 'ab';)"),
            (V{"c", "=", "u8'x'", ";", "d", "=", "L'\\''", ";", "e", "=", "'ab'", ";"}));
  EXPECT_EQ(seen("u8'x'")[0].kind, Kind::Char);
  EXPECT_EQ(texts(R"(s = "a\"b" u8"x" "y"_sv L"w";)"),
            (V{"s", "=", "\"a\\\"b\"", "u8\"x\"", "\"y\"_sv", "L\"w\"", ";"}));
  // An identifier that only looks like a prefix is an identifier.
  EXPECT_EQ(texts("u8 = 'a'; LR = x;"), (V{"u8", "=", "'a'", ";", "LR", "=", "x", ";"}));
}

TEST(Lexer, RawStringsHoldQuotesCommentsAndLineBreaks) {
  EXPECT_EQ(texts("R\"(a \" // b)\" x"), (V{"R\"(a \" // b)\"", "x"}));
  EXPECT_EQ(texts("s = R\"xy(a)\"b)xy\";"), (V{"s", "=", "R\"xy(a)\"b)xy\"", ";"}));
  const Tokens t("LR\"(line\\\nnext)\" y");
  ASSERT_EQ(t.size(), 2U);
  EXPECT_EQ(t[0].kind, Kind::String);
  EXPECT_FALSE(t[0].spliced) << "a raw string's backslash-newline is its own text";
  EXPECT_EQ(t[1].line, 2U);
  // A delimiter that cannot be one: read as an ordinary string.
  EXPECT_EQ(seen("R\"a b(x)a b\"")[0].kind, Kind::String);
}

TEST(Lexer, CommentsHideQuotesAndWords) {
  const std::vector<Seen> s = seen("// don't 'x\nthreadgroup");
  ASSERT_EQ(s.size(), 2U);
  EXPECT_EQ(s[0].kind, Kind::Comment);
  EXPECT_EQ(s[0].text, "// don't 'x");
  EXPECT_EQ(s[1].kind, Kind::Identifier);
  const Tokens t("/* \"unclosed */ a // it's\n b /* never closed");
  ASSERT_EQ(t.size(), 5U);
  EXPECT_EQ(t[0].kind, Kind::Comment);
  EXPECT_EQ(t.raw(1), "a");
  EXPECT_EQ(t.raw(2), "// it's");
  EXPECT_EQ(t.raw(3), "b");
  EXPECT_EQ(t[4].kind, Kind::Comment);
  EXPECT_EQ(t[4].end, t.text().size());
  EXPECT_EQ(t.next(0), 1U);
  EXPECT_EQ(t.next(1), 3U);
  EXPECT_EQ(t.prev(3), 1U);
}

TEST(Lexer, LineSplicesJoinLinesAsTheCompilerDoes) {
  const Tokens t("#define A \\\n  1\nint ab\\\ncd; // c \\\n still comment\nx");
  std::vector<std::string> spelled;
  for (std::size_t i = 0; i < t.size(); ++i) spelled.push_back(t.spelling(i));
  EXPECT_EQ(spelled, (V{"#", "define", "A", "1", "int", "abcd", ";", "// c  still comment", "x"}));
  EXPECT_TRUE(t[3].directive) << "a splice continues the directive";
  EXPECT_FALSE(t[4].directive);
  EXPECT_TRUE(t[5].spliced);
  EXPECT_TRUE(t.is(5, "abcd"));
  EXPECT_EQ(t[8].line, 6U);
}

TEST(Lexer, DirectivesStartAtTheLineStartOnly) {
  const Tokens t("  # include <a.h>\n#define S(x) #x\n%:if 1\nint y = a # b;");
  EXPECT_EQ(t[0].kind, Kind::Hash);
  EXPECT_TRUE(t[1].directive);
  std::size_t stringize = 0;
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (t.raw(i) == "#" && t[i].kind == Kind::Punct) ++stringize;
  }
  EXPECT_EQ(stringize, 2U) << "# inside a directive or mid-line is an operator";
  std::size_t hashes = 0;
  for (const Token& token : t) hashes += token.kind == Kind::Hash ? 1 : 0;
  EXPECT_EQ(hashes, 3U);
  EXPECT_EQ(Tokens("/* c */ #pragma once")[1].kind, Kind::Hash);
}

TEST(Lexer, BranchesThatEachOpenABraceCountOnce) {
  const std::string text =
      "void f() {\n"
      "#if FAST\n"
      "  for (;;) {\n"
      "#elif SLOW\n"
      "  while (1) {\n"
      "#else\n"
      "  do {\n"
      "#endif\n"
      "    body();\n"
      "  }\n"
      "}\n"
      "after;\n";
  const Tokens t(text);
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (t.raw(i) == "body") EXPECT_EQ(t[i].depth, 2);
    if (t.raw(i) == "after") EXPECT_EQ(t[i].depth, 0);
  }
  // Braces inside a directive do not count.
  const Tokens d("#define OPEN {\nx;");
  EXPECT_EQ(d[d.size() - 2].depth, 0);
}

TEST(Lexer, PunctuatorsAreTheLongestMatch) {
  EXPECT_EQ(texts("a::b->c >>= d ... e<=>f ## g"),
            (V{"a", "::", "b", "->", "c", ">>=", "d", "...", "e", "<=>", "f", "##", "g"}));
  EXPECT_EQ(texts("std::vector<::x>"), (V{"std", "::", "vector", "<", "::", "x", ">"}));
  EXPECT_EQ(seen("@")[0].kind, Kind::Other);
}

TEST(Lexer, UnterminatedLiteralsEndAtTheLineBreak) {
  const Tokens t("a = \"open\nb = 'c\nd");
  EXPECT_EQ(t.raw(2), "\"open");
  EXPECT_EQ(t.raw(5), "'c");
  EXPECT_EQ(t.raw(6), "d");
  EXPECT_EQ(t[6].line, 3U);
}

TEST(Lexer, BracketsCloseAtTheirPartner) {
  const Tokens t("f(a, (b), g(c)) [x[1]] {y}");
  EXPECT_EQ(t.raw(t.closing(1)), ")");
  EXPECT_EQ(t.closing(1), 12U);
  EXPECT_EQ(t.closing(0), Tokens::npos);
  EXPECT_EQ(t.closing(13), 18U);
  EXPECT_EQ(t.raw(t.closing(13)), "]");
}

TEST(Lexer, TouchingTokens) {
  const Tokens t("a.b c");
  EXPECT_TRUE(t.touching(0, 1));
  EXPECT_TRUE(t.touching(1, 2));
  EXPECT_FALSE(t.touching(2, 3));
  EXPECT_FALSE(t.touching(3, 4));  // past the last token: nothing touches it
}

// Whatever the bytes, the tokens cover them in order, and only blanks, line breaks and
// splices lie between tokens.
TEST(Lexer, TokensCoverEveryByte) {
  std::mt19937 random(11);
  const std::string alphabet = "ab1_'\"\\\n /*#R(){}.:+-e<>u8x\r\t@";
  for (int round = 0; round < 2000; ++round) {
    std::string text;
    const int n = static_cast<int>(random() % 60);
    for (int k = 0; k < n; ++k) text += alphabet[random() % alphabet.size()];
    const Tokens t(text);
    std::size_t at = 0;
    for (const Token& token : t) {
      ASSERT_LE(at, token.begin) << text;
      for (std::size_t k = at; k < token.begin; ++k) {
        const char c = text[k];
        ASSERT_TRUE(c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\\') << text;
      }
      ASSERT_LT(token.begin, token.end) << text;
      at = token.end;
    }
    ASSERT_LE(at, text.size());
    for (std::size_t k = at; k < text.size(); ++k) {
      const char c = text[k];
      ASSERT_TRUE(c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\\') << text;
    }
  }
}

TEST(Lexer, KeywordsAndAlternativeTokens) {
  for (const char* word : {"int", "constexpr", "co_await", "char8_t", "thread_local", "xor_eq",
                           "and", "requires", "wchar_t"}) {
    EXPECT_TRUE(is_keyword(word)) << word;
  }
  // Metal's words, CUDA's built-ins and library names are identifiers to the lexer.
  for (const char* word : {"threadgroup", "device", "half", "uint", "threadIdx", "size_t", "std",
                           "Int", "int8_t", "", "in t"}) {
    EXPECT_FALSE(is_keyword(word)) << word;
  }
}

}  // namespace
}  // namespace kreg::lex
