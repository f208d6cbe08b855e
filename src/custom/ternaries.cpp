#include "custom/rewrites.hpp"

#include "lex/text.hpp"

#include <algorithm>
#include <cstddef>

namespace kreg::custom {
namespace {

constexpr std::size_t kNone = lex::Tokens::npos;

constexpr std::string_view kWrapOpen = "::kreg::detail::ternary_operand<decltype((";
constexpr std::string_view kWrapMiddle = "))>((";
constexpr std::string_view kWrapClose = "))";

bool inert(const lex::Token& t) noexcept {
  return t.kind == lex::Kind::Comment || t.kind == lex::Kind::String || t.kind == lex::Kind::Char;
}

// Where the operand starting at token `from` ends, looking no further than token `last`. The
// second operand (`third` false) ends at its `:`; kNone when there is none, as in text that is
// not a well-formed conditional. The third is an assignment-expression: it runs to the first
// `,`, `;`, closing bracket or unmatched `:` at its own depth, or to `last`.
std::size_t operand_end(const lex::Tokens& t, std::size_t from, std::size_t last, bool third) {
  int depth = 0;
  int nested = 0;  // conditionals begun inside the operand, whose `:` is still to come
  for (std::size_t j = from; j < last; ++j) {
    if (inert(t[j]) || t[j].kind != lex::Kind::Punct) continue;
    const std::string_view p = t.raw(j);
    if (p == "(" || p == "[" || p == "{") ++depth;
    if ((p == ")" || p == "]" || p == "}") && depth-- == 0) return third ? j : kNone;
    if (depth != 0) continue;
    if (p == ";") return third ? j : kNone;
    if (p == "," && third) return j;
    if (p == "?") ++nested;
    if (p == ":" && nested-- == 0) return j;
  }
  return third ? last : kNone;
}

// a + b, held at the cap: nested conditionals can ask for more bytes than a size_t holds.
std::size_t capped_sum(std::size_t a, std::size_t b) noexcept {
  return a >= kTernaryGrowthCap - std::min(b, kTernaryGrowthCap) ? kTernaryGrowthCap : a + b;
}

// The conditionals among tokens [first, last), whose text ends at offset `end`; those inside
// an operand are `level` + 1 deep. Returns how many bytes their edits add.
std::size_t wrap(const lex::Tokens& t, std::size_t first, std::size_t last, std::size_t end,
                 int level, lex::Edits& edits) {
  constexpr std::size_t kWrapBytes = kWrapOpen.size() + kWrapMiddle.size() + kWrapClose.size();
  std::size_t added = 0;
  for (std::size_t i = first; i < last;) {
    // A preprocessor line is not an expression.
    const std::size_t colon =
        t[i].directive || inert(t[i]) || !t.is(i, "?") ? kNone : operand_end(t, i + 1, last, false);
    if (colon == kNone) {
      ++i;
      continue;
    }
    const std::size_t stop = operand_end(t, colon + 1, last, true);
    const std::size_t second_begin = t[i].end;
    const std::size_t second_end = t[colon].begin;
    const std::size_t third_begin = t[colon].end;
    const std::size_t third_end = stop < last ? t[stop].begin : end;
    // Each operand is rendered twice, once in place and once in the other's decltype, with
    // the conditionals inside it wrapped.
    const std::size_t second_added = wrap(t, i + 1, colon, second_end, level + 1, edits);
    const std::size_t third_added = wrap(t, colon + 1, stop, third_end, level + 1, edits);
    const std::size_t second = capped_sum(second_end - second_begin, second_added);
    const std::size_t third = capped_sum(third_end - third_begin, third_added);
    added = capped_sum(
        added, capped_sum(capped_sum(second_added, third_added), capped_sum(second, third)));
    // The wrappers, the space before the first and the colon written as " : ".
    added = capped_sum(added, 2 * kWrapBytes + 3);
    // `c ? a : b` becomes `c ? W(a, b) : W(b, a)`, W(x, y) the operand x as its common type
    // with y: each operand's text also goes, on one line, into the other's decltype.
    using Side = lex::Edits::Side;
    edits.insert(second_begin,
                 {lex::Edits::text(" " + std::string(kWrapOpen)),
                  lex::Edits::copy(third_begin, third_end, true),
                  lex::Edits::text(std::string(kWrapMiddle))},
                 Side::Open, level);
    edits.insert(second_end, std::string(kWrapClose), Side::Close, level);
    edits.replace(t[colon].begin, t[colon].end, " : ");
    edits.insert(
        third_begin,
        {lex::Edits::text(std::string(kWrapOpen)), lex::Edits::copy(second_begin, second_end, true),
         lex::Edits::text(std::string(kWrapMiddle))},
        Side::Open, level);
    edits.insert(third_end, std::string(kWrapClose), Side::Close, level);
    i = stop;
  }
  return added;
}

}  // namespace

std::size_t rewrite_ternaries(const lex::Text& text, lex::Edits& edits) {
  const lex::Tokens& t = text.tokens();
  return wrap(t, 0, t.size(), t.text().size(), 0, edits);
}

}  // namespace kreg::custom
