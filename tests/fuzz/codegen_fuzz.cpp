// Custom-kernel code generation (src/custom/codegen.hpp, names.hpp) through the public API:
// names, body, header, template arguments and input shapes all come from the input, which
// reads like this (every line optional; the body is everything after the `---` line):
//
//   kernel double
//   input a float32 4            name, dtype, shape (no dimensions: a 0-d input)
//   output out float32 4
//   template T float32           or `template N int 4`, `template B bool 1`
//   header #define SCALE 2       one line of the header; repeatable
//   atomic                       atomic outputs
//   ---
//   uint i = thread_position_in_grid.x; out[i] = 2 * a[i];
//
// kreg either refuses the kernel with InvalidArgument or generates a source that, checked
// without a compiler: starts with its includes, the header as given, and the kernel; has
// exactly the signature the design prescribes for these inputs (pointer, small or scalar
// inputs, shape/strides/ndim parameters only when the body names them, outputs, the grid),
// with no name twice; declares a Metal attribute exactly when the body names it; includes
// the preamble parts the body uses; ends with the body, verbatim. A kernel that uses Metal's
// vector types has the header's includes first, then the rest of the header and the kernel
// inside namespace kreg_metal, with CUDA's `::uint3` for the grid. The internal generator
// agrees with the API, the numbered listing holds every line, and the cache key is stable
// for the same kernel and changes with the body.
#include <kreg/custom_kernel.hpp>

#include "array/dtype_info.hpp"
#include "custom/codegen.hpp"
#include "custom/names.hpp"
#include "custom/preamble.hpp"
#include "custom/rewrites.hpp"
#include "lex/lexer.hpp"
#include "lex/text.hpp"

#include "fuzz_check.hpp"

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace {

using kreg::Dtype;
using kreg::TemplateArg;
using kreg::fuzz::refused;

struct Arg {
  std::string name;
  Dtype dtype = Dtype::Float32;
  kreg::Shape shape;
};

struct Definition {
  std::string name;
  std::vector<Arg> inputs;
  std::vector<Arg> outputs;
  std::vector<std::pair<std::string, TemplateArg>> template_args;
  kreg::CustomKernelOptions options;
  std::string body;
};

std::vector<std::string_view> words(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t at = 0;
  while (at < line.size()) {
    const std::size_t start = line.find_first_not_of(' ', at);
    if (start == std::string_view::npos) break;
    const std::size_t end = std::min(line.find(' ', start), line.size());
    out.push_back(line.substr(start, end - start));
    at = end;
  }
  return out;
}

std::optional<Dtype> dtype_named(std::string_view name) {
  for (int d = 0; d <= static_cast<int>(Dtype::Float64); ++d) {
    if (name == kreg::to_string(static_cast<Dtype>(d))) return static_cast<Dtype>(d);
  }
  return std::nullopt;
}

template <class T>
std::optional<T> number(std::string_view text) {
  T value{};
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// An argument line: name, dtype, dimensions. Lines that do not parse are skipped, as are
// arguments past a count no real kernel needs.
void add_arg(std::vector<Arg>& to, const std::vector<std::string_view>& w) {
  if (w.size() < 3 || to.size() >= 16) return;
  const auto dtype = dtype_named(w[2]);
  if (!dtype) return;
  Arg arg{std::string(w[1]), *dtype, {}};
  for (std::size_t i = 3; i < w.size() && i < 13; ++i) {
    const auto dim = number<std::int64_t>(w[i]);
    if (!dim) return;
    arg.shape.push_back(*dim);
  }
  to.push_back(std::move(arg));
}

void add_template(Definition& def, const std::vector<std::string_view>& w) {
  if (w.size() < 3 || def.template_args.size() >= 8) return;
  std::string name(w[1]);
  if (const auto dtype = dtype_named(w[2])) {
    def.template_args.emplace_back(std::move(name), *dtype);
  } else if (w[2] == "int" && w.size() > 3) {
    if (const auto n = number<int>(w[3])) def.template_args.emplace_back(std::move(name), *n);
  } else if (w[2] == "bool" && w.size() > 3) {
    def.template_args.emplace_back(std::move(name), w[3] == "1");
  }
}

Definition read_definition(std::string_view text) {
  Definition def;
  def.name = "k";
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t end = std::min(text.find('\n', at), text.size());
    const std::string_view line = text.substr(at, end - at);
    at = end + 1;
    if (line == "---") {
      def.body = std::string(text.substr(std::min(at, text.size())));
      break;
    }
    const std::vector<std::string_view> w = words(line);
    if (w.empty()) continue;
    if (w[0] == "kernel" && w.size() > 1) def.name = std::string(w[1]);
    if (w[0] == "input") add_arg(def.inputs, w);
    if (w[0] == "output") add_arg(def.outputs, w);
    if (w[0] == "template") add_template(def, w);
    if (w[0] == "atomic") def.options.atomic_outputs = true;
    if (w[0] == "header") {
      // The text after the keyword and one space, as written.
      std::string_view rest = line.substr(line.find("header") + 6);
      if (rest.starts_with(' ')) rest.remove_prefix(1);
      def.options.header += std::string(rest) + "\n";
    }
  }
  return def;
}

bool identifier_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

bool is_identifier(std::string_view s) {
  return !s.empty() && !(s[0] >= '0' && s[0] <= '9') &&
         std::all_of(s.begin(), s.end(), identifier_char);
}

// Whether `text` has the identifier `word` (a token: not in a comment or a literal) and,
// when `next` is given, a token starting with it right after.
bool has_word(std::string_view text, std::string_view word, std::string_view next = {}) {
  // The same few texts are asked about again and again: lex each once.
  // A deque: each token list views its own string, which must not move.
  struct Lexed {
    std::string text;
    kreg::lex::Tokens tokens;
    explicit Lexed(std::string_view t) : text(t), tokens(text) {}
  };
  static std::deque<Lexed> lexed;
  auto found =
      std::find_if(lexed.begin(), lexed.end(), [&](const Lexed& e) { return e.text == text; });
  if (found == lexed.end()) {
    if (lexed.size() >= 4) lexed.pop_front();
    lexed.emplace_back(text);
    found = lexed.end() - 1;
  }
  const kreg::lex::Tokens& t = found->tokens;
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (t[i].kind != kreg::lex::Kind::Identifier || t.spelling(i) != word) continue;
    if (next.empty() || (i + 1 < t.size() && t.raw(i + 1).starts_with(next))) return true;
  }
  return false;
}

