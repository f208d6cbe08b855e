#include "custom/codegen.hpp"

#include "custom/address_spaces.hpp"
#include "custom/names.hpp"
#include "custom/preamble.hpp"
#include "custom/ternaries.hpp"
#include "custom/vectors.hpp"
#include "lex/text.hpp"

#include <algorithm>
#include <array>
#include <span>
#include <string>
#include <vector>

namespace kreg::custom {

const char* cuda_type_name(Dtype dtype) noexcept {
  switch (dtype) {
    case Dtype::Bool: return "bool";
    case Dtype::Int8: return "int8_t";
    case Dtype::Int16: return "int16_t";
    case Dtype::Int32: return "int32_t";
    case Dtype::Int64: return "int64_t";
    case Dtype::UInt8: return "uint8_t";
    case Dtype::UInt16: return "uint16_t";
    case Dtype::UInt32: return "uint32_t";
    case Dtype::UInt64: return "uint64_t";
    case Dtype::Float16: return "kreg::half";
    case Dtype::BFloat16: return "kreg::bfloat16";
    case Dtype::Float32: return "float";
    case Dtype::Float64: return "double";
    case Dtype::Complex64: return "complex64_t";
  }
  return "void";
}

namespace {

std::string template_value(const TemplateArg& arg) {
  if (const auto* dtype = std::get_if<Dtype>(&arg)) return cuda_type_name(*dtype);
  if (const auto* flag = std::get_if<bool>(&arg)) return *flag ? "true" : "false";
  return std::to_string(std::get<int>(arg));
}

const char* template_kind(const TemplateArg& arg) {
  if (std::holds_alternative<Dtype>(arg)) return "typename";
  if (std::holds_alternative<bool>(arg)) return "bool";
  return "int";
}

// The namespace a kernel with vectors is written in (see custom_vector.cuh).
constexpr std::string_view kVectorScope = "kreg_metal";

// Which element types the kernel's arrays and template arguments have.
struct DtypeUse {
  bool sixteen = false;  // half or bfloat16
  bool complex = false;
};

DtypeUse dtype_use(const KernelSpec& spec) {
  DtypeUse use;
  const auto add = [&use](Dtype d) {
    use.sixteen = use.sixteen || d == Dtype::Float16 || d == Dtype::BFloat16;
    use.complex = use.complex || d == Dtype::Complex64;
  };
  for (const InputSpec& input : spec.inputs) add(input.dtype);
  for (const auto& output : spec.outputs) add(output.second);
  for (const auto& arg : spec.template_args) {
    if (const auto* d = std::get_if<Dtype>(&arg.second)) add(*d);
  }
  return use;
}

// Appends `text` and, unless it is empty or ends one already, a line break. The text as
// rewritten decides: a rewritten conditional at its very end closes after the last break.
void end_line(std::string& out, const std::string& text) {
  out += text;
  if (!text.empty() && text.back() != '\n') out += '\n';
}

void add_parameter(std::string& out, bool& first, const std::string& text) {
  out += first ? "\n    " : ",\n    ";
  out += text;
  first = false;
}

}  // namespace

InputParams input_params(const lex::Text& body, const InputSpec& input) {
  if (input.kind == InputKind::Scalar) return {};
  const std::string name(input.name);
  return {body.names(name + "_shape"), body.names(name + "_strides"), body.names(name + "_ndim")};
}

namespace {

// Which parts of the preamble (preamble.hpp) the kernel gets: those it uses, those a
// condition below brings, and what they need.
struct Included {
  std::array<bool, static_cast<std::size_t>(Part::Count)> parts{};
  bool typed16 = false;  // it has 16-bit values of Metal's or kreg's types
  bool toolkit = false;  // its header brings the toolkit's headers

