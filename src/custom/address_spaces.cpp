#include "custom/rewrites.hpp"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "lex/text.hpp"

namespace kreg::custom {
namespace {

// In the order of word_of's list.
enum class Word : unsigned char { None, Device, Constant, Thread, Threadgroup };

Word word_of(const lex::Tokens& t, std::size_t i) noexcept {
  constexpr std::string_view kWords[] = {"device", "constant", "thread", "threadgroup"};
  const auto* w = t.is_identifier(i) ? std::find(std::begin(kWords), std::end(kWords), t.raw(i))
                                     : std::end(kWords);
  return w == std::end(kWords) ? Word::None : static_cast<Word>(1 + (w - std::begin(kWords)));
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

// The declaration `threadgroup T a[N], b[M];` starting at word `i`, as references to arrays
// carved from dynamic shared memory (custom_threadgroup.cuh), one statement per declarator,
// keeping its line breaks; empty unless every declarator is an array.
std::string carved(const lex::Tokens& t, std::size_t i, std::size_t& end, std::size_t& arrays) {
  // The declarators, split at top-level commas, up to the `;`.
  std::vector<std::pair<std::size_t, std::size_t>> declarators;  // token ranges
  std::size_t from = i + 1;
  int depth = 0;
  for (std::size_t j = i + 1; j < t.size(); ++j) {
    if (t[j].kind == lex::Kind::Comment) continue;
    const std::string_view p = t[j].kind == lex::Kind::Punct ? t.raw(j) : std::string_view();
    if (p == "(" || p == "[" || p == "{" || p == "<") ++depth;
    if (p == ")" || p == "]" || p == "}" || p == ">") --depth;
    if (depth == 0 && (p == "," || p == ";")) {
      declarators.emplace_back(from, j);
      from = j + 1;
    }
    if (depth == 0 && p == ";") {
      end = j;
      break;
    }
  }
  if (declarators.empty() || !t.is(end, ";")) return {};
  // The type: the first declarator's tokens before its name, the identifier before its `[`.
  std::string type;
  std::string out;
  for (std::size_t d = 0; d < declarators.size(); ++d) {
    auto [first, last] = declarators[d];
    std::size_t bracket = first;
    while (bracket < last && !t.is(bracket, "[")) ++bracket;
    if (bracket == last || bracket == first || !t.is_identifier(bracket - 1)) return {};
    const std::size_t name = bracket - 1;
    if (d == 0) {
      if (name == first) return {};
      type = std::string(t.text().substr(t[first].begin, t[name - 1].end - t[first].begin));
    }
    const std::string dims(t.text().substr(t[bracket].begin, t[last - 1].end - t[bracket].begin));
    std::string flat = type + dims;  // the template argument on one line
    std::replace(flat.begin(), flat.end(), '\n', ' ');
    out.append(type).append(" (&").append(t.raw(name)).append(")").append(dims);
    out.append(" = *::kreg::detail::carve<").append(flat).append(">(kreg_tg_end);");
    if (d + 1 < declarators.size()) out += ' ';
  }
  // As many line breaks as the declaration had.
  const std::string_view original = t.text().substr(t[i].begin, t[end].end - t[i].begin);
  const auto breaks = [](std::string_view s) { return std::count(s.begin(), s.end(), '\n'); };
  out.append(static_cast<std::size_t>(std::max<std::ptrdiff_t>(0, breaks(original) - breaks(out))),
             '\n');
  arrays += declarators.size();
  return out;
}

}  // namespace

std::size_t rewrite_address_spaces(const lex::Text& text, TextScope scope, lex::Edits& edits,
                                   bool dynamic_arrays) {
  const lex::Tokens& t = text.tokens();
  const int outer = scope == TextScope::Program ? 0 : 1;
  std::size_t arrays = 0;
  for (std::size_t i = 0; i + 1 < t.size(); ++i) {
    const Word word = word_of(t, i);
    // A word counts only where it qualifies something: an identifier follows it.
    if (word == Word::None || !t.is_identifier(i + 1) || text.in_include(i)) continue;
    const Declared declared = declared_after(t, i + 1);
    if (dynamic_arrays && word == Word::Threadgroup && !declared.indirect &&
        scope == TextScope::Function) {
      std::size_t end = i;
      const std::string statements = carved(t, i, end, arrays);
      if (!statements.empty()) {
        edits.replace(t[i].begin, t[end].end, statements);
        i = end;
        continue;
      }
    }
    std::string replacement;  // empty: the word goes
    if (!declared.indirect && word == Word::Threadgroup) replacement = "__shared__ ";
    if (!declared.indirect && word == Word::Constant && !declared.constexpr_ &&
        !constexpr_before(t, i)) {
      replacement = t[i].depth + outer == 0 ? "__constant__ " : "const ";
    }
    // The word and the blanks after it.
    edits.replace(t[i].begin, t[i + 1].begin, std::move(replacement));
  }
  return arrays;
}

}  // namespace kreg::custom
