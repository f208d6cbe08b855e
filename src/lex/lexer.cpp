#include "lex/lexer.hpp"

#include <algorithm>
#include <array>

namespace kreg::lex {
namespace {

// Longest first, so that the first match is the longest. `<:` and the other digraphs are
// left out: `std::vector<::x>` means `<` then `::`, and nobody spells `[` as `<:`.
constexpr std::array<std::string_view, 27> kPunctuators = {
    "<=>", "<<=", ">>=", "->*", "...", "::", "->", "++", "--", "<<", ">>", "<=", ">=", "==",
    "!=",  "&&",  "||",  "+=",  "-=",  "*=", "/=", "%=", "&=", "|=", "^=", "##", ".*"};

constexpr std::string_view kSingles = "{}[]()<>;:,.?+-*/%^&|~!=#";

bool string_prefix(std::string_view word) noexcept {
  return word == "u8" || word == "u" || word == "U" || word == "L" || word == "R" ||
         word == "u8R" || word == "uR" || word == "UR" || word == "LR";
}
bool char_prefix(std::string_view word) noexcept {
  return word == "u8" || word == "u" || word == "U" || word == "L";
}

// The length of the line splice at `i` (a backslash, a carriage return or not, a newline).
std::size_t splice_at(std::string_view t, std::size_t i) noexcept {
  if (i >= t.size() || t[i] != '\\') return 0;
  std::size_t j = i + 1;
  if (j < t.size() && t[j] == '\r') ++j;
  return j < t.size() && t[j] == '\n' ? j + 1 - i : 0;
}

bool is_digit(char c) noexcept {
  return c >= '0' && c <= '9';
}

std::size_t skip_splices(std::string_view t, std::size_t i) noexcept {
  while (const std::size_t n = splice_at(t, i)) i += n;
  return i;
}

// Reads one token's characters, moving over line splices as the compiler's second phase
// joins them. end() is past the last character read, so that a splice after the token is
// not part of it.
class Cursor {
 public:
  Cursor(std::string_view text, std::size_t at) : t_(text), at_(at), end_(at) {}
  std::size_t end() const noexcept { return end_; }
  bool done() const noexcept { return at_ >= t_.size(); }
  // The character at the cursor, '\0' at the end.
  char peek() const noexcept { return at_ < t_.size() ? t_[at_] : '\0'; }
  // The character after it, splices skipped.
  char peek_next() const noexcept {
    const std::size_t next = skip_splices(t_, at_ + 1);
    return next < t_.size() ? t_[next] : '\0';
  }
  void advance() noexcept {
    end_ = at_ + 1;
    at_ = skip_splices(t_, at_ + 1);
  }
  // For a cursor placed past a token read another way: the token ends where it stands.
  void advance_to_end() noexcept { end_ = at_; }

