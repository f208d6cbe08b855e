#include "registry/source.hpp"

#include "test_support.hpp"

namespace kreg::registry {
namespace {

using test::contains;
using test::expect_error;

std::vector<std::string> names(const Source& s) {
  std::vector<std::string> out;
  for (const auto& e : s.entries)
    out.push_back(e.name + (e.expression.empty() ? "" : "=" + e.expression));
  return out;
}

TEST(Source, FindsExternCKernelsInEveryForm) {
  Source s = parse_source("s", R"(
    extern "C" __global__ void plain(int* p) {}
    extern "C" __global__ __launch_bounds__(256, 2) void bounded(int* p) {}
    extern "C" __launch_bounds__(128) __global__ void bounds_first(float* p) {}
    extern "C" {
      __global__ void in_block(int n) {}
      __device__ int helper(int x) { return x; }
    }
    __global__ void cpp_linkage(int* p) {}
    extern "C" __device__ void device_only() {}
    // extern "C" __global__ void commented_out() {}
    /* extern "C" __global__ void also_commented() {} */
    const char* text = "extern \"C\" __global__ void in_string() {}";
  )",
                          {});
  EXPECT_EQ(names(s), (std::vector<std::string>{"plain", "bounded", "bounds_first", "in_block"}));
}

TEST(Source, AnnotationsAndOptions) {
  Source s = parse_source(
      "t", R"(// kreg:entry fill_f32=fill<float>
// kreg:entry fill_i32 = fill<int>
// kreg:options -use_fast_math  -maxrregcount=32
// kreg:arch-specific
template <class T> __global__ void fill(T* p, T v) { p[threadIdx.x] = v; }
)",
      SourceOptions{.entries = {"fill_f64=fill<double>"}, .compile_options = {"-lineinfo"}});
  EXPECT_EQ(names(s), (std::vector<std::string>{"fill_f32=fill<float>", "fill_i32=fill<int>",
                                                "fill_f64=fill<double>"}));
  EXPECT_EQ(s.options,
            (std::vector<std::string>{"-use_fast_math", "-maxrregcount=32", "-lineinfo"}));
  EXPECT_TRUE(s.arch_specific);
}

TEST(Source, ReadsConstantDeclarations) {
  Source s = parse_source("c", R"(
    #include <kreg/kernel.cuh>
    KREG_CONSTANT(int, block, 300);
    KREG_CONSTANT_DEFAULT(bool, has_mask, 200, (1 > 2));
    // KREG_CONSTANT(int, ghost, 999);
    extern "C" __global__ void k() {}
  )",
                          {});
  ASSERT_EQ(s.constants.size(), 2u);
  EXPECT_EQ(s.constants[0].index, 200);
  EXPECT_EQ(s.constants[0].name, "has_mask");
  EXPECT_EQ(s.constants[0].type, ConstantType::Bool);
  EXPECT_TRUE(s.constants[0].has_default);
  EXPECT_EQ(s.constants[1].index, 300);
  EXPECT_EQ(s.constants[1].type, ConstantType::Int);
  EXPECT_FALSE(s.constants[1].has_default);
  EXPECT_TRUE(s.needs_constants());
  EXPECT_TRUE(s.kreg_headers_only);
}

TEST(Source, ToleratesWhatValidCudaContains) {
  // Declared then defined; a constant in both #if branches; digit separators next to a
  // commented-out kernel; CRLF line endings with a continued macro; prose after "kreg:".
  Source s =
      parse_source("ok",
                   "// kreg: prose, not a directive\r\n"
                   "#include <kreg/kernel.cuh>\r\n"
                   "#define MAKE(T) extern \"C\" __global__ void add_##T( \\\r\n"
                   "    T* p) {}\r\n"
                   "#if defined(WIDE)\r\nKREG_CONSTANT(int, n, 3);\r\n"
                   "#else\r\nKREG_CONSTANT_DEFAULT(int, n, 3, 1);\r\n#endif\r\n"
                   "constexpr int big = 1'000'000; /* extern \"C\" __global__ void gone() {} */\r\n"
                   "extern \"C\" __global__ void k(int* p);\r\n"
                   "extern \"C\" __global__ void k(int* p) { p[0] = n; }\r\n",
                   {});
  EXPECT_EQ(names(s), (std::vector<std::string>{"k"}));
  ASSERT_EQ(s.constants.size(), 1u);
  EXPECT_FALSE(s.constants[0].has_default);  // required in one branch: required
}

// What a declaration is comes from tokens: text inside raw strings, literals and block
// comments declares nothing, and an annotation is a line comment that starts its line.
TEST(Source, ReadsTokensNotText) {
  Source s = parse_source("tokens",
                          "const char* a = R\"(\nextern \"C\" __global__ void fake() {}\n"
                          "KREG_CONSTANT(int, q, 9);\n// kreg:options -DRAW\n)\";\n"
                          "/*\n// kreg:options -DCOMMENTED\n*/\n"
                          "int x = 1; // kreg:options -DAFTER_CODE\n"
                          "const char c = u8'x'; const char* b = \"// kreg:options -DSTRING\";\n"
                          "// kreg:options -DREAL\n"
                          "extern \"C\" __global__ void after_literals(int* p) {}\n",
                          {});
  EXPECT_EQ(names(s), (std::vector<std::string>{"after_literals"}));
  EXPECT_TRUE(s.constants.empty());
  EXPECT_EQ(s.options, (std::vector<std::string>{"-DREAL"}));
}

