#include "registry/source.hpp"

#include <kreg/error.hpp>

#include "core/embedded.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <map>
#include <optional>
#include <sstream>

namespace kreg::registry {
namespace {

[[noreturn]] void malformed(const std::string& source, const std::string& what) {
  throw Error(ErrorCode::InvalidArgument, "source '" + source + "': " + what);
}

bool is_ident_start(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
}
bool is_ident_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

bool is_identifier(std::string_view s) {
  return !s.empty() && is_ident_start(s.front()) && std::all_of(s.begin(), s.end(), is_ident_char);
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool is_hex_digit(char c) {
  return std::isxdigit(static_cast<unsigned char>(c)) != 0;
}

// A ' between two digits is a C++14 digit separator (1'000'000), not a character literal.
bool digit_separator(std::string_view s, std::size_t i) {
  return s[i] == '\'' && i > 0 && i + 1 < s.size() && is_hex_digit(s[i - 1]) &&
         is_hex_digit(s[i + 1]);
}

// Blanks out comments (keeping newlines) so that declarations inside them are not read.
// Line endings are normalized to \n and backslash-newline splices are joined first, as the
// compiler's first phases do; the text NVRTC compiles is not touched.
std::string strip_comments(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t k = 0; k < text.size(); ++k) {
    if (text[k] == '\r' && k + 1 < text.size() && text[k + 1] == '\n') continue;
    if (text[k] == '\\') {
      std::size_t next = k + 1;
      if (next < text.size() && text[next] == '\r') ++next;
      if (next < text.size() && text[next] == '\n') {
        k = next;
        continue;
      }
    }
    out += text[k];
  }
  std::size_t i = 0;
  const std::size_t n = out.size();
  while (i < n) {
    const char c = out[i];
    if ((c == '"' || c == '\'') && !digit_separator(out, i)) {
      for (++i; i < n && out[i] != c && out[i] != '\n'; ++i) {
        if (out[i] == '\\') ++i;
      }
      ++i;
    } else if (c == '/' && i + 1 < n && out[i + 1] == '/') {
      for (; i < n && out[i] != '\n'; ++i) out[i] = ' ';
    } else if (c == '/' && i + 1 < n && out[i + 1] == '*') {
      for (; i < n && !(out[i] == '*' && i + 1 < n && out[i + 1] == '/'); ++i) {
        if (out[i] != '\n') out[i] = ' ';
      }
      if (i < n) out[i++] = ' ';
      if (i < n) out[i++] = ' ';
    } else {
      ++i;
    }
  }
  return out;
}

struct Token {
  std::string_view text;
};

// Identifiers, numbers, string literals and single punctuation characters. Preprocessor
// lines are skipped; they are read separately.
std::vector<Token> tokenize(std::string_view code) {
  std::vector<Token> tokens;
  std::size_t i = 0;
  bool line_start = true;
  while (i < code.size()) {
    const char c = code[i];
    if (c == '\n') {
      line_start = true;
      ++i;
    } else if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
    } else if (c == '#' && line_start) {
      // Skip the directive, following backslash continuations.
      while (i < code.size() && !(code[i] == '\n' && code[i - 1] != '\\')) ++i;
    } else if (is_ident_char(c)) {
      std::size_t j = i;
      while (j < code.size() && is_ident_char(code[j])) ++j;
      tokens.push_back({code.substr(i, j - i)});
      i = j;
      line_start = false;
    } else if ((c == '"' || c == '\'') && !digit_separator(code, i)) {
      std::size_t j = i + 1;
      while (j < code.size() && code[j] != c && code[j] != '\n') j += code[j] == '\\' ? 2 : 1;
      j = std::min(j + 1, code.size());
      tokens.push_back({code.substr(i, j - i)});
      i = j;
      line_start = false;
    } else {
      tokens.push_back({code.substr(i, 1)});
      ++i;
      line_start = false;
    }
  }
  return tokens;
}

// Index just past the parenthesis that closes the one at `open`.
std::size_t skip_parens(const std::vector<Token>& t, std::size_t open) {
  int depth = 0;
  for (std::size_t i = open; i < t.size(); ++i) {
    if (t[i].text == "(") ++depth;
    if (t[i].text == ")" && --depth == 0) return i + 1;
  }
  return t.size();
}

// The name of the __global__ function whose declaration starts at `i`, if it is one.
std::string_view global_function_name(const std::vector<Token>& t, std::size_t i) {
  bool global = false;
  bool returns_void = false;
  for (; i < t.size(); ++i) {
    const std::string_view s = t[i].text;
    if (s == "__launch_bounds__" || s == "__cluster_dims__" || s == "__maxnreg__") {
      i = skip_parens(t, i + 1) - 1;
    } else if (s == "__global__") {
      global = true;
    } else if (s == "void") {
      returns_void = true;
    } else if (s == "(") {
      if (global && returns_void && i > 0 && is_identifier(t[i - 1].text) &&
          t[i - 1].text != "void") {
        return t[i - 1].text;
      }
      return {};
    } else if (s == ";" || s == "{" || s == "}" || s == "<") {
      return {};
    }
  }
  return {};
}

void read_entries(const std::vector<Token>& t, std::vector<Entry>& entries) {
  // Depth of braces, and the depths at which extern "C" { blocks were opened.
  int depth = 0;
  std::vector<int> c_blocks;
  for (std::size_t i = 0; i < t.size(); ++i) {
    const std::string_view s = t[i].text;
    if (s == "{") {
      ++depth;
    } else if (s == "}") {
      if (!c_blocks.empty() && c_blocks.back() == depth) c_blocks.pop_back();
      --depth;
    } else if (s == "extern" && i + 1 < t.size() && t[i + 1].text == "\"C\"") {
      if (i + 2 < t.size() && t[i + 2].text == "{") {
        c_blocks.push_back(depth + 1);
      } else if (auto name = global_function_name(t, i + 2); !name.empty()) {
        entries.push_back({std::string(name), {}});
      }
    } else if (s == "__global__" && !c_blocks.empty() && (i == 0 || t[i - 1].text != "\"C\"")) {
      if (auto name = global_function_name(t, i); !name.empty()) {
        entries.push_back({std::string(name), {}});
      }
    }
  }
}

std::string join(const std::vector<Token>& t, std::size_t begin, std::size_t end) {
  std::string out;
  for (std::size_t i = begin; i < end; ++i) {
    if (!out.empty() && is_ident_char(out.back()) && is_ident_char(t[i].text.front())) out += ' ';
    out += t[i].text;
  }
  return out;
}

// A decimal literal: C++ would read 0300 as octal 192, and host and device must agree.
bool read_index(std::string_view text, int& index) {
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), index);
  const bool octal_or_hex = text.size() > 1 && text.front() == '0';
  return error == std::errc() && end == text.data() + text.size() && index >= 0 && !octal_or_hex;
}

