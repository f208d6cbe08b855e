#pragma once
// A text as tokens (lexer.hpp) with an index of its identifiers: what the registry's source
// reader and the custom layer's code generation ask of it. Words in comments and literals
// are not names; those on preprocessor lines are (a macro may use them).

#include "lex/lexer.hpp"

#include <deque>
#include <string>
#include <string_view>
#include <vector>

namespace kreg::lex {

class Text {
 public:
  explicit Text(std::string_view text);
  Text(const Text&) = delete;
  Text& operator=(const Text&) = delete;

  const Tokens& tokens() const noexcept { return tokens_; }
  std::string_view text() const noexcept { return tokens_.text(); }
  bool empty() const noexcept { return tokens_.text().empty(); }

  // Whether one of the text's identifiers is `word`.
  bool names(std::string_view word) const noexcept;
  // Whether `word` is named and the token after it starts with `next`: "d" before "[" (a
  // subscript), "cg" before "::", "as_type" before "<", "exp" before "(".
  bool names_before(std::string_view word, std::string_view next) const noexcept;
  // Whether the text holds the punctuator `punct` outside comments and literals.
  bool has(std::string_view punct) const noexcept;
  // Whether `word` stands somewhere as a name of its own, not a member after `.` or `->`
  // (a struct member declared `float2 xy;`, say).
  bool stands_alone(std::string_view word) const noexcept;
  // Whether `first` is directly followed by `second` (`struct Limits`, `namespace cg`).
  bool has_pair(std::string_view first, std::string_view second) const noexcept;
  // Whether the text has `#define name`.
  bool defines(std::string_view name) const noexcept;

  // Whether token `i` is on an `#include` line, which rewrites leave as written.
  bool in_include(std::size_t i) const noexcept { return i < include_.size() && include_[i]; }
  // The header each `#include` line names, in order: "kreg/kernel.cuh", "cuda_fp16.h"; ""
  // for one that names it by a macro.
  std::vector<std::string> included_headers() const;

 private:
  Tokens tokens_;
  std::vector<bool> include_;
  std::deque<std::string> joined_;             // spellings of identifiers broken by a splice
  std::vector<std::string_view> identifiers_;  // sorted, each once
};

// `source` with each line prefixed by its number, for error messages that show a source.
std::string numbered(std::string_view source);

}  // namespace kreg::lex