// Whether the kernel names `word` in its header or its body, each lexed on its own as the
// generator reads them: a header that ends inside a literal does not hide the body's words.
bool names(const Definition& def, std::string_view word) {
  return has_word(def.body, word) || has_word(def.options.header, word);
}

// Whether `text` uses a word of the preamble's table as its row says.
bool uses(std::string_view text, const kreg::custom::Word& w) {
  switch (w.use) {
    case kreg::custom::Use::Named: return has_word(text, w.text);
    case kreg::custom::Use::Called: return has_word(text, w.text, "(");
    case kreg::custom::Use::Scoped: return has_word(text, w.text, "::");
    case kreg::custom::Use::Templated: return has_word(text, w.text, "<");
  }
  return false;
}

std::vector<std::string> names_of(const std::vector<Arg>& args) {
  std::vector<std::string> out;
  out.reserve(args.size());
  for (const Arg& a : args) out.push_back(a.name);
  return out;
}

// The names the constructor accepted must be identifiers kreg does not reserve, with no
// two alike and none equal to the shape parameters kreg may generate for an input.
void check_accepted(const Definition& def) {
  KREG_FUZZ_CHECK(is_identifier(def.name), "accepted kernel name '" + def.name + "'");
  KREG_FUZZ_CHECK(!def.outputs.empty(), "accepted a kernel without outputs");
  std::set<std::string> seen;
  for (const auto* args : {&def.inputs, &def.outputs}) {
    for (const Arg& a : *args) {
      KREG_FUZZ_CHECK(
          is_identifier(a.name) && !a.name.starts_with("__") && !a.name.starts_with("kreg"),
          "accepted argument name '" + a.name + "'");
      KREG_FUZZ_CHECK(seen.insert(a.name).second, "accepted '" + a.name + "' twice");
    }
  }
  for (const Arg& a : def.inputs) {
    for (const char* suffix : {"_shape", "_strides", "_ndim"}) {
      KREG_FUZZ_CHECK(!seen.contains(a.name + suffix), "accepted a clash with " + a.name + suffix);
    }
  }
}

