#include "registry/source.hpp"

#include <kreg/error.hpp>

#include "core/embedded.hpp"
#include "lex/lexer.hpp"
#include "lex/text.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <deque>
#include <map>
#include <optional>
#include <sstream>

namespace kreg::registry {
namespace {

[[noreturn]] void malformed(const std::string& source, const std::string& what) {
  throw Error(ErrorCode::InvalidArgument, "source '" + source + "': " + what);
}

using lex::ident_char;
using lex::ident_start;
using lex::is_identifier;

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

struct Token {
  std::string_view text;
};

// What declarations are read from: the text's tokens without comments and preprocessor
// lines, each spelled as the compiler reads it (a token broken by a line splice is joined).
class Code {
 public:
  explicit Code(const lex::Tokens& lexed) {
    for (std::size_t i = 0; i < lexed.size(); ++i) {
      const lex::Token& t = lexed[i];
      if (t.kind == lex::Kind::Comment || t.directive) continue;
      if (t.spliced) {
        joined_.push_back(lexed.spelling(i));
        tokens_.push_back({joined_.back()});
      } else {
        tokens_.push_back({lexed.raw(i)});
      }
    }
  }
  const std::vector<Token>& tokens() const noexcept { return tokens_; }

 private:
  std::deque<std::string> joined_;  // a deque, so that the views into it stay valid
  std::vector<Token> tokens_;
};

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
    if (!out.empty() && ident_char(out.back()) && ident_char(t[i].text.front())) out += ' ';
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
      read_named_indices(Code(lex::Tokens(header.text)).tokens(), out);
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

// Whether a source includes any header but kreg's own. It only decides whether -minimal is
// tried first, so an include it misses costs a second compile, never a wrong binary: the
// disk cache decides from what NVRTC read.
bool includes_other_headers(const lex::Text& text) {
  const std::vector<std::string> headers = text.included_headers();
  return std::any_of(headers.begin(), headers.end(),
                     [](const std::string& h) { return !h.starts_with("kreg/"); });
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
bool probes_outside(const lex::Tokens& t) {
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (!t.is(i, "__has_include") && !t.is(i, "__has_include_next")) continue;
    const std::size_t open = t.next(i);
    if (!t.is(open, "(")) {
      // `defined(__has_include)` and `#ifdef __has_include` ask about the operator, not a
      // file; anything else (a macro standing for it, say) could hide a probe.
      const std::size_t before = t.prev(i);
      if (t.is(open, ")") || t.is(before, "ifdef") || t.is(before, "ifndef")) continue;
      return true;
    }
    const std::size_t name = t.next(open);
    const bool quoted = name != lex::Tokens::npos && t[name].kind == lex::Kind::String &&
                        t.spelling(name).front() == '"';
    if (!quoted && !t.is(name, "<")) return true;  // a macro
    std::string header;
    if (quoted) {
      const std::string text = t.spelling(name);
      if (text.size() < 2 || text.back() != '"') return true;
      header = text.substr(1, text.size() - 2);
    } else {
      std::size_t close = t.next(name);
      while (close != lex::Tokens::npos && !t.is(close, ">") && !t.is(close, ")")) {
        close = t.next(close);
      }
      if (!t.is(close, ">")) return true;
      header = std::string(t.text().substr(t[name].end, t[close].begin - t[name].end));
    }
    if (!stays_inside(header)) return true;
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
  if (s.substr(0, 5) != "kreg:" || s.size() == 5 || !ident_start(s[5])) return std::nullopt;
  s = s.substr(5);
  std::size_t end = 0;
  while (end < s.size() && (ident_char(s[end]) || s[end] == '-')) ++end;
  return Directive{s.substr(0, end), trim(s.substr(end))};
}

// Annotations are line comments that start their line: one inside a block comment or a
// raw string, or after code, is not one.
void read_annotations(Source& source, const lex::Tokens& t) {
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (t[i].kind != lex::Kind::Comment || !t[i].first || !t.raw(i).starts_with("//")) continue;
    const std::string comment = t.spelling(i);
    const std::optional<Directive> found = directive_of(comment);
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
  const lex::Text read(source.text);
  const lex::Tokens& lexed = read.tokens();
  const Code code(lexed);
  const std::vector<Token>& tokens = code.tokens();
  read_entries(tokens, source.entries);
  read_annotations(source, lexed);
  for (const std::string& spec : options.entries) add_entry(source.name, source.entries, spec);
  source.options.insert(source.options.end(), options.compile_options.begin(),
                        options.compile_options.end());
  read_constants(source.name, tokens, source.constants);
  source.kreg_headers_only = !includes_other_headers(read);
  source.probes_files = probes_outside(lexed);

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
