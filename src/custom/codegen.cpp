#include "custom/codegen.hpp"

#include "array/dtype_info.hpp"
#include "custom/names.hpp"
#include "custom/preamble.hpp"
#include "custom/rewrites.hpp"
#include "lex/text.hpp"

#include <algorithm>
#include <array>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace kreg::custom {

namespace {

std::string template_value(const TemplateArg& arg) {
  if (const auto* dtype = std::get_if<Dtype>(&arg)) return array::dtype_info(*dtype).cuda;
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

// Appends `text` and, unless it is empty or ends one already, a line break. The text as
// rewritten decides: a rewritten conditional at its very end closes after the last break.
void end_line(std::string& out, const std::string& text) {
  out += text;
  if (!text.empty() && text.back() != '\n') out += '\n';
}

// Appends one parameter, written as the concatenation of `parts`.
void add_parameter(std::string& out, bool& first, std::initializer_list<std::string_view> parts) {
  out += first ? "\n    " : ",\n    ";
  for (const std::string_view part : parts) out += part;
  first = false;
}

// Which parts of the preamble (preamble.hpp) the kernel gets: those it uses, those a
// condition below brings, and what they need.
struct Included {
  std::array<bool, static_cast<std::size_t>(Part::Count)> parts{};
  bool toolkit = false;  // its header brings the toolkit's headers

  bool has(Part p) const noexcept { return parts[static_cast<std::size_t>(p)]; }
  void add(Part p) noexcept { parts[static_cast<std::size_t>(p)] = true; }
};

Included included_parts(const KernelSpec& spec, const lex::Text& body, const lex::Text& header,
                        const VectorUse& vectors) {
  Included in;
  const auto uses = [&](Part p) { return uses_any(body, part(p)) || uses_any(header, part(p)); };
  for (const std::string& name : header.included_headers()) {
    in.toolkit = in.toolkit || name.starts_with("cuda");
  }
  // The element types of its arrays and template arguments, and the words it uses.
  bool sixteen = uses(Part::Float16);  // 16-bit values of Metal's or kreg's types
  bool complex = uses(Part::Complex);
  const auto add = [&](Dtype d) {
    sixteen = sixteen || d == Dtype::Float16 || d == Dtype::BFloat16;
    complex = complex || d == Dtype::Complex64;
  };
  for (const InputSpec& input : spec.inputs) add(input.dtype);
  for (const auto& output : spec.outputs) add(output.second);
  for (const auto& arg : spec.template_args) {
    if (const auto* d = std::get_if<Dtype>(&arg.second)) add(*d);
  }
  in.add(Part::Types);
  if (complex) in.add(Part::Complex);
  if (sixteen) in.add(Part::Float16);
  if (spec.atomic_outputs) in.add(Part::Atomic);
  for (const Part p : {Part::Barrier, Part::Simd, Part::SimdgroupMatrix, Part::Atomic, Part::Math,
                       Part::Constants, Part::Utils, Part::NumericLimits, Part::Bits}) {
    if (uses(p)) in.add(p);
  }
  // MLX's Limits<T>, unless the header brings a Limits of its own.
  if (uses(Part::Limits) && !header.has_pair("struct", "Limits") &&
      !header.has_pair("class", "Limits")) {
    in.add(Part::Limits);
  }
  // Conditionals that mix kreg's 16-bit floats with float are ambiguous in C++ (rewrites.hpp).
  if (sixteen && !in.toolkit && (body.has("?") || header.has("?"))) in.add(Part::Ternary);
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

InputParams input_params(const lex::Text& body, const InputSpec& input) {
  if (input.kind == InputKind::Scalar) return {};
  const std::string name(input.name);
  return {body.names(name + "_shape"), body.names(name + "_strides"), body.names(name + "_ndim")};
}

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
  out.append("// kreg custom kernel '").append(spec.name).append("'\n");
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
    out.append("#include <").append(p.header).append(">\n");
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
    // Rewritten conditionals nested n deep hold 2^n copies of the innermost: a few levels
    // are what real kernels have, dozens would render gigabytes.
    const std::size_t added =
        rewrite_ternaries(header, header_edits) + rewrite_ternaries(body, body_edits);
    const std::size_t limit = (std::size_t{4} << 20) + 16 * (spec.header.size() + spec.body.size());
    if (added > limit) {
      invalid(spec.name,
              "its conditionals are nested too deeply to rewrite for 16-bit floats (each level "
              "copies its operands into the other's type; these would add " +
                  (added >= kTernaryGrowthCap ? std::string("over 1 TB")
                                              : std::to_string(added) + " bytes") +
                  " to the source)");
    }
  }
  // With vectors, the header and the kernel are in the namespace where the Metal names of
  // the vector types hide CUDA's; the header's includes stay at global scope.
  if (vectors.any) {
    unqualify_vectors(header, header_edits);
    unqualify_vectors(body, body_edits);
    out.append(hoist_includes(header, header_edits)).append("namespace ").append(kVectorScope);
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
  if (vectors.any) generated.expression.append(kVectorScope).append("::");
  generated.expression += function;
  for (std::size_t i = 0; i < spec.template_args.size(); ++i) {
    const auto& [name, value] = spec.template_args[i];
    const char* separator = i == 0 ? "<" : ", ";
    out.append(i == 0 ? "template <" : ", ").append(template_kind(value)).append(" ").append(name);
    generated.expression.append(separator).append(template_value(value));
  }
  if (!spec.template_args.empty()) {
    out += ">\n";
    generated.expression += '>';
  }

  out.append("__global__ void ").append(function).append("(");
  bool first = true;
  for (const InputSpec& input : spec.inputs) {
    const std::string_view name = input.name;
    const std::string_view type = array::dtype_info(input.dtype).cuda;
    switch (input.kind) {
      case InputKind::Pointer:
        add_parameter(out, first, {"const ", type, "* __restrict__ ", name});
        break;
      case InputKind::Small:
        add_parameter(
            out, first,
            {"const kreg::value_array<", type, ", ", std::to_string(input.count), "> ", name});
        break;
      case InputKind::Scalar: add_parameter(out, first, {"const ", type, " ", name}); break;
    }
    const InputParams params = input_params(body, input);
    if (params.shape)
      add_parameter(out, first, {"const kreg::value_array<int, 8> ", name, "_shape"});
    if (params.strides)
      add_parameter(out, first, {"const kreg::value_array<int64_t, 8> ", name, "_strides"});
    if (params.ndim) add_parameter(out, first, {"const int ", name, "_ndim"});
  }
  for (const auto& [name, dtype] : spec.outputs) {
    const std::string_view type = array::dtype_info(dtype).cuda;
    const bool atomic = spec.atomic_outputs;
    add_parameter(
        out, first,
        {atomic ? "kreg::atomic<" : "", type, atomic ? ">" : "", "* __restrict__ ", name});
  }
  // CUDA's uint3, as the launch passes it, also where `uint3` names Metal's (16 bytes).
  add_parameter(out, first, {vectors.any ? "const ::uint3 kreg_grid" : "const uint3 kreg_grid"});
  out += ") {\n";

  // Metal runs exactly `grid` threads; CUDA runs whole blocks, so the extra ones stop here.
  out +=
      "  const uint kreg_x = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  const uint kreg_y = blockIdx.y * blockDim.y + threadIdx.y;\n"
      "  const uint kreg_z = blockIdx.z * blockDim.z + threadIdx.z;\n"
      "  if (kreg_x >= kreg_grid.x || kreg_y >= kreg_grid.y || kreg_z >= kreg_grid.z) return;\n";
  unsigned needs = kNeedsNothing;
  std::string declarations;
  for (const Attribute& attribute : attributes()) {
    if (!body.names(attribute.name)) continue;
    needs |= attribute.needs;
    declarations.append("  const ").append(attribute.type).append(" ").append(attribute.name);
    declarations.append(" = ").append(attribute.value).append(";\n");
  }
  // As Metal's dispatchThreads does, a threadgroup at the grid's edge counts only its own
  // threads; the dispatch_ attributes give the size the launch asked for.
  if ((needs & kNeedsGroup) != 0) {
    out +=
        "  const uint kreg_left_x = kreg_grid.x - blockIdx.x * blockDim.x;\n"
        "  const uint kreg_left_y = kreg_grid.y - blockIdx.y * blockDim.y;\n"
        "  const uint kreg_left_z = kreg_grid.z - blockIdx.z * blockDim.z;\n"
        "  const ::uint3 kreg_group = {kreg_left_x < blockDim.x ? kreg_left_x : blockDim.x,\n"
        "                              kreg_left_y < blockDim.y ? kreg_left_y : blockDim.y,\n"
        "                              kreg_left_z < blockDim.z ? kreg_left_z : blockDim.z};\n"
        "  const uint kreg_threads = kreg_group.x * kreg_group.y * kreg_group.z;\n";
  }
  if ((needs & kNeedsDispatch) != 0) {
    out += "  const uint kreg_dispatch_threads = blockDim.x * blockDim.y * blockDim.z;\n";
  }
  if ((needs & kNeedsLinear) != 0) {
    out +=
        "  const uint kreg_linear = (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + "
        "threadIdx.x;\n";
  }
  out += declarations;
  if (spec.dynamic_threadgroup) {
    out += "  unsigned char* kreg_tg_end = ::kreg::detail::dynamic_shared_end();\n";
  }
  const std::string rewritten = body_edits.apply();
  out.append("  // body\n").append(rewritten).append(rewritten.ends_with('\n') ? "}\n" : "\n}\n");
  if (vectors.any) out.append("}  // namespace ").append(kVectorScope).append("\n");
  generated.source = std::move(out);
  generated.carved_arrays = carved;
  return generated;
}

}  // namespace kreg::custom