// A 0-d input that the body subscripts ("d[0]") is a one-element array, not a value.
kreg::custom::InputKind kind_of(const Arg& input, std::string_view body) {
  if (input.shape.empty() && !kreg::lex::Text(body).names_before(input.name, "[")) {
    return kreg::custom::InputKind::Scalar;
  }
  std::int64_t n = 1;
  for (std::int64_t d : input.shape) n *= d;
  return n > 0 && n < 8 ? kreg::custom::InputKind::Small : kreg::custom::InputKind::Pointer;
}

std::int64_t elements(const Arg& input) {
  std::int64_t n = 1;
  for (std::int64_t d : input.shape) n *= d;
  return n;
}

// Swizzles of swizzles are composed first (rewrites.hpp); the rest is decided on the result.
bool uses_vectors(const Definition& def) {
  const kreg::lex::Text body(def.body);
  const kreg::lex::Text header(def.options.header);
  kreg::lex::Edits body_edits(body.tokens());
  kreg::lex::Edits header_edits(header.tokens());
  const auto body_chains = kreg::custom::compose_swizzles(body, body, header, body_edits);
  const auto header_chains = kreg::custom::compose_swizzles(header, body, header, header_edits);
  return kreg::custom::vector_use(body, body_chains, header, header_chains).any;
}

// The kernel's parameters, each as the design says it is declared.

std::vector<std::string> expected_parameters(const Definition& def) {
  std::vector<std::string> out;
  for (const Arg& in : def.inputs) {
    const std::string type = kreg::array::dtype_info(in.dtype).cuda;
    switch (kind_of(in, def.body)) {
      case kreg::custom::InputKind::Scalar: out.push_back("const " + type + " " + in.name); break;
      case kreg::custom::InputKind::Small:
        out.push_back("const kreg::value_array<" + type + ", " + std::to_string(elements(in)) +
                      "> " + in.name);
        break;
      case kreg::custom::InputKind::Pointer:
        out.push_back("const " + type + "* __restrict__ " + in.name);
        break;
    }
    if (kind_of(in, def.body) == kreg::custom::InputKind::Scalar) continue;
    if (has_word(def.body, in.name + "_shape")) {
      out.push_back("const kreg::value_array<int, 8> " + in.name + "_shape");
    }
    if (has_word(def.body, in.name + "_strides")) {
      out.push_back("const kreg::value_array<int64_t, 8> " + in.name + "_strides");
    }
    if (has_word(def.body, in.name + "_ndim")) out.push_back("const int " + in.name + "_ndim");
  }
  for (const Arg& o : def.outputs) {
    const std::string type = kreg::array::dtype_info(o.dtype).cuda;
    out.push_back((def.options.atomic_outputs ? "kreg::atomic<" + type + ">" : type) +
                  "* __restrict__ " + o.name);
  }
  out.emplace_back(uses_vectors(def) ? "const ::uint3 kreg_grid" : "const uint3 kreg_grid");
  return out;
}

std::string template_line(const Definition& def) {
  if (def.template_args.empty()) return {};
  std::string out = "template <";
  for (std::size_t i = 0; i < def.template_args.size(); ++i) {
    const auto& [name, value] = def.template_args[i];
    if (i > 0) out += ", ";
    out += std::holds_alternative<Dtype>(value)  ? "typename "
           : std::holds_alternative<bool>(value) ? "bool "
                                                 : "int ";
    out += name;
  }
  return out + ">\n";
}

std::string expected_expression(const Definition& def) {
  std::string out = (uses_vectors(def) ? "kreg_metal::kreg_custom_" : "kreg_custom_") + def.name;
  if (def.template_args.empty()) return out;
  out += '<';
  for (std::size_t i = 0; i < def.template_args.size(); ++i) {
    const TemplateArg& value = def.template_args[i].second;
    if (i > 0) out += ", ";
    if (const auto* d = std::get_if<Dtype>(&value)) out += kreg::array::dtype_info(*d).cuda;
    if (const auto* b = std::get_if<bool>(&value)) out += *b ? "true" : "false";
    if (const auto* n = std::get_if<int>(&value)) out += std::to_string(*n);
  }
  return out + '>';
}

bool uses_16_bit(const Definition& def) {
  const auto is_16 = [](Dtype d) { return d == Dtype::Float16 || d == Dtype::BFloat16; };
  for (const auto* args : {&def.inputs, &def.outputs}) {
    for (const Arg& a : *args) {
      if (is_16(a.dtype)) return true;
    }
  }
  for (const auto& [name, value] : def.template_args) {
    if (const auto* d = std::get_if<Dtype>(&value); d != nullptr && is_16(*d)) return true;
  }
  return false;
}