  bool has(Part p) const noexcept { return parts[static_cast<std::size_t>(p)]; }
  void add(Part p) noexcept { parts[static_cast<std::size_t>(p)] = true; }
};

Included included_parts(const KernelSpec& spec, const lex::Text& body, const lex::Text& header,
                        const VectorUse& vectors) {
  Included in;
  const auto uses = [&](Part p) {
    return uses_any(body, part(p).words) || uses_any(header, part(p).words);
  };
  for (const std::string& name : header.included_headers()) {
    in.toolkit = in.toolkit || name.starts_with("cuda");
  }
  const DtypeUse dtypes = dtype_use(spec);
  in.typed16 = dtypes.sixteen || uses(Part::Float16);
  in.add(Part::Types);
  if (dtypes.complex || uses(Part::Complex)) in.add(Part::Complex);
  if (in.typed16) in.add(Part::Float16);
  if (spec.atomic_outputs) in.add(Part::Atomic);
  for (const Part p : {Part::Barrier, Part::Simd, Part::SimdgroupMatrix, Part::Atomic, Part::Math,
                       Part::Constants, Part::Utils, Part::Bits}) {
    if (uses(p)) in.add(p);
  }
  // MLX's Limits<T>, unless the header brings a Limits of its own.
  if (uses(Part::Limits) && !header.has_pair("struct", "Limits") &&
      !header.has_pair("class", "Limits")) {
    in.add(Part::Limits);
  }
  // Conditionals that mix kreg's 16-bit floats with float are ambiguous in C++ (ternaries.hpp).
  if (in.typed16 && !in.toolkit && (body.has("?") || header.has("?"))) in.add(Part::Ternary);
  if (spec.dynamic_threadgroup) in.add(Part::Threadgroup);
  if (vectors.any) {
    in.add(Part::Vector);
    if (uses(Part::VectorMath)) in.add(Part::VectorMath);
  }
  // What the parts need, last first: every part needs only parts before it.
  for (std::size_t i = in.parts.size(); i-- > 0;) {
    if (!in.parts[i]) continue;
    for (const Part need : parts()[i].needs) in.add(need);
  }
  if (in.has(Part::Math) && in.has(Part::Float16)) in.add(Part::MathFloat16);
  // The toolkit's cuda_fp16.h has a `half` of its own, with its own vector conversions.
  if (vectors.any && in.has(Part::Float16) && !in.toolkit) in.add(Part::VectorFloat16);
  return in;
}

}  // namespace

Generated generate(const KernelSpec& spec) {
  const std::string function = "kreg_custom_" + std::string(spec.name);
  const lex::Text body(spec.body);
  const lex::Text header(spec.header);
  lex::Edits body_edits(body.tokens());
  lex::Edits header_edits(header.tokens());
  // Swizzles of swizzles become single swizzles, and every decision below sees those.
  const Composed body_chains = compose_swizzles(body, body, header, body_edits);
  const Composed header_chains = compose_swizzles(header, body, header, header_edits);
  const VectorUse vectors = vector_use(body, body_chains, header, header_chains);
  const Included in = included_parts(spec, body, header, vectors);

  std::string out;
  out.reserve(1024 + spec.body.size() + spec.header.size());
  out += "// kreg custom kernel '";
  out += spec.name;
  out += "'\n";
  // Helpers in a header written for Metal carry no __device__: all of it runs on the device.
  if (!spec.header.empty()) out += "// kreg:options -default-device\n";
  // Bodies written for MLX's cuda_kernel use cooperative groups, which MLX's preamble brings
  // with `namespace cg`. The toolkit header costs compile time, so only they get it.
  const bool groups = body.names("cooperative_groups") || header.names("cooperative_groups") ||
                      body.names_before("cg", "::");
  if (groups) {
    const std::vector<std::string> headers = header.included_headers();
    if (std::find(headers.begin(), headers.end(), "cooperative_groups.h") == headers.end()) {
      out += "#include <cooperative_groups.h>\n";
    }
    if (!header.has_pair("namespace", "cg")) out += "namespace cg = cooperative_groups;\n";
  }
  for (const PartInfo& p : parts()) {
    if (!in.has(p.part)) continue;
    if (p.part == Part::Vector) out += swizzle_macro(vectors.swizzles);
    out += "#include <";
    out += p.header;
    out += ">\n";
  }
  const bool float16 = in.has(Part::Float16);
  if (float16 && !in.toolkit && (body.names("half") || header.names("half"))) {
    out += "typedef kreg::half half;\n";
  }
  // Metal's `bfloat`, unless the header or body declares a `bfloat` of its own.
  const auto declares_bfloat = [](const lex::Text& text) {
    return text.has_pair("bfloat", ";") || text.has_pair("using", "bfloat");
  };
  if ((body.names("bfloat") || header.names("bfloat")) && !declares_bfloat(header) &&
      !declares_bfloat(body)) {
    out += "typedef kreg::bfloat16 bfloat;\n";  // Metal's name for bfloat16_t
  }

  rewrite_address_spaces(header, TextScope::Program, header_edits);
  const std::size_t carved =
      rewrite_address_spaces(body, TextScope::Function, body_edits, spec.dynamic_threadgroup);
  if (in.has(Part::Ternary)) {
    rewrite_ternaries(header, header_edits);
    rewrite_ternaries(body, body_edits);
  }
  // With vectors, the header and the kernel are in the namespace where the Metal names of
  // the vector types hide CUDA's; the header's includes stay at global scope.
  if (vectors.any) {
    unqualify_vectors(header, header_edits);
    unqualify_vectors(body, body_edits);
    out += hoist_includes(header, header_edits);
    out += "namespace ";
    out += kVectorScope;
    out += " {\n";
    end_line(out, header_edits.apply());
  } else if (!spec.header.empty()) {
    end_line(out, header_edits.apply());
  }
  // MLX's CUDA preamble defines WARP_SIZE; a body that names it without defining it gets it.
  if (body.names("WARP_SIZE") && !header.names("WARP_SIZE") && !body.defines("WARP_SIZE")) {
    out += "#define WARP_SIZE 32\n";
  }
  out += '\n';

  Generated generated;
  if (vectors.any) {
    generated.expression = kVectorScope;
    generated.expression += "::";
  }
  generated.expression += function;
  if (!spec.template_args.empty()) {
    out += "template <";
    generated.expression += '<';
    for (std::size_t i = 0; i < spec.template_args.size(); ++i) {
      const auto& [name, value] = spec.template_args[i];
      if (i > 0) {
        out += ", ";
        generated.expression += ", ";
      }
      out += template_kind(value);
      out += ' ';
      out += name;
      generated.expression += template_value(value);
    }
    out += ">\n";
    generated.expression += '>';
  }

  out += "__global__ void " + function + "(";
  bool first = true;
  for (const InputSpec& input : spec.inputs) {
    const std::string name(input.name);
    const std::string type = cuda_type_name(input.dtype);
    std::string parameter = "const ";
    switch (input.kind) {
      case InputKind::Pointer:
        parameter += type;
        parameter += "* __restrict__ ";
        break;
      case InputKind::Small:
        parameter += "kreg::value_array<";
        parameter += type;
        parameter += ", ";
        parameter += std::to_string(input.count);
        parameter += "> ";
        break;
      case InputKind::Scalar:
        parameter += type;
        parameter += ' ';
        break;
    }
    parameter += name;
    add_parameter(out, first, parameter);
    const InputParams params = input_params(body, input);
    if (params.shape)
      add_parameter(out, first, "const kreg::value_array<int, 8> " + name + "_shape");
    if (params.strides) {
      add_parameter(out, first, "const kreg::value_array<int64_t, 8> " + name + "_strides");
    }
    if (params.ndim) add_parameter(out, first, "const int " + name + "_ndim");
  }
  for (const auto& [name, dtype] : spec.outputs) {
    const std::string type = cuda_type_name(dtype);
    add_parameter(out, first,
                  (spec.atomic_outputs ? "kreg::atomic<" + type + ">" : type) + "* __restrict__ " +
                      std::string(name));
  }
  // CUDA's uint3, as the launch passes it, also where `uint3` names Metal's (16 bytes).
  add_parameter(out, first, vectors.any ? "const ::uint3 kreg_grid" : "const uint3 kreg_grid");
  out += ") {\n";

  // Metal runs exactly `grid` threads; CUDA runs whole blocks, so the extra ones stop here.
  out +=
      "  const uint kreg_x = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  const uint kreg_y = blockIdx.y * blockDim.y + threadIdx.y;\n"
      "  const uint kreg_z = blockIdx.z * blockDim.z + threadIdx.z;\n"
      "  if (kreg_x >= kreg_grid.x || kreg_y >= kreg_grid.y || kreg_z >= kreg_grid.z) return;\n";
  bool need_threads = false;
  bool need_dispatch = false;
  bool need_linear = false;
  std::string declarations;
  for (const Attribute& attribute : attributes()) {
    if (!body.names(attribute.name)) continue;
    need_threads = need_threads || attribute.value.find("kreg_threads") != std::string_view::npos ||
                   attribute.value.find("kreg_group") != std::string_view::npos;
    need_dispatch =
        need_dispatch || attribute.value.find("kreg_dispatch") != std::string_view::npos;
    need_linear = need_linear || attribute.value.find("kreg_linear") != std::string_view::npos;
    declarations += "  const ";
    declarations += attribute.type;
    declarations += ' ';
    declarations += attribute.name;
    declarations +=
        attribute.type == "uint3" && attribute.value.front() != '{' ? " = uint3(" : " = ";
    declarations += attribute.value;
    if (attribute.type == "uint3" && attribute.value.front() != '{') declarations += ')';
    declarations += ";\n";
  }
  // As Metal's dispatchThreads does, a threadgroup at the grid's edge counts only its own
  // threads; the dispatch_ attributes give the size the launch asked for.
  if (need_threads) {
    for (const char d : {'x', 'y', 'z'}) {
      out += std::string("  const uint kreg_left_") + d + " = kreg_grid." + d + " - blockIdx." + d +
             " * blockDim." + d + ";\n";
    }
    out +=
        "  const ::uint3 kreg_group = {kreg_left_x < blockDim.x ? kreg_left_x : blockDim.x,\n"
        "                              kreg_left_y < blockDim.y ? kreg_left_y : blockDim.y,\n"
        "                              kreg_left_z < blockDim.z ? kreg_left_z : blockDim.z};\n"
        "  const uint kreg_threads = kreg_group.x * kreg_group.y * kreg_group.z;\n";
  }
  if (need_dispatch) {
    out += "  const uint kreg_dispatch_threads = blockDim.x * blockDim.y * blockDim.z;\n";
  }
  if (need_linear) {
    out +=
        "  const uint kreg_linear = (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + "
        "threadIdx.x;\n";
  }
  out += declarations;
  if (spec.dynamic_threadgroup) {
    out += "  unsigned char* kreg_tg_end = ::kreg::detail::dynamic_shared_end();\n";
  }
  out += "  // body\n";
  const std::string rewritten = body_edits.apply();
  out += rewritten;
  if (rewritten.empty() || rewritten.back() != '\n') out += '\n';
  out += "}\n";
  if (vectors.any) {
    out += "}  // namespace ";
    out += kVectorScope;
    out += '\n';
  }
  generated.source = std::move(out);
  generated.carved_arrays = carved;
  return generated;
}

std::string numbered(std::string_view source) {
  std::string out;
  std::size_t line = 1;
  std::size_t start = 0;
  while (start <= source.size()) {
    const std::size_t end = source.find('\n', start);
    const std::string_view text =
        source.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    if (end == std::string_view::npos && text.empty()) break;
    std::string number = std::to_string(line++);
    out.append(number.size() < 4 ? 4 - number.size() : 0, ' ');
    out += number;
    out += " | ";
    out += text;
    out += '\n';
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return out;
}

}  // namespace kreg::custom
