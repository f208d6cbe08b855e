#pragma once
// Character classes and the comments and literals that text rewrites of custom-kernel
// source step over. Pure text, no C++ parsing.

#include <cstddef>
#include <string>
#include <string_view>

namespace kreg::custom {

constexpr bool ident_start(char c) noexcept {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

constexpr bool ident_char(char c) noexcept {
  return ident_start(c) || (c >= '0' && c <= '9');
}

// The end of the identifier characters starting at `at` (`at` itself if there are none).
constexpr std::size_t ident_end(std::string_view text, std::size_t at) noexcept {
  while (at < text.size() && ident_char(text[at])) ++at;
  return at;
}

constexpr bool space(char c) noexcept {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

constexpr bool digit(char c) noexcept {
  return c >= '0' && c <= '9';
}

// Whether the ' at `i` is a C++14 digit separator (1'000, 0xFF'FF, 1'0.5'0) rather than
// the start of a character literal: it sits between two characters of a number, a token
// that starts with a digit (or a '.' and a digit). u8'a' is a literal: u8 starts a word.
inline bool digit_separator(std::string_view text, std::size_t i) {
  if (i == 0 || i + 1 >= text.size() || !ident_char(text[i - 1]) || !ident_char(text[i + 1])) {
    return false;
  }
  std::size_t start = i;
  while (start > 0 &&
         (ident_char(text[start - 1]) || text[start - 1] == '\'' || text[start - 1] == '.')) {
    --start;
  }
  return digit(text[start]) || (text[start] == '.' && digit(text[start + 1]));
}

// The end of the comment or the string or character literal starting at `i`, or `i` if none
// starts there.
inline std::size_t skip_inert(std::string_view text, std::size_t i) {
  const char c = text[i];
  const char next = i + 1 < text.size() ? text[i + 1] : '\0';
  if (c == '/' && next == '/') {
    const std::size_t end = text.find('\n', i);
    return end == std::string_view::npos ? text.size() : end;
  }
  if (c == '/' && next == '*') {
    const std::size_t end = text.find("*/", i + 2);
    return end == std::string_view::npos ? text.size() : end + 2;
  }
  if (c == '"' || (c == '\'' && !digit_separator(text, i))) {
    std::size_t j = i + 1;
    while (j < text.size() && text[j] != c) j += text[j] == '\\' ? 2 : 1;
    return j < text.size() ? j + 1 : text.size();
  }
  return i;
}

// For rewrites that copy what they leave: appends the comment or literal starting at `i` to
// `out` and moves `i` past it. False, with nothing done, when none starts there.
inline bool copy_inert(std::string_view text, std::size_t& i, std::string& out) {
  const std::size_t end = skip_inert(text, i);
  if (end == i) return false;
  out.append(text.substr(i, end - i));
  i = end;
  return true;
}

}  // namespace kreg::custom
