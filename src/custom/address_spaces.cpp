#include "custom/address_spaces.hpp"

#include "lex/text.hpp"

namespace kreg::custom {
namespace {

enum class Word : unsigned char { None, Device, Constant, Thread, Threadgroup };

Word word_of(const lex::Tokens& t, std::size_t i) noexcept {
  if (!t.is_identifier(i)) return Word::None;
  const std::string_view s = t.raw(i);
  if (s == "device") return Word::Device;
  if (s == "constant") return Word::Constant;
  if (s == "thread") return Word::Thread;
  if (s == "threadgroup") return Word::Threadgroup;
  return Word::None;
}

// What the declaration after a word declares, from the token after the word: a pointer or
// a reference (a `*` or `&` comes before the declarator ends), or an object.
struct Declared {
  bool indirect = false;
  bool constexpr_ = false;
};

Declared declared_after(const lex::Tokens& t, std::size_t from) {
  Declared d;
  int angles = 0;
  for (std::size_t i = from; i < t.size(); ++i) {
    const lex::Token& token = t[i];
    if (token.kind == lex::Kind::Identifier) {
      if (t.is(i, "constexpr")) d.constexpr_ = true;
      continue;
    }
    if (token.kind != lex::Kind::Punct) continue;
    // Character by character: `>>` closes two angles, `&&` is a reference, `==` ends it.
    for (const char c : t.raw(i)) {
      if (c == '<') ++angles;
      if (c == '>' && angles > 0) --angles;
      if (angles > 0) continue;
      if (c == '*' || c == '&') {
        d.indirect = true;
        return d;
      }
      if (c == ';' || c == '[' || c == '=' || c == ',' || c == ')' || c == '(' || c == '{') {
        return d;
      }
    }
  }
  return d;
}

// Whether the declaration the word at `i` is in says `constexpr` before it
// (`static constexpr constant float k = 1;`).
bool constexpr_before(const lex::Tokens& t, std::size_t i) {
  while (i > 0 && t.is_identifier(i - 1)) {
    if (t.is(--i, "constexpr")) return true;
  }
  return false;
}

}  // namespace

void rewrite_address_spaces(const lex::Text& text, TextScope scope, lex::Edits& edits) {
  const lex::Tokens& t = text.tokens();
  const int outer = scope == TextScope::Program ? 0 : 1;
  for (std::size_t i = 0; i + 1 < t.size(); ++i) {
    const Word word = word_of(t, i);
    // A word counts only where it qualifies something: an identifier follows it.
    if (word == Word::None || !t.is_identifier(i + 1) || text.in_include(i)) continue;
    const Declared declared = declared_after(t, i + 1);
    std::string replacement;  // empty: the word goes
    if (!declared.indirect && word == Word::Threadgroup) replacement = "__shared__ ";
    if (!declared.indirect && word == Word::Constant && !declared.constexpr_ &&
        !constexpr_before(t, i)) {
      replacement = t[i].depth + outer == 0 ? "__constant__ " : "const ";
    }
    // The word and the blanks after it.
    edits.replace(t[i].begin, t[i + 1].begin, std::move(replacement));
  }
}

}  // namespace kreg::custom
