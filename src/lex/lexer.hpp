#pragma once
// A C++ lexer for the text kreg reads and rewrites: kernel sources (their entries, constants
// and includes) and custom-kernel bodies and headers. Tokens keep their place in the text, so
// that a rewrite is a list of edits at token offsets (edits.hpp) and everything else stays as
// written, byte for byte.
//
// It reads what the compiler's first phases would, without running the preprocessor:
// identifiers, pp-numbers (with digit separators, exponents and suffixes), string and
// character literals with their prefixes and suffixes, raw strings, both kinds of comment,
// backslash-newline line splices, the longest punctuator, and preprocessor lines. Each token
// knows its line, the braces open before it and whether it is inside a directive. Bytes that
// start no token (`@`, `$`, a stray backslash, non-ASCII) are tokens of their own, so nothing
// is ever dropped; an unterminated literal or comment runs to the end of its line (a literal)
// or of the text (a comment).

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kreg::lex {

enum class Kind : std::uint8_t {
  Identifier,  // keywords too
  Number,      // 1'000, 0x1Fu, 1.5e-3f, .5, 12_km
  String,      // "...", u8"...", L"...", R"d(...)d", "..."_sv
  Char,        // 'a', u8'a', L'\n'
  Comment,     // // ... or /* ... */
  Punct,       // ::, ->, <<=, {, ...
  Hash,        // the # (or %:) that starts a preprocessor line
  Other,       // a byte that starts no token
};

struct Token {
  Kind kind = Kind::Other;
  bool directive = false;  // on a preprocessor line, its Hash included
  bool spliced = false;    // the token's text holds a backslash-newline
  bool first = false;      // no other token starts or ends on its line before it
  std::uint32_t line = 1;  // of the token's first byte, from 1
  std::size_t begin = 0;   // [begin, end) in the text
  std::size_t end = 0;
  // Braces open before the token. Across #if/#elif/#else branches, each branch starts at the
  // depth its #if had, and after #endif the depth is where the first branch left it, so
  // branches that each open a brace count once.
  int depth = 0;
};

class Tokens {
 public:
  static constexpr std::size_t npos = static_cast<std::size_t>(-1);

  explicit Tokens(std::string_view text);

  std::string_view text() const noexcept { return text_; }
  std::size_t size() const noexcept { return tokens_.size(); }
  bool empty() const noexcept { return tokens_.empty(); }
  const Token& operator[](std::size_t i) const noexcept { return tokens_[i]; }
  auto begin() const noexcept { return tokens_.begin(); }
  auto end() const noexcept { return tokens_.end(); }

  // The token's bytes as written, splices included.
  std::string_view raw(std::size_t i) const noexcept {
    return text_.substr(tokens_[i].begin, tokens_[i].end - tokens_[i].begin);
  }
  // The token as the compiler reads it: its bytes without line splices.
  std::string spelling(std::size_t i) const;
  // Whether token `i` exists and is spelled `s`.
  bool is(std::size_t i, std::string_view s) const noexcept;
  bool is_identifier(std::size_t i) const noexcept {
    return i < tokens_.size() && tokens_[i].kind == Kind::Identifier;
  }

  // The next and previous tokens that are not comments, or npos.
  std::size_t next(std::size_t i) const noexcept;
  std::size_t prev(std::size_t i) const noexcept;
  // Whether tokens `a` and `b` (a < b) touch, with nothing at all between them; false when
  // `b` is past the last token.
  bool touching(std::size_t a, std::size_t b) const noexcept {
    return b < tokens_.size() && tokens_[a].end == tokens_[b].begin;
  }
  // The token that closes the bracket at `open` ((, [, {), or npos if none does.
  std::size_t closing(std::size_t open) const noexcept;

 private:
  std::string_view text_;
  std::vector<Token> tokens_;
};

// Identifier characters as C++ has them in ASCII: letters, digits and '_'.
constexpr bool ident_start(char c) noexcept {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
constexpr bool ident_char(char c) noexcept {
  return ident_start(c) || (c >= '0' && c <= '9');
}

// Whether `name` is one identifier: "a_shape" yes, "3d" and "a b" no.
bool is_identifier(std::string_view name) noexcept;

// Whether `name` is a C++20 keyword or an alternative token (`and`, `xor_eq`).
bool is_keyword(std::string_view name) noexcept;

}  // namespace kreg::lex