// Adds the namespace-scope `constexpr int NAME = LITERAL;` of a header's tokens to `out`,
// by qualified name ("kreg::contracts::rms_norm::kHasWeight").
void read_named_indices(const std::vector<Token>& t, std::map<std::string, int, std::less<>>& out) {
  std::vector<std::string> scopes;  // one per open brace: a namespace's name, or "" for others
  std::string prefix;
  auto update_prefix = [&] {
    prefix.clear();
    for (const std::string& scope : scopes) {
      if (scope.empty()) return;
      prefix += scope + "::";
    }
  };
  for (std::size_t i = 0; i < t.size(); ++i) {
    const std::string_view s = t[i].text;
    if (s == "namespace") {
      std::string name;
      std::size_t j = i + 1;
      for (; j < t.size() && t[j].text != "{" && t[j].text != ";" && t[j].text != "="; ++j) {
        name += t[j].text;
      }
      if (j < t.size() && t[j].text == "{" && !name.empty()) {
        scopes.push_back(name);
        update_prefix();
        i = j;
      }
    } else if (s == "{") {
      scopes.emplace_back();
      update_prefix();
    } else if (s == "}") {
      if (!scopes.empty()) scopes.pop_back();
      update_prefix();
    } else if (s == "constexpr" && i + 5 < t.size() && t[i + 1].text == "int" &&
               is_identifier(t[i + 2].text) && t[i + 3].text == "=" && t[i + 5].text == ";" &&
               std::none_of(scopes.begin(), scopes.end(),
                            [](const std::string& scope) { return scope.empty(); })) {
      int value = 0;
      if (read_index(t[i + 4].text, value)) out[prefix + std::string(t[i + 2].text)] = value;
    }
  }
}

// What a constant's index may name instead of a literal: the integer constants of kreg's own
// headers, which every compile is given and every disk key covers, so that a kernel shares
// its indices with the host code that includes the same header.
const std::map<std::string, int, std::less<>>& named_indices() {
  static const std::map<std::string, int, std::less<>> table = [] {
    std::map<std::string, int, std::less<>> out;
    for (const core::EmbeddedFile& header : core::embedded_headers()) {
      read_named_indices(tokenize(strip_comments(header.text)), out);
    }
    return out;
  }();
  return table;
}