// The preamble parts the kernel needs are included (kreg may include more).
void check_includes(const Definition& def, std::string_view includes) {
  const auto included = [&](std::string_view part) {
    return includes.find("#include <kreg/device/" + std::string(part) + ".cuh>\n") !=
           std::string::npos;
  };
  KREG_FUZZ_CHECK(includes.starts_with("#include <kreg/device/custom_types.cuh>\n"),
                  "no base preamble");
  // A part whose word the header or the body uses, as the preamble's table says, is there;
  // so is every part it needs. (Metal's Limits may come from the header itself.)
  const auto file = [](const kreg::custom::PartInfo& p) {
    std::string_view h = p.header;
    h.remove_prefix(h.rfind('/') + 1);
    return h.substr(0, h.size() - 4);  // no ".cuh"
  };
  for (const kreg::custom::PartInfo& p : kreg::custom::parts()) {
    if (p.part == kreg::custom::Part::Limits || p.part == kreg::custom::Part::VectorMath) continue;
    for (const kreg::custom::Word& w : kreg::custom::words_of(p)) {
      if (!uses(def.body, w) && !uses(def.options.header, w)) continue;
      KREG_FUZZ_CHECK(included(file(p)), std::string(w.text) + " without " + std::string(file(p)));
      for (const kreg::custom::Part need : p.needs) {
        KREG_FUZZ_CHECK(included(file(kreg::custom::part(need))),
                        std::string(file(p)) + " without what it needs");
      }
    }
  }
  if (def.options.atomic_outputs) KREG_FUZZ_CHECK(included("custom_atomic"), "atomic outputs");
  if (uses_16_bit(def)) KREG_FUZZ_CHECK(included("custom_float16"), "16-bit dtypes");
  if (uses_vectors(def)) KREG_FUZZ_CHECK(included("custom_vector"), "vectors");
}

void check_parameters(const Definition& def, std::string_view list) {
  std::vector<std::string_view> given;
  const std::string_view separator = ",\n    ";
  KREG_FUZZ_CHECK(list.starts_with("\n    "), "the parameter list starts oddly");
  list.remove_prefix(5);
  for (std::size_t at = list.find(separator); at != std::string_view::npos;
       at = list.find(separator)) {
    given.push_back(list.substr(0, at));
    list.remove_prefix(at + separator.size());
  }
  given.push_back(list);
  const std::vector<std::string> expected = expected_parameters(def);
  KREG_FUZZ_CHECK(given.size() == expected.size(), "the kernel has another parameter count");
  std::set<std::string> names;
  for (const auto& [name, value] : def.template_args) names.insert(name);
  for (std::size_t i = 0; i < expected.size(); ++i) {
    KREG_FUZZ_CHECK(given[i] == expected[i],
                    "parameter " + std::string(given[i]) + " where the design says " + expected[i]);
    const std::string name = expected[i].substr(expected[i].rfind(' ') + 1);
    KREG_FUZZ_CHECK(names.insert(name).second, "the name '" + name + "' is declared twice");
  }
}