 private:
  std::string_view t_;
  std::size_t at_;
  std::size_t end_;
};

// The end of a quoted literal whose opening quote is at the cursor: past the closing quote
// and any suffix, or at the line break that leaves it unterminated.
void read_quoted(Cursor& c) {
  const char quote = c.peek();
  c.advance();
  while (!c.done() && c.peek() != quote && c.peek() != '\n') {
    if (c.peek() == '\\') c.advance();
    if (!c.done() && c.peek() != '\n') c.advance();
  }
  if (c.peek() != quote) return;
  c.advance();
  while (ident_char(c.peek())) c.advance();  // a user-defined literal's suffix
}

// A raw string whose `"` is at `quote`: the end past its closing delimiter and suffix, or
// npos when the delimiter is not one (the literal is then read as an ordinary string).
std::size_t raw_string_end(std::string_view t, std::size_t quote) {
  std::size_t open = quote + 1;
  while (open < t.size() && open - quote - 1 <= 16 && t[open] != '(') {
    const char c = t[open];
    if (c == ' ' || c == ')' || c == '\\' || c == '\t' || c == '\n' || c == '\v' || c == '\f' ||
        c == '"') {
      return Tokens::npos;
    }
    ++open;
  }
  if (open >= t.size() || t[open] != '(') return Tokens::npos;
  const std::string close = ")" + std::string(t.substr(quote + 1, open - quote - 1)) + "\"";
  const std::size_t at = t.find(close, open + 1);
  if (at == std::string_view::npos) return t.size();
  std::size_t end = at + close.size();
  while (end < t.size() && ident_char(t[end])) ++end;
  return end;
}

// A pp-number from the cursor: digits, letters, '_', '.', digit separators, and the signs
// of exponents (e+, E-, p+, P-).
void read_number(Cursor& c) {
  while (!c.done()) {
    const char ch = c.peek();
    if ((ch == 'e' || ch == 'E' || ch == 'p' || ch == 'P') &&
        (c.peek_next() == '+' || c.peek_next() == '-')) {
      c.advance();
      c.advance();
    } else if (ident_char(ch) || ch == '.' || (ch == '\'' && ident_char(c.peek_next()))) {
      c.advance();  // a digit separator (1'000) too
    } else {
      return;
    }
  }
}

struct Conditional {
  int depth_at_if = 0;
  int depth_after_first = 0;
  bool first_ended = false;
};

}  // namespace

bool is_identifier(std::string_view name) noexcept {
  return !name.empty() && ident_start(name[0]) && std::all_of(name.begin(), name.end(), ident_char);
}

bool is_keyword(std::string_view name) noexcept {
  // clang-format off
  static constexpr std::string_view kKeywords[] = {
    "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break",
    "case", "catch", "char", "char8_t", "char16_t", "char32_t", "class", "compl", "concept",
    "const", "consteval", "constexpr", "constinit", "const_cast", "continue", "co_await",
    "co_return", "co_yield", "decltype", "default", "delete", "do", "double", "dynamic_cast",
    "else", "enum", "explicit", "export", "extern", "false", "float", "for", "friend", "goto",
    "if", "inline", "int", "long", "mutable", "namespace", "new", "noexcept", "not", "not_eq",
    "nullptr", "operator", "or", "or_eq", "private", "protected", "public", "register",
    "reinterpret_cast", "requires", "return", "short", "signed", "sizeof", "static",
    "static_assert", "static_cast", "struct", "switch", "template", "this", "thread_local",
    "throw", "true", "try", "typedef", "typeid", "typename", "union", "unsigned", "using",
    "virtual", "void", "volatile", "wchar_t", "while", "xor", "xor_eq"};
  // clang-format on
  return std::find(std::begin(kKeywords), std::end(kKeywords), name) != std::end(kKeywords);
}

Tokens::Tokens(std::string_view text) : text_(text) {
  const std::string_view t = text;
  std::uint32_t line = 1;
  bool line_start = true;
  bool directive = false;
  std::size_t hash = npos;  // the current directive's Hash, until its name is read
  int depth = 0;
  std::vector<Conditional> conditionals;
  const auto count_lines = [&](std::size_t from, std::size_t to) {
    line +=
        static_cast<std::uint32_t>(std::count(t.begin() + static_cast<std::ptrdiff_t>(from),
                                              t.begin() + static_cast<std::ptrdiff_t>(to), '\n'));
  };
  std::uint32_t last_line = 0;  // where the token before ended
  std::size_t i = 0;
  while (i < t.size()) {
    const char ch = t[i];
    if (ch == '\n') {
      ++line;
      ++i;
      line_start = true;
      directive = false;
      hash = npos;
      continue;
    }
    if (ch == ' ' || ch == '\t' || ch == '\r' || ch == '\f' || ch == '\v') {
      ++i;
      continue;
    }
    if (const std::size_t n = splice_at(t, i)) {
      ++line;
      i += n;
      continue;
    }
    Token token;
    token.begin = i;
    token.line = line;
    token.depth = depth;
    token.directive = directive;
    token.first = last_line < line;
    Cursor c(t, i);
    bool raw_string = false;  // a raw string, whose backslash-newlines are its own text
    const char next = i + 1 < t.size() ? t[i + 1] : '\0';
    if (ch == '/' && next == '/') {
      token.kind = Kind::Comment;
      // A splice continues a line comment onto the next line.
      while (!c.done() && c.peek() != '\n') c.advance();
    } else if (ch == '/' && next == '*') {
      token.kind = Kind::Comment;
      const std::size_t close = t.find("*/", i + 2);
      c = Cursor(t, close == std::string_view::npos ? t.size() : close + 2);
      c.advance_to_end();
    } else if ((ch == '#' || (ch == '%' && next == ':')) && line_start && !directive) {
      token.kind = Kind::Hash;
      token.directive = true;
      directive = true;
      hash = tokens_.size();
      c.advance();
      if (ch == '%') c.advance();
    } else if (ident_start(ch)) {
      while (ident_char(c.peek())) c.advance();
      token.kind = Kind::Identifier;
      const std::string_view word = t.substr(i, c.end() - i);
      if (c.peek() == '"' && string_prefix(word)) {
        token.kind = Kind::String;
        const std::size_t raw_end = word.back() == 'R' ? raw_string_end(t, c.end()) : npos;
        if (raw_end != npos) {
          raw_string = true;
          c = Cursor(t, raw_end);
          c.advance_to_end();
        } else {
          read_quoted(c);
        }
      } else if (c.peek() == '\'' && char_prefix(word)) {
        token.kind = Kind::Char;
        read_quoted(c);
      }
    } else if (is_digit(ch) || (ch == '.' && is_digit(c.peek_next()))) {
      token.kind = Kind::Number;
      read_number(c);
    } else if (ch == '"' || ch == '\'') {
      token.kind = ch == '"' ? Kind::String : Kind::Char;
      read_quoted(c);
    } else {
      token.kind = Kind::Other;
      c.advance();
      for (std::string_view p : kPunctuators) {
        if (t.substr(i, p.size()) == p) {
          token.kind = Kind::Punct;
          c = Cursor(t, i + p.size());
          c.advance_to_end();
          break;
        }
      }
      if (token.kind == Kind::Other && kSingles.find(ch) != std::string_view::npos) {
        token.kind = Kind::Punct;
      }
    }
    token.end = std::max(c.end(), i + 1);
    if (!raw_string) {
      const std::string_view bytes = t.substr(i, token.end - i);
      token.spliced = bytes.find("\\\n") != npos || bytes.find("\\\r\n") != npos;
    }
    count_lines(token.begin, token.end);
    last_line = line;

    if (token.kind == Kind::Identifier && hash != npos && tokens_.size() == hash + 1) {
      const std::string_view name = t.substr(token.begin, token.end - token.begin);
      if (name == "if" || name == "ifdef" || name == "ifndef") {
        conditionals.push_back({depth, depth, false});
      } else if ((name == "elif" || name == "else" || name == "elifdef" || name == "elifndef") &&
                 !conditionals.empty()) {
        Conditional& open = conditionals.back();
        if (!open.first_ended) open.depth_after_first = depth;
        open.first_ended = true;
        depth = open.depth_at_if;
      } else if (name == "endif" && !conditionals.empty()) {
        if (conditionals.back().first_ended) depth = conditionals.back().depth_after_first;
        conditionals.pop_back();
      }
    }
    if (token.kind == Kind::Punct && !token.directive) {
      const std::string_view p = t.substr(token.begin, token.end - token.begin);
      if (p == "{") ++depth;
      if (p == "}") --depth;
    }
    if (token.kind != Kind::Comment) line_start = false;
    i = token.end;
    tokens_.push_back(token);
  }
}

std::string Tokens::spelling(std::size_t i) const {
  const std::string_view raw_text = raw(i);
  if (!tokens_[i].spliced) return std::string(raw_text);
  std::string out;
  out.reserve(raw_text.size());
  for (std::size_t k = 0; k < raw_text.size();) {
    if (const std::size_t n = splice_at(raw_text, k)) {
      k += n;
      continue;
    }
    out += raw_text[k++];
  }
  return out;
}

bool Tokens::is(std::size_t i, std::string_view s) const noexcept {
  if (i >= tokens_.size()) return false;
  if (!tokens_[i].spliced) return raw(i) == s;
  try {
    return spelling(i) == s;
  } catch (...) {
    return false;
  }
}

std::size_t Tokens::next(std::size_t i) const noexcept {
  for (std::size_t j = i + 1; j < tokens_.size(); ++j) {
    if (tokens_[j].kind != Kind::Comment) return j;
  }
  return npos;
}

std::size_t Tokens::prev(std::size_t i) const noexcept {
  for (std::size_t j = i; j-- > 0;) {
    if (tokens_[j].kind != Kind::Comment) return j;
  }
  return npos;
}

std::size_t Tokens::closing(std::size_t open) const noexcept {
  if (open >= tokens_.size() || tokens_[open].kind != Kind::Punct) return npos;
  const std::string_view o = raw(open);
  const std::string_view c = o == "(" ? ")" : o == "[" ? "]" : o == "{" ? "}" : "";
  if (c.empty()) return npos;
  int depth = 0;
  for (std::size_t j = open; j < tokens_.size(); ++j) {
    if (tokens_[j].kind != Kind::Punct) continue;
    const std::string_view s = raw(j);
    if (s == o) ++depth;
    if (s == c && --depth == 0) return j;
  }
  return npos;
}

}  // namespace kreg::lex