TEST(Source, ToolkitIncludesTurnOffMinimal) {
  const std::string k = "\nextern \"C\" __global__ void k() {}";
  for (const std::string include : {"#include <cuda_fp16.h>", "%:include <cuda_fp16.h>",
                                    "#inc\\\nlude <cuda_fp16.h>", "  #  include \"cuda_fp16.h\""}) {
    EXPECT_FALSE(parse_source("h", include + k, {}).kreg_headers_only) << include;
  }
  EXPECT_TRUE(parse_source("h", "#include <kreg/kernel.cuh>" + k, {}).kreg_headers_only);
}

TEST(Source, AsksWhetherFilesExistOutsideTheIncludePath) {
  const std::string k = "\nextern \"C\" __global__ void k() {}";
  for (const std::string probe :
       {"#if __has_include(\"/etc/hosts\")\n#endif", "#if __has_include(</etc/hosts>)\n#endif",
        "#if __has_include(<../../x.h>)\n#endif", "#if __has_include(<a/../../x.h>)\n#endif",
        "#if __has_include(HEADER)\n#endif", "#if __has_include_next(\"/x.h\")\n#endif",
        "#if __has_inc\\\nlude(\"/x.h\")\n#endif", "#if __has_include (\n#endif",
        "#define PROBE __has_include\n#if PROBE(\"/x.h\")\n#endif"}) {
    EXPECT_TRUE(parse_source("p", probe + k, {}).probes_files) << probe;
  }
  for (const std::string probe :
       {"#if __has_include(<cuda_fp8.h>)\n#endif",
        "#if __has_include( \"cuda/std/cstdint\" )\n#endif", "// __has_include(\"/etc/hosts\")",
        "int my__has_include = 0;", "#if defined(__has_include)\n#endif",
        "#ifdef __has_include\n#endif", "#  ifndef __has_include_next\n#endif"}) {
    EXPECT_FALSE(parse_source("p", probe + k, {}).probes_files) << probe;
  }
}

TEST(Source, ANulByteIsRefused) {
  // NVRTC stops reading at the NUL; `after` would be registered but never compiled.
  const std::string text = std::string("extern \"C\" __global__ void before() {}\n") + '\0' +
                           "extern \"C\" __global__ void after() {}\n";
  const std::string message =
      expect_error(ErrorCode::InvalidArgument, [&] { parse_source("nul", text, {}); });
  EXPECT_TRUE(contains(message, "NUL byte at offset 39")) << message;
}

TEST(Source, MalformedSourcesAreInvalidArguments) {
  const std::string k = "\nextern \"C\" __global__ void k() {}\n";
  struct Case {
    std::string text;
    std::string expect;
  } cases[] = {
      {"__global__ void not_c() {}", "declares no kernel entry"},
      {"KREG_CONSTANT(float, f, 1);" + k, "must be bool or int"},
      {"KREG_CONSTANT(int, f);" + k, "needs 3 arguments"},
      {"KREG_CONSTANT_DEFAULT(int, f, 1);" + k, "needs 4 arguments"},
      {"KREG_CONSTANT(int, f, -1);" + k, "non-negative integer literal"},
      {"KREG_CONSTANT(int, f, N);" + k, "non-negative integer literal"},
      {"KREG_CONSTANT(int, a, 1); KREG_CONSTANT(bool, b, 1);" + k, "share index 1"},
      {"// kreg:entyr x=y<int>" + k, "unknown annotation 'kreg:entyr'"},
      {"// kreg:entry 9bad=y<int>" + k, "not a valid entry name"},
      {"// kreg:entry k=other<int>" + k, "declared twice, as different functions"},
      {"KREG_CONSTANT(int, f, 0300);" + k, "non-negative integer literal"},
      {"KREG_CONSTANT(int, f, 0x10);" + k, "non-negative integer literal"},
      {"KREG_CONSTANT(int, a, 1); KREG_CONSTANT(int, b, 1);" + k, "share index 1"},
      {"", "the text is empty"},
      {"// kreg:specialization 1:x" + k, "not a constant set"},
      {"// kreg:specialization 1:i2" + k, "does not fit"},
  };
  for (const Case& c : cases) {
    std::string message =
        expect_error(ErrorCode::InvalidArgument, [&] { parse_source("bad", c.text, {}); });
    EXPECT_TRUE(contains(message, c.expect)) << message;
    EXPECT_TRUE(contains(message, "'bad'") || c.text.empty()) << message;
  }
  expect_error(ErrorCode::InvalidArgument, [&] { parse_source("", k, {}); });
}

}  // namespace
}  // namespace kreg::registry
