#include "custom/ternaries.hpp"

#include "custom/text_scan.hpp"

namespace kreg::custom {
namespace {

constexpr std::size_t kNone = std::string_view::npos;

bool opens(char c) noexcept {
  return c == '(' || c == '[' || c == '{';
}
bool closes(char c) noexcept {
  return c == ')' || c == ']' || c == '}';
}

// Whether `i` starts a preprocessor line: only blanks before it on its line.
bool directive_at(std::string_view text, std::size_t i) {
  if (text[i] != '#') return false;
  while (i > 0 && (text[i - 1] == ' ' || text[i - 1] == '\t')) --i;
  return i == 0 || text[i - 1] == '\n';
}

// The end of the preprocessor line starting at `i`, with its continuation lines.
std::size_t directive_end(std::string_view text, std::size_t i) {
  while (true) {
    const std::size_t end = text.find('\n', i);
    if (end == kNone) return text.size();
    if (end == 0 || text[end - 1] != '\\') return end;
    i = end + 1;
  }
}

// Where the operand starting at `from` ends. The second operand (`third` false) ends at its
// `:`; kNone when there is none, as in text that is not a well-formed conditional. The third is
// an assignment-expression: it runs to the first `,`, `;`, closing bracket or unmatched `:` at
// its own depth, or to the end of the text.
std::size_t operand_end(std::string_view text, std::size_t from, bool third) {
  const std::size_t unended = third ? text.size() : kNone;
  int depth = 0;
  int nested = 0;  // conditionals begun inside the operand, whose `:` is still to come
  for (std::size_t i = from; i < text.size(); ++i) {
    if (const std::size_t inert = skip_inert(text, i); inert != i) {
      i = inert - 1;
      continue;
    }
    const char c = text[i];
    if (opens(c)) ++depth;
    if (closes(c) && depth-- == 0) return third ? i : kNone;
    if (depth != 0) continue;
    if (c == ';') return third ? i : kNone;
    if (c == ',' && third) return i;
    if (c == '?') ++nested;
    if (c != ':') continue;
    if (i + 1 < text.size() && text[i + 1] == ':') {
      ++i;  // `::`
      continue;
    }
    if (nested-- == 0) return i;
  }
  return unended;
}

// `text` on one line, without comments: what goes inside a `decltype`.
std::string flat(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t inert = skip_inert(text, i);
    if (inert != i && text[i] == '/') {
      out += ' ';
      i = inert;
      continue;
    }
    const std::size_t end = inert != i ? inert : i + 1;
    for (; i < end; ++i) out += text[i] == '\n' || text[i] == '\r' ? ' ' : text[i];
  }
  return out;
}

void append_operand(std::string& out, const std::string& operand, const std::string& other) {
  out += "::kreg::detail::ternary_operand<decltype((";
  out += flat(other);
  out += "))>((";
  out += operand;
  out += "))";
}

}  // namespace

std::string rewrite_ternaries(std::string_view text) {
  std::string out;
  std::size_t copied = 0;  // text before this is in `out`
  std::size_t i = 0;
  while (i < text.size()) {
    if (const std::size_t inert = skip_inert(text, i); inert != i) {
      i = inert;
      continue;
    }
    if (directive_at(text, i)) {
      i = directive_end(text, i);
      continue;
    }
    if (text[i] != '?') {
      ++i;
      continue;
    }
    const std::size_t colon = operand_end(text, i + 1, false);
    if (colon == kNone) {
      ++i;
      continue;
    }
    const std::size_t end = operand_end(text, colon + 1, true);
    const std::string second = rewrite_ternaries(text.substr(i + 1, colon - i - 1));
    const std::string third = rewrite_ternaries(text.substr(colon + 1, end - colon - 1));
    out.append(text.substr(copied, i - copied));
    out += "? ";
    append_operand(out, second, third);
    out += " : ";
    append_operand(out, third, second);
    i = end;
    copied = end;
  }
  if (copied == 0) return std::string(text);
  out.append(text.substr(copied));
  return out;
}

}  // namespace kreg::custom