void read_constants(const std::string& source, const std::vector<Token>& t,
                    std::vector<ConstantDecl>& constants) {
  for (std::size_t i = 0; i + 1 < t.size(); ++i) {
    const bool required = t[i].text == "KREG_CONSTANT";
    const bool optional = t[i].text == "KREG_CONSTANT_DEFAULT";
    if ((!required && !optional) || t[i + 1].text != "(") continue;
    const std::size_t close = skip_parens(t, i + 1);
    std::vector<std::string> args;
    std::size_t begin = i + 2;
    int depth = 0;
    for (std::size_t j = i + 2; j < close; ++j) {
      const std::string_view s = t[j].text;
      if (s == "(" || s == "<" || s == "[" || s == "{") ++depth;
      if (s == ")" || s == ">" || s == "]" || s == "}") --depth;
      if ((s == "," && depth == 0) || (j + 1 == close)) {
        args.push_back(join(t, begin, j));
        begin = j + 1;
      }
    }
    const std::string call = std::string(t[i].text) + "(" + [&] {
      std::string all;
      for (const auto& a : args) all += (all.empty() ? "" : ", ") + a;
      return all;
    }() + ")";
    const std::size_t want = required ? 3 : 4;
    if (args.size() != want) {
      malformed(source, call + " needs " + std::to_string(want) + " arguments");
    }
    ConstantDecl decl;
    const std::string& type = args[0];
    if (type == "bool") {
      decl.type = ConstantType::Bool;
    } else if (type == "int" || type == "int32_t" || type == "std::int32_t") {
      decl.type = ConstantType::Int;
    } else {
      malformed(source, call + ": the type must be bool or int");
    }
    if (!is_identifier(args[1])) malformed(source, call + ": '" + args[1] + "' is not a name");
    decl.name = args[1];
    std::string_view index = args[2];
    if (index.starts_with("::")) index.remove_prefix(2);
    if (!read_index(index, decl.index)) {
      const auto& named = named_indices();
      const auto found = named.find(index);
      if (found == named.end()) {
        malformed(source, call +
                              ": the index must be a non-negative integer literal, in "
                              "decimal, or the qualified name of a constexpr int of one of "
                              "kreg's headers");
      }
      decl.index = found->second;
    }
    decl.has_default = optional;
    bool repeated = false;
    for (ConstantDecl& other : constants) {
      if (other.index != decl.index) continue;
      // The same constant may be declared in several #if branches; anything else is a clash.
      if (other.name != decl.name || other.type != decl.type) {
        malformed(source, "constants '" + other.name + "' and '" + decl.name + "' share index " +
                              std::to_string(decl.index));
      }
      other.has_default = other.has_default && decl.has_default;
      repeated = true;
    }
    if (!repeated) constants.push_back(std::move(decl));
    i = close - 1;
  }
  std::sort(constants.begin(), constants.end(),
            [](const ConstantDecl& a, const ConstantDecl& b) { return a.index < b.index; });
}

// Whether a source (comments stripped, lines spliced) includes any header but kreg's own.
// It only decides whether -minimal is tried first, so an include it misses costs a second
// compile, never a wrong binary: the disk cache decides from what NVRTC read.
bool includes_other_headers(std::string_view code) {
  std::istringstream lines{std::string(code)};
  std::string line;
  while (std::getline(lines, line)) {
    std::string_view s = trim(line);
    if (s.starts_with('#')) {
      s.remove_prefix(1);
    } else if (s.starts_with("%:")) {  // the digraph of #
      s.remove_prefix(2);
    } else {
      continue;
    }
    s = trim(s);
    if (!s.starts_with("include")) continue;
    s = trim(s.substr(7));
    const std::size_t close = s.size() < 2 ? std::string_view::npos : s.find_first_of(">\"", 1);
    const std::string_view name = close == std::string_view::npos ? s : s.substr(1, close - 1);
    if (!name.starts_with("kreg/")) return true;
  }
  return false;
}

// A header name whose lookup stays inside the include path: relative, and never climbing.
bool stays_inside(std::string_view name) {
  if (name.empty() || name.front() == '/') return false;
  while (!name.empty()) {
    const std::size_t slash = name.find('/');
    if (name.substr(0, slash) == "..") return false;
    if (slash == std::string_view::npos) break;
    name.remove_prefix(slash + 1);
  }
  return true;
}

