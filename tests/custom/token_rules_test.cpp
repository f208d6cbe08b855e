// Custom-kernel text read as C++ tokens: what looks like a Metal word in a literal, a comment
// or a number is none, branches that each open a brace count once, and a plain CUDA body's
// own names that are Metal words stay its own. Each is checked as text, and compiled for
// sm_90 through CustomKernel. Needs no GPU.
#include "custom/codegen.hpp"
#include "custom/rewrite_text.hpp"
#include "test_support.hpp"

#include <algorithm>
#include <string>

namespace kreg {
namespace {

using custom::TextScope;
using test::contains;
using test::custom_compile_error;

std::string compile_error(const std::string& body, const std::string& header = "",
                          Dtype out = Dtype::Float32) {
  CustomKernelOptions options;
  options.header = header;
  const CustomKernel kernel("tokens", {"a"}, {"out"}, body, options);
  return custom_compile_error(kernel, {Array::from_data(std::vector<float>(256, 1.0f), {256})},
                              {OutputSpec{{256}, out}});
}

custom::KernelSpec spec_of(std::string body, std::string header = "") {
  static std::vector<std::string> keep;
  keep.push_back(std::move(body));
  const std::string_view b = keep.back();
  keep.push_back(std::move(header));
  custom::KernelSpec spec;
  spec.name = "k";
  spec.body = b;
  spec.header = keep.back();
  spec.inputs.push_back({"a", Dtype::Float32, custom::InputKind::Pointer, 256});
  spec.outputs.emplace_back("out", Dtype::Float32);
  return spec;
}

TEST(TokenRules, RawStringsHideWhatTheyHold) {
  const std::string body =
      "const char* s = R\"x(threadgroup float t[4]; c ? h : f; simd_sum(1) )\" )x\";\n"
      "out[thread_position_in_grid.x] = a[thread_position_in_grid.x] + float(s[0]);\n";
  EXPECT_EQ(test::address_spaces(body, TextScope::Function), body);
  EXPECT_EQ(test::ternaries(body), body);
  const std::string source = custom::generate(spec_of(body)).source;
  EXPECT_FALSE(contains(source, "custom_simd")) << source;
  EXPECT_FALSE(contains(source, "custom_ternary")) << source;
  EXPECT_EQ(compile_error(body), "");
}

TEST(TokenRules, QuotesInCommentsOpenNoLiteral) {
  const std::string body =
      "// don't stop here: the rest is code\n"
      "/* a \"quote */ threadgroup float t[256];\n"
      "t[thread_position_in_threadgroup.x] = a[thread_position_in_grid.x];\n"
      "threadgroup_barrier(mem_flags::mem_threadgroup);\n"
      "out[thread_position_in_grid.x] = t[255 - thread_position_in_threadgroup.x];\n";
  EXPECT_TRUE(contains(test::address_spaces(body, TextScope::Function), "__shared__ float t"));
  EXPECT_EQ(compile_error(body), "");
  // A word in a comment brings nothing.
  const std::string source = custom::generate(spec_of("// simd_sum, half, M_PI_F, a_shape\n"
                                                      "out[0] = a[0];\n"))
                                 .source;
  EXPECT_FALSE(contains(source, "custom_simd")) << source;
  EXPECT_FALSE(contains(source, "custom_float16")) << source;
  EXPECT_FALSE(contains(source, "custom_constants")) << source;
  EXPECT_FALSE(contains(source, "a_shape,")) << source;
}

TEST(TokenRules, BranchesThatEachOpenABraceCountOnce) {
  // After the conditional blocks the table is at program scope again: constant memory.
  const std::string header =
      "inline float pick(float x) {\n"
      "#if defined(KREG_NEVER)\n"
      "  if (x > 0) {\n"
      "#else\n"
      "  if (x >= 0) {\n"
      "#endif\n"
      "    return x;\n"
      "  }\n"
      "  return -x;\n"
      "}\n"
      "constant float kTable[2] = {1.0f, 2.0f};\n";
  EXPECT_TRUE(
      contains(test::address_spaces(header, TextScope::Program), "__constant__ float kTable[2]"));
  EXPECT_EQ(compile_error("uint i = thread_position_in_grid.x;\n"
                          "out[i] = pick(a[i]) * kTable[i % 2];\n",
                          header),
            "");
}

TEST(TokenRules, APlainCudaBodysOwnNamesStay) {
  // `threadgroup` and `device` as variables, a struct member `xyz`, and `half` as a count.
  const std::string header = "struct P { float xyz; float xy; };\n";
  const std::string body =
      "int threadgroup = 2;\n"
      "int device = threadgroup + 1;\n"
      "P p; p.xyz = 1.0f; p.xy = 2.0f;\n"
      "float xyz = p.xyz + p.xy;\n"
      "int half = device / 2;\n"
      "out[thread_position_in_grid.x] = a[thread_position_in_grid.x] * xyz + half;\n";
  EXPECT_EQ(test::address_spaces(body, TextScope::Function), body);
  EXPECT_EQ(test::composed(body, header), body);
  EXPECT_EQ(compile_error(body, header), "");
}

TEST(TokenRules, DigitSeparatorsAndSuffixesAreNumbers) {
  const std::string body =
      "const uint n = 1'024u;\n"
      "const float scale = 0.5'0f;\n"
      "threadgroup float t[256];\n"
      "t[thread_position_in_threadgroup.x] = a[thread_position_in_grid.x] * scale;\n"
      "threadgroup_barrier(mem_flags::mem_threadgroup);\n"
      "out[thread_position_in_grid.x] = t[thread_position_in_threadgroup.x] + float(n % 7u);\n";
  EXPECT_TRUE(contains(test::address_spaces(body, TextScope::Function), "__shared__ float t"));
  EXPECT_EQ(compile_error(body), "");
}

// Arrays past the 48 KiB a kernel may hold statically are carved from dynamic shared memory,
// one statement per declarator on the declaration's lines; scalars stay static.
TEST(TokenRules, ThreadgroupArraysCanMoveToDynamicSharedMemory) {
  custom::KernelSpec spec = spec_of(
      "uint t = thread_position_in_threadgroup.x;\n"
      "threadgroup float tile[16384], other[4];\n"
      "threadgroup float4 quads[8]\n  [8];\n"
      "threadgroup uint count;\n"
      "threadgroup float* view = tile;\n"
      "tile[t] = a[t]; other[0] = 1; count = 2;\n"
      "out[thread_position_in_grid.x] = view[16383 - t] + quads[0][0].x + other[0] + count;\n");
  spec.dynamic_threadgroup = true;
  const custom::Generated g = custom::generate(spec);
  EXPECT_EQ(g.carved_arrays, 3U);
  EXPECT_TRUE(contains(g.source, "#include <kreg/device/custom_threadgroup.cuh>")) << g.source;
  EXPECT_TRUE(contains(g.source,
                       "float (&tile)[16384] = *::kreg::detail::carve<float[16384]>(kreg_tg_end); "
                       "float (&other)[4] = *::kreg::detail::carve<float[4]>(kreg_tg_end);\n"))
      << g.source;
  EXPECT_TRUE(
      contains(g.source, "float4 (&quads)[8]\n  [8] = *::kreg::detail::carve<float4[8]   [8]>"))
      << g.source;
  EXPECT_TRUE(contains(g.source, "__shared__ uint count;")) << g.source;
  EXPECT_TRUE(contains(g.source, "float* view = tile;")) << g.source;
  // The body keeps its line count, so compiler messages keep their line numbers.
  spec.dynamic_threadgroup = false;
  const custom::Generated plain = custom::generate(spec);
  EXPECT_EQ(
      std::count(g.source.begin(), g.source.end(), '\n'),
      std::count(plain.source.begin(), plain.source.end(), '\n') + 2);  // the part, kreg_tg_end
  Registry registry(test::sm90_options());
  SourceOptions options;
  options.entries.push_back("carved=" + g.expression);
  registry.register_source("carved", g.source, options);
  EXPECT_NO_THROW(registry.compile("carved"));
}

}  // namespace
}  // namespace kreg
