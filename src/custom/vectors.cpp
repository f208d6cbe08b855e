#include "custom/vectors.hpp"

#include "custom/text_scan.hpp"

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

void scan(std::string_view text, VectorUse& use) {
  std::size_t at = 0;
  while (at < text.size()) {
    if (!ident_char(text[at]) || (text[at] >= '0' && text[at] <= '9')) {
      ++at;
      continue;
    }
    const std::size_t end = ident_end(text, at);
    const std::string_view word = text.substr(at, end - at);
    const bool member =
        (at >= 1 && text[at - 1] == '.') || (at >= 2 && text[at - 2] == '-' && text[at - 1] == '>');
    std::size_t next = end;
    while (next < text.size() && (text[next] == ' ' || text[next] == '\t')) ++next;
    if (member && is_swizzle(word)) {
      use.any = true;
      use.swizzles.emplace_back(word);
    } else if (is_vector_type(word) || (word == "vec" && next < text.size() && text[next] == '<')) {
      use.any = true;
    }
    at = end;
  }
}

}  // namespace

VectorUse vector_use(std::string_view body, std::string_view header) {
  VectorUse use;
  scan(body, use);
  scan(header, use);
  std::sort(use.swizzles.begin(), use.swizzles.end());
  use.swizzles.erase(std::unique(use.swizzles.begin(), use.swizzles.end()), use.swizzles.end());
  return use;
}

namespace {

// Whether `word` stands anywhere in `text` as an identifier of its own, not after `.` or
// `->`: a struct member declared `float2 xy;`, say.
bool stands_alone(std::string_view text, std::string_view word) noexcept {
  for (std::size_t at = text.find(word); at != std::string_view::npos;
       at = text.find(word, at + 1)) {
    const std::size_t end = at + word.size();
    if ((at > 0 && ident_char(text[at - 1])) || (end < text.size() && ident_char(text[end]))) {
      continue;
    }
    std::size_t before = at;
    while (before > 0 && space(text[before - 1])) --before;
    const bool member = (before >= 1 && text[before - 1] == '.') ||
                        (before >= 2 && text.substr(before - 2, 2) == "->");
    if (!member) return true;
  }
  return false;
}

// At `at`, a member access `.word` (no blanks): the word's end, or `at` if there is none.
std::size_t member_word(std::string_view text, std::size_t at) noexcept {
  return at < text.size() && text[at] == '.' ? ident_end(text, at + 1) : at;
}

}  // namespace

std::string compose_swizzles(std::string_view text, std::string_view body,
                             std::string_view header) {
  std::string out;
  std::size_t i = 0;
  bool changed = false;
  while (i < text.size()) {
    if (copy_inert(text, i, out)) continue;
    // A member access, `.` or `->`, after a name, a call or a subscript.
    const std::size_t access = text[i] == '.' ? 1 : text.substr(i).starts_with("->") ? 2 : 0;
    const bool after_word =
        i > 0 && (ident_char(text[i - 1]) || text[i - 1] == ')' || text[i - 1] == ']');
    const std::size_t first_end = access > 0 ? ident_end(text, i + access) : i;
    std::string word(text.substr(i + access, first_end - i - access));
    // Scanning the whole text for the word comes last: only a chain of two needs it.
    if (access == 0 || !after_word || !is_swizzle(word) ||
        member_word(text, first_end) == first_end || stands_alone(body, word) ||
        stands_alone(header, word)) {
      out += text[i++];
      continue;
    }
    // `.xyz.yx` picks components of the picked components: `.yx`; `.zw.x` is `.z`.
    std::size_t end = first_end;
    for (std::size_t next_end = member_word(text, end); next_end > end + 1;
         next_end = member_word(text, end)) {
      const std::string_view next = text.substr(end + 1, next_end - end - 1);
      const std::string_view next_set = set_of(next);
      if (next_set.empty() || next.size() > 4) break;
      std::string picked;
      for (char c : next) {
        const int k = component(c, next_set);
        if (k >= static_cast<int>(word.size())) break;
        picked += word[static_cast<std::size_t>(k)];
      }
      if (picked.size() != next.size()) break;  // past the swizzle: the compiler says so
      word = picked;
      end = next_end;
      changed = true;
    }
    out.append(text.substr(i, access));
    out += word;
    i = end;
  }
  return changed ? out : std::string(text);
}

std::string unqualify_vectors(std::string_view text) {
  constexpr std::string_view kScope = "metal::";
  std::string out;
  out.reserve(text.size());
  std::size_t i = 0;
  while (i < text.size()) {
    if (copy_inert(text, i, out)) continue;
    const bool starts_word = i == 0 || !ident_char(text[i - 1]);
    // `::metal::` is the global one; `my::metal::` is someone else's.
    const bool global = i >= 2 && text.substr(i - 2, 2) == "::";
    const bool nested = global && i >= 3 && ident_char(text[i - 3]);
    if (starts_word && !nested && text.substr(i).starts_with(kScope)) {
      const std::size_t end = ident_end(text, i + kScope.size());
      const std::string_view word = text.substr(i + kScope.size(), end - i - kScope.size());
      if (names_vector(word)) {
        // `::metal::float4` loses its leading `::` too, or it would name CUDA's float4.
        if (global) out.resize(out.size() - 2);
        i += kScope.size();
        continue;
      }
    }
    out += text[i++];
  }
  return out;
}

std::string swizzle_macro(const std::vector<std::string>& swizzles) {
  std::string out = "#define KREG_METAL_SWIZZLES(S)";
  for (const std::string& name : swizzles) {
    const std::string_view set = component(name[0], "xyzw") >= 0 ? "xyzw" : "rgba";
    out += " S(";
    out += name;
    for (char c : name) {
      out += ", ";
      out += static_cast<char>('0' + component(c, set));
    }
    out += ')';
  }
  out += '\n';
  return out;
}

HoistedHeader hoist_includes(std::string_view header) {
  HoistedHeader out;
  std::size_t start = 0;
  while (start < header.size()) {
    std::size_t end = header.find('\n', start);
    if (end == std::string_view::npos) end = header.size();
    const std::string_view line = header.substr(start, end - start);
    const std::size_t first = line.find_first_not_of(" \t");
    std::string_view directive =
        first == std::string_view::npos ? std::string_view() : line.substr(first);
    if (directive.starts_with("#")) {
      directive.remove_prefix(1);
      directive.remove_prefix(std::min(directive.find_first_not_of(" \t"), directive.size()));
    }
    if (line.substr(first == std::string_view::npos ? 0 : first).starts_with("#") &&
        directive.starts_with("include")) {
      out.includes += line;
      out.includes += '\n';
    } else {
      out.rest += line;
    }
    if (end < header.size()) out.rest += '\n';
    start = end + 1;
  }
  return out;
}

}  // namespace kreg::custom