// Whether the code asks `__has_include` (or `__has_include_next`) about anything but a
// literal header name that stays inside the include path.
bool probes_outside(std::string_view code) {
  constexpr std::string_view kWord = "__has_include";
  for (std::size_t at = code.find(kWord); at != std::string_view::npos;
       at = code.find(kWord, at + 1)) {
    if (at > 0 && is_ident_char(code[at - 1])) continue;
    std::size_t i = at + kWord.size();
    if (code.substr(i, 5) == "_next") i += 5;
    if (i < code.size() && is_ident_char(code[i])) continue;
    auto skip_space = [&] {
      while (i < code.size() && std::isspace(static_cast<unsigned char>(code[i]))) ++i;
    };
    skip_space();
    if (i >= code.size() || code[i] != '(') {
      // `defined(__has_include)` and `#ifdef __has_include` ask about the operator, not a
      // file; anything else (a macro standing for it, say) could hide a probe.
      const std::size_t newline = code.rfind('\n', at);
      const std::size_t line = newline == std::string_view::npos ? 0 : newline + 1;
      const std::string_view before = trim(code.substr(line, at - line));
      const bool about_operator = (i < code.size() && code[i] == ')') ||
                                  before.ends_with("ifdef") || before.ends_with("ifndef");
      if (about_operator) continue;
      return true;
    }
    ++i;
    skip_space();
    if (i >= code.size() || (code[i] != '<' && code[i] != '"')) return true;  // a macro
    const char close = code[i] == '<' ? '>' : '"';
    const std::size_t end = code.find(close, i + 1);
    if (end == std::string_view::npos || !stays_inside(code.substr(i + 1, end - i - 1))) {
      return true;
    }
  }
  return false;
}

void add_entry(const std::string& source, std::vector<Entry>& entries, std::string_view spec) {
  spec = trim(spec);
  Entry entry;
  if (auto eq = spec.find('='); eq != std::string_view::npos) {
    entry.name = std::string(trim(spec.substr(0, eq)));
    entry.expression = std::string(trim(spec.substr(eq + 1)));
    if (entry.expression.empty())
      malformed(source, "entry '" + entry.name + "' has an empty expression");
  } else {
    entry.name = std::string(spec);
  }
  if (!is_identifier(entry.name)) {
    malformed(source, "'" + entry.name + "' is not a valid entry name");
  }
  entries.push_back(std::move(entry));
}

struct Directive {
  std::string_view word;  // "options" in "// kreg:options -use_fast_math"
  std::string_view rest;
};

// The directive a line is, if it is one: "// kreg:word" is a directive; "// kreg: some
// prose" is just a comment.
std::optional<Directive> directive_of(std::string_view line) {
  std::string_view s = trim(line);
  if (s.substr(0, 2) != "//") return std::nullopt;
  s = trim(s.substr(2));
  if (s.substr(0, 5) != "kreg:" || s.size() == 5 || !is_ident_start(s[5])) return std::nullopt;
  s = s.substr(5);
  std::size_t end = 0;
  while (end < s.size() && (is_ident_char(s[end]) || s[end] == '-')) ++end;
  return Directive{s.substr(0, end), trim(s.substr(end))};
}

void read_annotations(Source& source) {
  std::istringstream lines(source.text);
  std::string line;
  while (std::getline(lines, line)) {
    const std::optional<Directive> found = directive_of(line);
    if (!found) continue;
    const std::string_view directive = found->word;
    const std::string_view rest = found->rest;
    if (directive == "entry") {
      add_entry(source.name, source.entries, rest);
    } else if (directive == "options") {
      std::istringstream words{std::string(rest)};
      std::string word;
      while (words >> word) source.options.push_back(word);
    } else if (directive == "specialization") {
      try {
        source.specializations.push_back(parse_constants(rest));
      } catch (const Error& e) {
        malformed(source.name, std::string(e.message()));
      }
    } else if (directive == "arch-specific") {
      source.arch_specific = true;
    } else {
      malformed(source.name, "unknown annotation 'kreg:" + std::string(directive) +
                                 "' (known: entry, options, specialization, arch-specific)");
    }
  }
}

}  // namespace

std::string first_directive(std::string_view text) {
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    const std::string_view line = text.substr(0, end);
    if (directive_of(line)) return std::string(trim(line));
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return {};
}