void check_source(const Definition& def, const std::string& source) {
  std::string_view rest = source;
  const std::string banner = "// kreg custom kernel '" + def.name + "'\n";
  KREG_FUZZ_CHECK(rest.starts_with(banner), "no banner");
  rest.remove_prefix(banner.size());
  const std::string_view default_device = "// kreg:options -default-device\n";
  KREG_FUZZ_CHECK(rest.starts_with(default_device) == !def.options.header.empty(),
                  "-default-device without a header, or a header without it");
  if (!def.options.header.empty()) rest.remove_prefix(default_device.size());
  // Cooperative groups, for bodies written for MLX's cuda_kernel, come before kreg's parts.
  for (const std::string_view line :
       {"#include <cooperative_groups.h>\n", "namespace cg = cooperative_groups;\n"}) {
    if (rest.starts_with(line)) {
      KREG_FUZZ_CHECK(names(def, "cooperative_groups") || has_word(def.body, "cg", "::"),
                      "cooperative groups for a kernel that does not use them");
      rest.remove_prefix(line.size());
    }
  }
  std::size_t includes_end = 0;
  while (rest.substr(includes_end).starts_with("#include <kreg/device/") ||
         rest.substr(includes_end).starts_with("#define KREG_METAL_SWIZZLES(S)")) {
    includes_end = rest.find('\n', includes_end) + 1;
  }
  check_includes(def, rest.substr(0, includes_end));
  rest.remove_prefix(includes_end);
  const std::string_view half = "typedef kreg::half half;\n";
  if (rest.starts_with(half)) {
    KREG_FUZZ_CHECK(names(def, "half"), "Metal's half for a kernel that does not name it");
    rest.remove_prefix(half.size());
  }
  const std::string_view bfloat = "typedef kreg::bfloat16 bfloat;\n";
  if (rest.starts_with(bfloat)) {
    KREG_FUZZ_CHECK(names(def, "bfloat"), "Metal's bfloat for a kernel that does not name it");
    rest.remove_prefix(bfloat.size());
  }
  // Conditionals over 16-bit floats are rewritten (rewrites.hpp), in the header and the body.
  const bool ternaries =
      source.find("#include <kreg/device/custom_ternary.cuh>\n") != std::string::npos;
  const std::string code = def.options.header + def.body;
  KREG_FUZZ_CHECK(!ternaries || code.find('?') != std::string::npos,
                  "the conditional helper for a kernel without a conditional");
  // Both as given, with Metal's address-space words in CUDA's terms (rewrites.hpp),
  // and, with vectors, `metal::` dropped before vector type names (rewrites.hpp).
  const bool vectors = uses_vectors(def);
  const kreg::lex::Text body_text(def.body);
  const kreg::lex::Text header_text(def.options.header);
  std::string includes;
  const auto rewritten = [&](const kreg::lex::Text& given, kreg::custom::TextScope scope) {
    kreg::lex::Edits edits(given.tokens());
    kreg::custom::compose_swizzles(given, body_text, header_text, edits);
    kreg::custom::rewrite_address_spaces(given, scope, edits);
    if (ternaries) kreg::custom::rewrite_ternaries(given, edits);
    if (vectors) kreg::custom::unqualify_vectors(given, edits);
    if (vectors && scope == kreg::custom::TextScope::Program) {
      includes = kreg::custom::hoist_includes(given, edits);
    }
    return edits.apply();
  };
  std::string header = rewritten(header_text, kreg::custom::TextScope::Program);
  if (!header.empty() && header.back() != '\n') header += '\n';
  if (vectors) header = includes + "namespace kreg_metal {\n" + header;
  const std::string_view warp_size = "#define WARP_SIZE 32\n";
  if (rest.size() > header.size() && rest.substr(header.size()).starts_with(warp_size)) {
    KREG_FUZZ_CHECK(has_word(def.body, "WARP_SIZE"), "WARP_SIZE for a body that does not name it");
    header += warp_size;
  }
  KREG_FUZZ_CHECK(rest.starts_with(header + "\n"), "the header is not as given");
  rest.remove_prefix(header.size() + 1);

  const std::string body = rewritten(body_text, kreg::custom::TextScope::Function);
  std::string tail = "  // body\n" + body;
  if (body.empty() || body.back() != '\n') tail += '\n';
  tail += "}\n";
  if (vectors) tail += "}  // namespace kreg_metal\n";
  KREG_FUZZ_CHECK(rest.ends_with(tail), "the body is not as given, or not last");
  // What lies between is kreg's alone: no user text to confuse the checks below.
  std::string_view kernel = rest.substr(0, rest.size() - tail.size());
  const std::string head = template_line(def) + "__global__ void kreg_custom_" + def.name + "(";
  KREG_FUZZ_CHECK(kernel.starts_with(head), "the kernel does not start with " + head);
  kernel.remove_prefix(head.size());
  const std::size_t close = kernel.find(") {\n");
  KREG_FUZZ_CHECK(close != std::string_view::npos, "the parameter list does not close");
  check_parameters(def, kernel.substr(0, close));
  const std::string_view prologue = kernel.substr(close);
  KREG_FUZZ_CHECK(prologue.find("if (kreg_x >= kreg_grid.x || kreg_y >= kreg_grid.y || "
                                "kreg_z >= kreg_grid.z) return;\n") != std::string_view::npos,
                  "threads past the grid are not stopped");
  for (const kreg::custom::Attribute& a : kreg::custom::attributes()) {
    const std::string declaration =
        "  const " + std::string(a.type) + " " + std::string(a.name) + " = ";
    KREG_FUZZ_CHECK(
        (prologue.find(declaration) != std::string_view::npos) == has_word(def.body, a.name),
        std::string(a.name) + " is declared without being named, or named without being declared");
  }
}

