#pragma once
// The custom layer's rewrites run on one text alone, for tests that check them as text.

#include "custom/rewrites.hpp"
#include "lex/text.hpp"

#include <string>
#include <string_view>

namespace kreg::test {

// `text` after `pass(text, edits)`.
template <class Pass>
std::string rewritten(std::string_view text, Pass&& pass) {
  const lex::Text parsed(text);
  lex::Edits edits(parsed.tokens());
  pass(parsed, edits);
  return edits.apply();
}

inline std::string address_spaces(std::string_view text, custom::TextScope scope) {
  return rewritten(text, [scope](const lex::Text& t, lex::Edits& e) {
    custom::rewrite_address_spaces(t, scope, e);
  });
}

inline std::string ternaries(std::string_view text) {
  return rewritten(text,
                   [](const lex::Text& t, lex::Edits& e) { custom::rewrite_ternaries(t, e); });
}

inline std::string unqualified(std::string_view text) {
  return rewritten(text,
                   [](const lex::Text& t, lex::Edits& e) { custom::unqualify_vectors(t, e); });
}

// The body with its swizzle chains composed, the header (which may declare members named like
// swizzles) only consulted.
inline std::string composed(std::string_view body, std::string_view header = "") {
  const lex::Text h(header);
  return rewritten(
      body, [&](const lex::Text& b, lex::Edits& e) { custom::compose_swizzles(b, b, h, e); });
}

inline custom::VectorUse vector_use(std::string_view body, std::string_view header) {
  const lex::Text b(body);
  const lex::Text h(header);
  return custom::vector_use(b, {}, h, {});
}

struct Hoisted {
  std::string includes;
  std::string rest;
};

inline Hoisted hoisted(std::string_view header) {
  const lex::Text h(header);
  lex::Edits edits(h.tokens());
  Hoisted out;
  out.includes = custom::hoist_includes(h, edits);
  out.rest = edits.apply();
  return out;
}

}  // namespace kreg::test
