#include "custom/codegen.hpp"

#include "custom/address_spaces.hpp"
#include "custom/names.hpp"
#include "custom/ternaries.hpp"
#include "custom/vectors.hpp"

#include <algorithm>
#include <span>
#include <string>

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

// What needs the math part: Metal's namespaces, qualifying a name, and calls of the
// functions CUDA lacks. A body's own variable named `step` or `sign` does not count, so that
// it compiles as before. CUDA has exp, min, sqrt and the like for float itself, so a body
// that calls only those compiles without the part.
constexpr std::string_view kMathNamespaces[] = {"metal", "fast", "precise"};
constexpr std::string_view kMathFunctions[] = {
    "clamp", "select", "saturate", "mix", "step", "smoothstep", "fract", "sign", "powr", "divide"};
// Metal's constants: a part of their own, as each costs compile time.
constexpr std::string_view kConstantWords[] = {
    "INFINITY", "NAN",       "HUGE_VALF",  "MAXFLOAT",     "FLT_MAX",   "FLT_MIN",    "FLT_EPSILON",
    "M_E_F",    "M_LOG2E_F", "M_LOG10E_F", "M_LN2_F",      "M_LN10_F",  "M_PI_F",     "M_PI_2_F",
    "M_PI_4_F", "M_1_PI_F",  "M_2_PI_F",   "M_2_SQRTPI_F", "M_SQRT2_F", "M_SQRT1_2_F"};
constexpr std::string_view kAsType = "as_type";
// What, called on a vector, needs the vector forms of the math part.
constexpr std::string_view kVectorMathFunctions[] = {"dot",      "length",     "length_squared",
                                                     "distance", "normalize",  "cross",
                                                     "abs",      "fabs",       "exp",
                                                     "exp2",     "exp10",      "log",
                                                     "log2",     "log10",      "sqrt",
                                                     "rsqrt",    "sin",        "cos",
                                                     "tan",      "tanh",       "erf",
                                                     "floor",    "ceil",       "round",
                                                     "rint",     "trunc",      "fract",
                                                     "sign",     "saturate",   "min",
                                                     "max",      "fmin",       "fmax",
                                                     "pow",      "powr",       "fmod",
                                                     "atan2",    "copysign",   "step",
                                                     "divide",   "clamp",      "mix",
                                                     "fma",      "smoothstep", "select"};
// The namespace a kernel with vectors is written in (see custom_vector.cuh).
constexpr std::string_view kVectorScope = "kreg_metal";
constexpr std::string_view kUtilsWords[] = {"elem_to_loc", "elem_to_loc_1", "elem_to_loc_2",
                                            "elem_to_loc_3", "ceildiv"};

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

InputParams input_params(std::string_view body, const InputSpec& input) {
  if (input.kind == InputKind::Scalar) return {};
  const std::string name(input.name);
  return {names(body, name + "_shape"), names(body, name + "_strides"),
          names(body, name + "_ndim")};
}