// numbered() prefixes each line of the source and keeps the rest of it.
void check_listing(const std::string& source) {
  const std::string listing = kreg::lex::numbered(source);
  std::string rebuilt;
  std::size_t line = 1;
  std::size_t at = 0;
  while (at < listing.size()) {
    const std::size_t end = listing.find('\n', at);
    KREG_FUZZ_CHECK(end != std::string::npos, "the listing's last line is unterminated");
    std::string number = std::to_string(line++);
    const std::string prefix =
        std::string(number.size() < 4 ? 4 - number.size() : 0, ' ') + number + " | ";
    KREG_FUZZ_CHECK(listing.compare(at, prefix.size(), prefix) == 0, "line misnumbered");
    rebuilt.append(listing, at + prefix.size(), end + 1 - at - prefix.size());
    at = end + 1;
  }
  KREG_FUZZ_CHECK(rebuilt == source, "the listing lost or changed text");
}

void check_generator(const Definition& def, const std::vector<kreg::Array>& inputs,
                     const std::string& source) {
  kreg::custom::KernelSpec spec;
  spec.name = def.name;
  spec.body = def.body;
  spec.header = def.options.header;
  spec.atomic_outputs = def.options.atomic_outputs;
  spec.template_args = def.template_args;
  for (std::size_t i = 0; i < def.inputs.size(); ++i) {
    spec.inputs.push_back({def.inputs[i].name, def.inputs[i].dtype,
                           kind_of(def.inputs[i], def.body), inputs[i].size()});
  }
  for (const Arg& o : def.outputs) spec.outputs.emplace_back(o.name, o.dtype);
  const kreg::custom::Generated generated = kreg::custom::generate(spec);
  KREG_FUZZ_CHECK(generated.source == source, "the generator and the API disagree");
  KREG_FUZZ_CHECK(generated.expression == expected_expression(def),
                  "instantiates " + generated.expression);
}

bool is_key(std::string_view key, std::string_view name) {
  const std::string prefix = "custom_" + std::string(name) + "_";
  if (!key.starts_with(prefix) || key.size() != prefix.size() + 16) return false;
  key.remove_prefix(prefix.size());
  return key.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

void check(const Definition& def) {
  std::optional<kreg::CustomKernel> kernel;
  const auto make = [&](std::optional<kreg::CustomKernel>& into, const std::string& body) {
    into.emplace(def.name, names_of(def.inputs), names_of(def.outputs), body, def.options);
  };
  if (refused([&] { make(kernel, def.body); })) return;
  check_accepted(def);

  std::vector<kreg::Array> inputs;
  for (const Arg& in : def.inputs) {
    if (refused([&] { inputs.push_back(kreg::Array::empty(in.shape, in.dtype)); })) return;
  }
  std::vector<kreg::OutputSpec> outputs;
  for (const Arg& o : def.outputs) outputs.push_back({o.shape, o.dtype});
  kreg::ApplyOptions apply;
  apply.template_args = def.template_args;
  std::string source;
  if (refused([&] { source = kernel->generated_source(inputs, outputs, apply); })) return;

  check_source(def, source);
  check_listing(source);
  check_generator(def, inputs, source);

  const std::string key = kernel->cache_key(inputs, outputs, apply);
  KREG_FUZZ_CHECK(is_key(key, def.name), "a malformed cache key: " + key);
  std::optional<kreg::CustomKernel> twin;
  make(twin, def.body);
  KREG_FUZZ_CHECK(twin->generated_source(inputs, outputs, apply) == source,
                  "one definition generated two sources");
  KREG_FUZZ_CHECK(twin->cache_key(inputs, outputs, apply) == key, "one definition, two keys");
  std::optional<kreg::CustomKernel> edited;
  make(edited, def.body + " ");
  KREG_FUZZ_CHECK(edited->cache_key(inputs, outputs, apply) != key,
                  "a changed body kept the key " + key);
}

}  // namespace

void kreg::fuzz::test_one_input(std::string_view input) {
  check(read_definition(input));
}