const ConstantDecl* Source::find_constant(int index) const noexcept {
  for (const ConstantDecl& decl : constants) {
    if (decl.index == index) return &decl;
  }
  return nullptr;
}

bool Source::needs_constants() const noexcept {
  return std::any_of(constants.begin(), constants.end(),
                     [](const ConstantDecl& d) { return !d.has_default; });
}

std::vector<Constants> Source::prewarm_sets() const {
  std::vector<Constants> sets;
  if (!needs_constants()) sets.emplace_back();
  sets.insert(sets.end(), specializations.begin(), specializations.end());
  return sets;
}

Source parse_source(std::string name, std::string text, const SourceOptions& options) {
  if (name.empty()) throw Error(ErrorCode::InvalidArgument, "a source needs a name");
  if (text.empty()) malformed(name, "the text is empty");
  // NVRTC reads a source up to its first NUL byte: whatever follows would be registered
  // but never compiled.
  if (const std::size_t nul = text.find('\0'); nul != std::string::npos) {
    malformed(name, "the text holds a NUL byte at offset " + std::to_string(nul) +
                        "; NVRTC would not compile anything after it");
  }
  Source source;
  source.name = std::move(name);
  source.text = std::move(text);
  const std::string code = strip_comments(source.text);
  const std::vector<Token> tokens = tokenize(code);
  read_entries(tokens, source.entries);
  read_annotations(source);
  for (const std::string& spec : options.entries) add_entry(source.name, source.entries, spec);
  source.options.insert(source.options.end(), options.compile_options.begin(),
                        options.compile_options.end());
  read_constants(source.name, tokens, source.constants);
  source.kreg_headers_only = !includes_other_headers(code);
  source.probes_files = probes_outside(code);

  for (const Constants& constants : source.specializations) {
    try {
      check_constants(source, core::sorted_constants(constants), source.name);
    } catch (const Error& e) {
      malformed(source.name,
                std::string("a listed specialization does not fit: ") + std::string(e.message()));
    }
  }
  if (source.entries.empty()) {
    malformed(source.name,
              "declares no kernel entry (an extern \"C\" __global__ function, a "
              "'// kreg:entry name=expression' line, or SourceOptions::entries)");
  }
  // A kernel declared before it is defined is found twice; that is one entry. One name for
  // two different functions is an error.
  std::vector<Entry> unique;
  for (Entry& entry : source.entries) {
    auto same = std::find_if(unique.begin(), unique.end(),
                             [&](const Entry& e) { return e.name == entry.name; });
    if (same == unique.end()) {
      unique.push_back(std::move(entry));
    } else if (same->expression != entry.expression) {
      malformed(source.name,
                "entry '" + entry.name + "' is declared twice, as different functions");
    }
  }
  source.entries = std::move(unique);
  return source;
}

void check_constants(const Source& source, const std::vector<core::ConstantValue>& values,
                     std::string_view label) {
  const std::string where = "'" + std::string(label) + "' (source '" + source.name + "')";
  if (int at = core::first_repeated_index(values); at >= 0) {
    throw Error(ErrorCode::InvalidArgument,
                "constant index " + std::to_string(values[static_cast<std::size_t>(at)].index) +
                    " is given more than once for " + where);
  }
  for (const core::ConstantValue& value : values) {
    const ConstantDecl* decl = source.find_constant(value.index);
    if (decl == nullptr) {
      throw Error(ErrorCode::InvalidArgument,
                  "constant index " + std::to_string(value.index) + " is not declared by " + where);
    }
    const bool want_bool = decl->type == ConstantType::Bool;
    if (want_bool != value.is_bool) {
      throw Error(ErrorCode::CompileError,
                  "constant '" + decl->name + "' (index " + std::to_string(decl->index) + ") of " +
                      where + " is " + (want_bool ? "bool" : "int") + " but was given as " +
                      (value.is_bool ? "bool" : "int"));
    }
  }
  for (const ConstantDecl& decl : source.constants) {
    if (decl.has_default) continue;
    const bool given = std::any_of(values.begin(), values.end(), [&](const core::ConstantValue& v) {
      return v.index == decl.index;
    });
    if (!given) {
      throw Error(ErrorCode::CompileError, "required constant '" + decl.name + "' (index " +
                                               std::to_string(decl.index) + ", " +
                                               (decl.type == ConstantType::Bool ? "bool" : "int") +
                                               ") of " + where + " was not given");
    }
  }
}

}  // namespace kreg::registry
