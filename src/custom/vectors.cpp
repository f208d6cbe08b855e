#include "custom/rewrites.hpp"

#include "lex/text.hpp"

#include <algorithm>
#include <array>

namespace kreg::custom {
namespace {

// Metal's element names: each takes 2, 3 or 4 as a vector type (`float4`, `ushort2`).
constexpr std::array<std::string_view, 12> kElements = {"float", "half",  "bfloat", "int",
                                                        "uint",  "short", "ushort", "char",
                                                        "uchar", "bool",  "long",   "ulong"};

constexpr std::string_view kPacked = "packed_";

// A Metal vector type's name: `float4`, `ushort2`, `packed_float3`.
bool names_vector(std::string_view word) noexcept {
  if (word.starts_with(kPacked)) word.remove_prefix(kPacked.size());
  if (word.size() < 4) return false;
  const char last = word.back();
  if (last < '2' || last > '4') return false;
  const std::string_view element = word.substr(0, word.size() - 1);
  return std::find(kElements.begin(), kElements.end(), element) != kElements.end();
}

// `uint3` alone does not count: the thread-position attributes are CUDA's uint3 then, whose
// x, y and z are all such a body reads, and the kernel compiles as it did.
bool is_vector_type(std::string_view word) noexcept {
  return word != "uint3" && names_vector(word);
}

// The component a swizzle letter names, or -1: `xyzw` and `rgba`, one set per swizzle.
int component(char letter, std::string_view set) noexcept {
  const std::size_t at = set.find(letter);
  return at == std::string_view::npos ? -1 : static_cast<int>(at);
}

// The letter set a swizzle word is written in, or empty.
std::string_view set_of(std::string_view word) noexcept {
  for (std::string_view set : {std::string_view("xyzw"), std::string_view("rgba")}) {
    if (!word.empty() &&
        std::all_of(word.begin(), word.end(), [&](char c) { return component(c, set) >= 0; })) {
      return set;
    }
  }
  return {};
}

bool is_swizzle(std::string_view word) noexcept {
  return word.size() >= 2 && word.size() <= 4 && !set_of(word).empty();
}

bool is_access(const lex::Tokens& t, std::size_t i) noexcept {
  return t[i].kind == lex::Kind::Punct && (t.is(i, ".") || t.is(i, "->"));
}

// Token `i` is `.`, directly followed by an identifier: that identifier's index, else npos.
std::size_t member_after_dot(const lex::Tokens& t, std::size_t i) noexcept {
  if (i + 1 >= t.size() || !t.is(i, ".") || !t.touching(i, i + 1) || !t.is_identifier(i + 1)) {
    return lex::Tokens::npos;
  }
  return i + 1;
}

}  // namespace

Composed compose_swizzles(const lex::Text& text, const lex::Text& body, const lex::Text& header,
                          lex::Edits& edits) {
  const lex::Tokens& t = text.tokens();
  Composed composed;
  for (std::size_t i = 1; i + 1 < t.size(); ++i) {
    // A member access, `.` or `->`, right after a name, a call or a subscript, and right
    // before a swizzle that a second member access follows.
    if (!is_access(t, i) || text.in_include(i) || !t.touching(i - 1, i) ||
        !(t[i - 1].kind == lex::Kind::Identifier || t.is(i - 1, ")") || t.is(i - 1, "]")) ||
        !t.touching(i, i + 1) || !t.is_identifier(i + 1)) {
      continue;
    }
    const std::size_t first = i + 1;
    std::string word(t.raw(first));
    if (!is_swizzle(word) || !t.touching(first, first + 1) ||
        member_after_dot(t, first + 1) == lex::Tokens::npos) {
      continue;
    }
    // Scanning the whole text for the word comes last: only a chain of two needs it.
    if (body.stands_alone(word) || header.stands_alone(word)) continue;
    // `.xyz.yx` picks components of the picked components: `.yx`; `.zw.x` is `.z`.
    std::size_t last = first;
    for (std::size_t next = member_after_dot(t, last + 1);
         next != lex::Tokens::npos && t.touching(last, last + 1);
         next = last + 1 < t.size() ? member_after_dot(t, last + 1) : lex::Tokens::npos) {
      const std::string_view letters = t.raw(next);
      const std::string_view next_set = set_of(letters);
      if (next_set.empty() || letters.size() > 4) break;
      std::string picked;
      for (char c : letters) {
        const int k = component(c, next_set);
        if (k >= static_cast<int>(word.size())) break;
        picked += word[static_cast<std::size_t>(k)];
      }
      if (picked.size() != letters.size()) break;  // past the swizzle: the compiler says so
      word = std::move(picked);
      last = next;
    }
    if (last != first) {
      edits.replace(t[first].begin, t[last].end, word);
      composed.chains.push_back({first, last, word});
    }
    i = last;
  }
  return composed;
}

VectorUse vector_use(const lex::Text& body, const Composed& body_chains, const lex::Text& header,
                     const Composed& header_chains) {
  VectorUse use;
  const auto scan = [&use](const lex::Text& text, const Composed& composed) {
    const lex::Tokens& t = text.tokens();
    std::size_t chain = 0;
    for (std::size_t i = 0; i < t.size(); ++i) {
      if (!t.is_identifier(i)) continue;
      std::string_view word = t.raw(i);
      const bool member = i > 0 && is_access(t, i - 1) && t.touching(i - 1, i);
      // A composed chain stands for its one swizzle.
      while (chain < composed.chains.size() && composed.chains[chain].last < i) ++chain;
      if (chain < composed.chains.size() && composed.chains[chain].first == i) {
        word = composed.chains[chain].word;
        i = composed.chains[chain].last;
      }
      if (member && is_swizzle(word)) {
        use.any = true;
        use.swizzles.emplace_back(word);
      } else if (is_vector_type(word) ||
                 (word == "vec" && i + 1 < t.size() && t.raw(i + 1).starts_with("<"))) {
        use.any = true;
      }
    }
  };
  scan(body, body_chains);
  scan(header, header_chains);
  std::sort(use.swizzles.begin(), use.swizzles.end());
  use.swizzles.erase(std::unique(use.swizzles.begin(), use.swizzles.end()), use.swizzles.end());
  return use;
}

void unqualify_vectors(const lex::Text& text, lex::Edits& edits) {
  const lex::Tokens& t = text.tokens();
  for (std::size_t i = 0; i + 2 < t.size(); ++i) {
    if (!t.is(i, "metal") || text.in_include(i) || !t.is(i + 1, "::") || !t.touching(i, i + 1) ||
        !t.touching(i + 1, i + 2) || !t.is_identifier(i + 2) || !names_vector(t.raw(i + 2))) {
      continue;
    }
    // `::metal::` is the global one, and loses its leading `::` too, or it would name
    // CUDA's float4; `my::metal::` is someone else's.
    const bool global = i > 0 && t.is(i - 1, "::") && t.touching(i - 1, i);
    const bool nested =
        global && i > 1 && t.touching(i - 2, i - 1) &&
        (t[i - 2].kind == lex::Kind::Identifier || t[i - 2].kind == lex::Kind::Number);
    if (nested) continue;
    edits.erase(global ? t[i - 1].begin : t[i].begin, t[i + 1].end);
  }
}

std::string hoist_includes(const lex::Text& header, lex::Edits& edits) {
  const lex::Tokens& t = header.tokens();
  const std::string_view text = t.text();
  std::string includes;
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (t[i].kind != lex::Kind::Hash || !t[i].first || !header.in_include(i)) continue;
    const std::size_t newline = text.rfind('\n', t[i].begin);
    const std::size_t begin = newline == std::string_view::npos ? 0 : newline + 1;
    const std::size_t end = std::min(text.find('\n', t[i].begin), text.size());
    includes.append(text.substr(begin, end - begin));
    includes += '\n';
    edits.erase(begin, end);
  }
  return includes;
}

std::string swizzle_macro(const std::vector<std::string>& swizzles) {
  std::string out = "#define KREG_METAL_SWIZZLES(S)";
  for (const std::string& name : swizzles) {
    const std::string_view set = component(name[0], "xyzw") >= 0 ? "xyzw" : "rgba";
    out.append(" S(").append(name);
    for (char c : name) out.append(", ").append(1, static_cast<char>('0' + component(c, set)));
    out += ')';
  }
  return out + '\n';
}

}  // namespace kreg::custom