namespace {

Generated generate_composed(const KernelSpec& spec) {
  const std::string function = "kreg_custom_" + std::string(spec.name);
  std::string out;
  out.reserve(1024 + spec.body.size() + spec.header.size());
  out += "// kreg custom kernel '";
  out += spec.name;
  out += "'\n";
  // Helpers in a header written for Metal carry no __device__: all of it runs on the device.
  if (!spec.header.empty()) out += "// kreg:options -default-device\n";
  // Only the parts of the preamble that the kernel uses: each costs compile time.
  const auto uses = [&](std::string_view word) {
    return spec.body.find(word) != std::string_view::npos ||
           spec.header.find(word) != std::string_view::npos;
  };
  const bool atomics = spec.atomic_outputs || uses("atomic") || uses("memory_order");
  const bool matrices = uses("simdgroup_matrix") || uses("8x8");
  const bool simd = uses("simd_") || matrices;
  const bool barriers = uses("barrier") || uses("mem_flags");
  const auto names_any = [&](std::span<const std::string_view> words) {
    return std::any_of(words.begin(), words.end(), [&](std::string_view word) {
      return names(spec.body, word) || names(spec.header, word);
    });
  };
  const bool constants = names_any(kConstantWords);
  const auto before_any = [&](std::span<const std::string_view> words, std::string_view next) {
    return std::any_of(words.begin(), words.end(), [&](std::string_view word) {
      return names_before(spec.body, word, next) || names_before(spec.header, word, next);
    });
  };
  const VectorUse vectors = vector_use(spec.body, spec.header);
  const bool vector_math = vectors.any && before_any(kVectorMathFunctions, "(");
  const bool math =
      vector_math || before_any(kMathNamespaces, "::") || before_any(kMathFunctions, "(");
  const bool utils = names_any(kUtilsWords);
  const bool bits =
      names_before(spec.body, kAsType, "<") || names_before(spec.header, kAsType, "<");
  bool float16 = atomics || simd || uses("float16") || uses("half") || uses("bfloat16") ||
                 (vectors.any && uses("bfloat"));
  const DtypeUse dtypes = dtype_use(spec);
  const bool typed16 = dtypes.sixteen || uses("half") || uses("bfloat") || uses("float16");
  float16 = float16 || typed16;
  // Bodies written for MLX's cuda_kernel use cooperative groups, which MLX's preamble brings
  // with `namespace cg`. The toolkit header costs compile time, so only they get it.
  const bool groups = names(spec.body, "cooperative_groups") ||
                      names(spec.header, "cooperative_groups") ||
                      names_before(spec.body, "cg", "::");
  if (groups && spec.header.find("<cooperative_groups.h>") == std::string_view::npos) {
    out += "#include <cooperative_groups.h>\n";
  }
  if (groups && spec.header.find("namespace cg") == std::string_view::npos) {
    out += "namespace cg = cooperative_groups;\n";
  }
  out += "#include <kreg/device/custom_types.cuh>\n";
  if (dtypes.complex || uses("complex64_t")) out += "#include <kreg/device/custom_complex.cuh>\n";
  if (float16) out += "#include <kreg/device/custom_float16.cuh>\n";
  if (barriers) out += "#include <kreg/device/custom_barrier.cuh>\n";
  if (simd) out += "#include <kreg/device/custom_simd.cuh>\n";
  if (matrices) out += "#include <kreg/device/custom_simdgroup_matrix.cuh>\n";
  if (atomics) out += "#include <kreg/device/custom_atomic.cuh>\n";
  if (math) out += "#include <kreg/device/custom_math.cuh>\n";
  if (math && float16) out += "#include <kreg/device/custom_math_float16.cuh>\n";
  if (constants) out += "#include <kreg/device/custom_constants.cuh>\n";
  if (utils) out += "#include <kreg/device/custom_utils.cuh>\n";
  // MLX's Limits<T>, unless the header brings a Limits of its own.
  if ((names(spec.body, "Limits") || names(spec.header, "Limits")) &&
      spec.header.find("struct Limits") == std::string_view::npos &&
      spec.header.find("class Limits") == std::string_view::npos) {
    out += "#include <kreg/device/custom_limits.cuh>\n";
  }
  if (bits) out += "#include <kreg/device/custom_bits.cuh>\n";
  // Metal's `half` and `half2`, unless the kernel brings the toolkit's headers, whose
  // cuda_fp16.h has a `half` and a `half2` of its own.
  const bool toolkit = spec.header.find("#include <cuda") != std::string_view::npos ||
                       spec.header.find("#include \"cuda") != std::string_view::npos;
  // Conditionals that mix kreg's 16-bit floats with float are ambiguous in C++ (ternaries.hpp).
  const bool ternaries = typed16 && !toolkit && uses("?");
  if (ternaries) out += "#include <kreg/device/custom_ternary.cuh>\n";
  const bool unqualify = vectors.any;
  const auto rewrite = [ternaries, unqualify](std::string_view text, TextScope scope) {
    std::string rewritten =
        rewrite_address_spaces(unqualify ? unqualify_vectors(text) : std::string(text), scope);
    return ternaries ? rewrite_ternaries(rewritten) : rewritten;
  };
  if (vectors.any) {
    out += swizzle_macro(vectors.swizzles);
    out += "#include <kreg/device/custom_vector.cuh>\n";
    if (float16 && !toolkit) out += "#include <kreg/device/custom_vector_float16.cuh>\n";
    if (vector_math) out += "#include <kreg/device/custom_vector_math.cuh>\n";
  }
  if (float16 && !toolkit && (names(spec.body, "half") || names(spec.header, "half"))) {
    out += "typedef kreg::half half;\n";
  }
  // Metal's `bfloat`, unless the header or body declares a `bfloat` of its own.
  const auto declares_bfloat = [](std::string_view text) {
    return text.find(" bfloat;") != std::string_view::npos ||
           text.find("using bfloat ") != std::string_view::npos ||
           text.find("using bfloat=") != std::string_view::npos;
  };
  if ((names(spec.body, "bfloat") || names(spec.header, "bfloat")) &&
      !declares_bfloat(spec.header) && !declares_bfloat(spec.body)) {
    out += "typedef kreg::bfloat16 bfloat;\n";  // Metal's name for bfloat16_t
  }
  // With vectors, the header and the kernel are in the namespace where the Metal names of
  // the vector types hide CUDA's; the header's includes stay at global scope.
  if (vectors.any) {
    HoistedHeader hoisted = hoist_includes(spec.header);
    out += hoisted.includes;
    out += "namespace ";
    out += kVectorScope;
    out += " {\n";
    end_line(out, rewrite(hoisted.rest, TextScope::Program));
  } else if (!spec.header.empty()) {
    end_line(out, rewrite(spec.header, TextScope::Program));
  }
  // MLX's CUDA preamble defines WARP_SIZE; a body that names it without defining it gets it.
  if (names(spec.body, "WARP_SIZE") && !names(spec.header, "WARP_SIZE") &&
      spec.body.find("define WARP_SIZE") == std::string_view::npos) {
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
    const InputParams params = input_params(spec.body, input);
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
    if (!names(spec.body, attribute.name)) continue;
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
  out += "  // body\n";
  const std::string body = rewrite(spec.body, TextScope::Function);
  out += body;
  if (body.empty() || body.back() != '\n') out += '\n';
  out += "}\n";
  if (vectors.any) {
    out += "}  // namespace ";
    out += kVectorScope;
    out += '\n';
  }
  generated.source = std::move(out);
  return generated;
}

}  // namespace

Generated generate(const KernelSpec& spec) {
  // Swizzles of swizzles become single swizzles first, so every later step sees those.
  std::string body = compose_swizzles(spec.body, spec.body, spec.header);
  std::string header = compose_swizzles(spec.header, spec.body, spec.header);
  if (body == spec.body && header == spec.header) return generate_composed(spec);
  KernelSpec composed = spec;
  composed.body = body;
  composed.header = header;
  return generate_composed(composed);
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
