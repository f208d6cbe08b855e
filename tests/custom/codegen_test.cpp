// The generated source, rule by rule (design.md, "Custom kernel code generation"), and that
// every generated source compiles with NVRTC for sm_90. Needs no GPU.
#include "custom/codegen.hpp"
#include "custom/names.hpp"
#include "test_support.hpp"

namespace kreg {
namespace {

using custom::InputKind;
using custom::InputSpec;
using custom::KernelSpec;
using test::contains;

KernelSpec spec_with(std::string_view body, std::vector<InputSpec> inputs) {
  KernelSpec spec;
  spec.name = "k";
  spec.body = body;
  spec.inputs = std::move(inputs);
  spec.outputs = {{"out", Dtype::Float32}};
  return spec;
}

// Compiles a generated source the way a custom kernel's first eval does.
void expect_compiles(const custom::Generated& generated, const std::string& label) {
  static Registry registry(test::sm90_options());
  static int counter = 0;
  const std::string entry = "golden_" + std::to_string(counter++);
  SourceOptions options;
  options.entries.push_back(entry + "=" + generated.expression);
  registry.register_source(entry, generated.source, options);
  try {
    const Binary& binary = registry.compile(entry);
    EXPECT_GT(binary.size(), 0U) << label;
  } catch (const Error& e) {
    ADD_FAILURE() << label << " does not compile:\n"
                  << e.what() << "\n"
                  << lex::numbered(generated.source);
  }
}

TEST(Codegen, SeedExampleIsExactlyThis) {
  const auto generated =
      custom::generate(spec_with("uint i = thread_position_in_grid.x; out[i] = 2 * a[i];",
                                 {{"a", Dtype::Float32, InputKind::Pointer, 4}}));
  EXPECT_EQ(generated.source,
            "// kreg custom kernel 'k'\n"
            "#include <kreg/device/custom_types.cuh>\n"
            "\n"
            "__global__ void kreg_custom_k(\n"
            "    const float* __restrict__ a,\n"
            "    float* __restrict__ out,\n"
            "    const uint3 kreg_grid) {\n"
            "  const uint kreg_x = blockIdx.x * blockDim.x + threadIdx.x;\n"
            "  const uint kreg_y = blockIdx.y * blockDim.y + threadIdx.y;\n"
            "  const uint kreg_z = blockIdx.z * blockDim.z + threadIdx.z;\n"
            "  if (kreg_x >= kreg_grid.x || kreg_y >= kreg_grid.y || kreg_z >= kreg_grid.z) "
            "return;\n"
            "  const uint3 thread_position_in_grid = {kreg_x, kreg_y, kreg_z};\n"
            "  // body\n"
            "uint i = thread_position_in_grid.x; out[i] = 2 * a[i];\n"
            "}\n");
  EXPECT_EQ(generated.expression, "kreg_custom_k");
  expect_compiles(generated, "seed example");
}

TEST(Codegen, PointerSmallAndScalarInputs) {
  const auto generated = custom::generate(
      spec_with("uint i = thread_position_in_grid.x; out[i] = p[i] + s[i % 3] + c;",
                {{"p", Dtype::Float32, InputKind::Pointer, 100},
                 {"s", Dtype::Float64, InputKind::Small, 3},
                 {"c", Dtype::Int32, InputKind::Scalar, 1}}));
  EXPECT_TRUE(contains(generated.source, "const float* __restrict__ p,"));
  EXPECT_TRUE(contains(generated.source, "const kreg::value_array<double, 3> s,"));
  EXPECT_TRUE(contains(generated.source, "const int32_t c,"));
  expect_compiles(generated, "pointer, small and scalar inputs");
}

TEST(Codegen, ShapeStridesAndNdimOnlyWhenNamed) {
  const auto named = custom::generate(spec_with(
      "uint i = thread_position_in_grid.x; out[i] = a[i * a_strides[0]] + a_shape[0] + a_ndim;",
      {{"a", Dtype::Float32, InputKind::Pointer, 100}}));
  EXPECT_TRUE(contains(named.source, "const kreg::value_array<int, 8> a_shape,"));
  EXPECT_TRUE(contains(named.source, "const kreg::value_array<int64_t, 8> a_strides,"));
  EXPECT_TRUE(contains(named.source, "const int a_ndim,"));
  expect_compiles(named, "shape, strides and ndim named");

  // Mentions inside longer identifiers do not count.
  const auto unnamed =
      custom::generate(spec_with("int a_shapes = 1; int my_a_strides = 2; int a_ndim2 = 3;\n"
                                 "out[0] = a[0] + a_shapes + my_a_strides + a_ndim2;",
                                 {{"a", Dtype::Float32, InputKind::Pointer, 100}}));
  EXPECT_FALSE(contains(unnamed.source, "> a_shape,"));
  EXPECT_FALSE(contains(unnamed.source, "> a_strides,"));
  EXPECT_FALSE(contains(unnamed.source, "int a_ndim,"));
  expect_compiles(unnamed, "shape, strides and ndim not named");

  // A 0-d input has none, even when named (the body then fails to compile, as it should).
  const auto scalar = custom::generate(
      spec_with("out[0] = c + c_ndim;", {{"c", Dtype::Float32, InputKind::Scalar, 1}}));
  EXPECT_FALSE(contains(scalar.source, "c_ndim,"));
}

TEST(Codegen, SmallInputsHaveShapeParametersToo) {
  const auto generated = custom::generate(spec_with("out[0] = s[0] + s_shape[0] + s_ndim;",
                                                    {{"s", Dtype::Float32, InputKind::Small, 2}}));
  EXPECT_TRUE(contains(generated.source, "const kreg::value_array<int, 8> s_shape,"));
  EXPECT_TRUE(contains(generated.source, "const int s_ndim,"));
  expect_compiles(generated, "small input with shape");
}

TEST(Codegen, AtomicOutputs) {
  KernelSpec spec = spec_with(
      "uint i = thread_position_in_grid.x;\n"
      "atomic_fetch_add_explicit(&out[a[i]], 1u, memory_order_relaxed);\n"
      "atomicAdd(&out[0], 0u);",
      {{"a", Dtype::Int32, InputKind::Pointer, 100}});
  spec.outputs = {{"out", Dtype::UInt32}};
  spec.atomic_outputs = true;
  const auto generated = custom::generate(spec);
  EXPECT_TRUE(contains(generated.source, "kreg::atomic<uint32_t>* __restrict__ out,"));
  expect_compiles(generated, "atomic outputs");

  spec.outputs = {{"out", Dtype::Float32}};
  spec.body = "atomic_fetch_add_explicit(&out[0], 1.5f, memory_order_relaxed);";
  expect_compiles(custom::generate(spec), "atomic float output");
}

TEST(Codegen, EachMetalAttributeIsDeclaredWhenNamedAndCompiles) {
  for (const custom::Attribute& attribute : custom::attributes()) {
    const std::string body = "out[0] = float(" + std::string(attribute.name) +
                             (attribute.type == "uint3" ? ".x" : "") + ");";
    const auto generated =
        custom::generate(spec_with(body, {{"a", Dtype::Float32, InputKind::Pointer, 100}}));
    const std::string declaration =
        "const " + std::string(attribute.type) + " " + std::string(attribute.name) + " = ";
    EXPECT_TRUE(contains(generated.source, declaration)) << attribute.name;
    for (const custom::Attribute& other : custom::attributes()) {
      if (other.name == attribute.name) continue;
      EXPECT_FALSE(contains(generated.source, " " + std::string(other.name) + " = "))
          << other.name << " is declared for a body that names only " << attribute.name;
    }
    expect_compiles(generated, std::string(attribute.name));
  }
  EXPECT_EQ(custom::attributes().size(), 20U);
}

TEST(Codegen, TemplateArgumentsOfEachKind) {
  KernelSpec spec =
      spec_with("uint i = thread_position_in_grid.x; out[i] = B ? T(a[i] * N) : T(0);",
                {{"a", Dtype::Float32, InputKind::Pointer, 100}});
  spec.template_args = {{"T", Dtype::Float32}, {"N", -3}, {"B", true}};
  const auto generated = custom::generate(spec);
  EXPECT_TRUE(contains(generated.source, "template <typename T, int N, bool B>\n__global__ void"));
  EXPECT_EQ(generated.expression, "kreg_custom_k<float, -3, true>");
  expect_compiles(generated, "template arguments");

  spec.template_args = {{"T", Dtype::BFloat16}, {"N", 7}, {"B", false}};
  const auto other = custom::generate(spec);
  EXPECT_EQ(other.expression, "kreg_custom_k<kreg::bfloat16, 7, false>");
  expect_compiles(other, "template arguments (bfloat16)");
}

TEST(Codegen, HeaderComesBeforeTheKernel) {
  KernelSpec spec =
      spec_with("out[0] = twice(a[0]);", {{"a", Dtype::Float32, InputKind::Pointer, 100}});
  spec.header = "__device__ inline float twice(float x) { return 2 * x; }";
  const auto generated = custom::generate(spec);
  const std::size_t header = generated.source.find("twice(float x)");
  ASSERT_NE(header, std::string::npos);
  EXPECT_LT(header, generated.source.find("__global__"));
  expect_compiles(generated, "header");
}

TEST(Codegen, EveryDtypeCompilesAsInputAndOutput) {
  for (int d = 0; d <= static_cast<int>(Dtype::Float64); ++d) {
    const auto dtype = static_cast<Dtype>(d);
    KernelSpec spec =
        spec_with("uint i = thread_position_in_grid.x; out[i] = a[i]; o2[0] = s[0] + c;",
                  {{"a", dtype, InputKind::Pointer, 100},
                   {"s", dtype, InputKind::Small, 5},
                   {"c", dtype, InputKind::Scalar, 1}});
    spec.outputs = {{"out", dtype}, {"o2", Dtype::Float64}};
    expect_compiles(custom::generate(spec), to_string(dtype));
  }
}

TEST(Codegen, Complex64InputsOutputsAndArithmetic) {
  KernelSpec spec = spec_with(
      "uint i = thread_position_in_grid.x;\n"
      "complex64_t z = a[i] * complex64_t(f[i]) + s[1] / c - conj(a[i]);\n"
      "out[i] = z;\n"
      "o2[i] = abs(z) + z.real + imag(z);\n",
      {{"a", Dtype::Complex64, InputKind::Pointer, 100},
       {"f", Dtype::Float32, InputKind::Pointer, 100},
       {"s", Dtype::Complex64, InputKind::Small, 2},
       {"c", Dtype::Complex64, InputKind::Scalar, 1}});
  spec.outputs = {{"out", Dtype::Complex64}, {"o2", Dtype::Float32}};
  const custom::Generated generated = custom::generate(spec);
  EXPECT_NE(generated.source.find("#include <kreg/device/custom_complex.cuh>"), std::string::npos);
  expect_compiles(generated, "complex64");
}

TEST(Codegen, MetalStyleBodyCompilesUnchanged) {
  KernelSpec spec = spec_with(
      "uint lane = thread_index_in_simdgroup;\n"
      "uint group = simdgroup_index_in_threadgroup;\n"
      "float v = a[thread_position_in_grid.x];\n"
      "float total = simd_sum(v);\n"
      "float top = simd_max(v);\n"
      "float down = simd_shuffle_down(v, 1);\n"
      "threadgroup_barrier(mem_flags::mem_threadgroup);\n"
      "float16_t h = float16_t(total);\n"
      "bfloat16_t b = bfloat16_t(top);\n"
      "if (lane == 0) out[group] = float(h) + float(b) + down;\n",
      {{"a", Dtype::Float32, InputKind::Pointer, 100}});
  expect_compiles(custom::generate(spec), "Metal-style body");
}

TEST(Codegen, IncludesOnlyThePreamblePartsTheKernelUses) {
  auto includes = [](const custom::Generated& g, const char* part) {
    return contains(g.source, std::string("#include <kreg/device/") + part + ".cuh>");
  };
  const InputSpec a{"a", Dtype::Float32, InputKind::Pointer, 100};
  const auto plain = custom::generate(spec_with("out[0] = a[0];", {a}));
  EXPECT_TRUE(includes(plain, "custom_types"));
  for (const char* part : {"custom_float16", "custom_barrier", "custom_simd", "custom_atomic",
                           "custom_math", "custom_utils"}) {
    EXPECT_FALSE(includes(plain, part)) << part;
  }
  EXPECT_TRUE(
      includes(custom::generate(spec_with("out[0] = simd_sum(a[0]);", {a})), "custom_simd"));
  EXPECT_TRUE(includes(
      custom::generate(spec_with("threadgroup_barrier(mem_flags::mem_none); out[0] = 1;", {a})),
      "custom_barrier"));
  EXPECT_TRUE(
      includes(custom::generate(spec_with("out[0] = float16_t(a[0]);", {a})), "custom_float16"));
  EXPECT_TRUE(includes(custom::generate(spec_with(
                           "out[0] = a[0];", {{"h", Dtype::BFloat16, InputKind::Pointer, 100}})),
                       "custom_float16"));
  EXPECT_TRUE(
      includes(custom::generate(spec_with("out[0] = metal::exp(a[0]);", {a})), "custom_math"));
  EXPECT_TRUE(
      includes(custom::generate(spec_with("out[0] = a[ceildiv(3, 2)];", {a})), "custom_utils"));
  KernelSpec atomic = spec_with("atomicAdd(&out[0], 1.0f);", {a});
  atomic.atomic_outputs = true;
  const auto with_atomics = custom::generate(atomic);
  EXPECT_TRUE(includes(with_atomics, "custom_atomic"));
  expect_compiles(with_atomics, "atomics");
}

TEST(Codegen, TheWholePreambleCompilesInAHandWrittenSource) {
  custom::Generated whole;
  whole.source =
      "#include <kreg/device/custom.cuh>\n"
      "__global__ void all_parts(kreg::atomic<float>* out, const float16_t* h) {\n"
      "  float v = simd_sum(float(h[threadIdx.x])) + metal::exp(h[ceildiv(threadIdx.x, 2)]);\n"
      "  threadgroup_barrier(mem_flags::mem_threadgroup);\n"
      "  atomic_fetch_add_explicit(&out[0], v, memory_order_relaxed);\n"
      "}\n";
  whole.expression = "all_parts";
  expect_compiles(whole, "kreg/device/custom.cuh");
}

}  // namespace
}  // namespace kreg
