#include "custom/address_spaces.hpp"

#include "custom/text_scan.hpp"

namespace kreg::custom {
namespace {

enum class Word : unsigned char { None, Device, Constant, Thread, Threadgroup };

Word word_of(std::string_view token) noexcept {
  if (token == "device") return Word::Device;
  if (token == "constant") return Word::Constant;
  if (token == "thread") return Word::Thread;
  if (token == "threadgroup") return Word::Threadgroup;
  return Word::None;
}

// What the declaration after a word declares, seen from the word's end: a pointer or a
// reference (a `*` or `&` comes before the declarator ends), or an object.
struct Declared {
  bool indirect = false;
  bool constexpr_ = false;
};

Declared declared_after(std::string_view text, std::size_t at) {
  Declared d;
  int angles = 0;
  for (std::size_t i = at; i < text.size(); ++i) {
    const char c = text[i];
    if (ident_start(c)) {
      const std::size_t end = ident_end(text, i);
      if (text.substr(i, end - i) == "constexpr") d.constexpr_ = true;
      i = end - 1;
      continue;
    }
    if (c == '<') ++angles;
    if (c == '>' && angles > 0) --angles;
    if (angles > 0) continue;
    if (c == '*' || c == '&') {
      d.indirect = true;
      return d;
    }
    if (c == ';' || c == '[' || c == '=' || c == ',' || c == ')' || c == '(' || c == '{') return d;
  }
  return d;
}

// Whether the declaration the word at `at` starts in says `constexpr` before the word
// (`static constexpr constant float k = 1;`).
bool constexpr_before(std::string_view text, std::size_t at) {
  std::size_t i = at;
  while (i > 0) {
    while (i > 0 && space(text[i - 1])) --i;
    if (i == 0 || !ident_char(text[i - 1])) return false;
    const std::size_t end = i;
    while (i > 0 && ident_char(text[i - 1])) --i;
    if (text.substr(i, end - i) == "constexpr") return true;
  }
  return false;
}

}  // namespace

std::string rewrite_address_spaces(std::string_view text, TextScope scope) {
  std::string out;
  std::size_t copied = 0;  // text before this is in `out`
  int depth = scope == TextScope::Program ? 0 : 1;
  std::size_t i = 0;
  while (i < text.size()) {
    if (const std::size_t inert = skip_inert(text, i); inert != i) {
      i = inert;
      continue;
    }
    const char c = text[i];
    if (c == '{') ++depth;
    if (c == '}') --depth;
    if (!ident_start(c) || (i > 0 && ident_char(text[i - 1]))) {
      ++i;
      continue;
    }
    const std::size_t end = ident_end(text, i);
    const Word word = word_of(text.substr(i, end - i));
    std::size_t next = end;
    while (next < text.size() && space(text[next])) ++next;
    if (word == Word::None || next == text.size() || !ident_start(text[next])) {
      i = end;
      continue;
    }
    const Declared declared = declared_after(text, next);
    std::string_view replacement;  // empty: the word goes
    if (!declared.indirect && word == Word::Threadgroup) replacement = "__shared__";
    if (!declared.indirect && word == Word::Constant && !declared.constexpr_ &&
        !constexpr_before(text, i)) {
      replacement = depth == 0 ? "__constant__" : "const";
    }
    out.append(text.substr(copied, i - copied));
    if (!replacement.empty()) {
      out.append(replacement);
      out += ' ';
    }
    i = next;
    copied = next;
  }
  if (copied == 0) return std::string(text);
  out.append(text.substr(copied));
  return out;
}

}  // namespace kreg::custom
