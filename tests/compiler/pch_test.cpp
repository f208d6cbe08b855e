// NVRTC's automatic precompiled headers (compiler/pch.hpp): when kreg asks for one, and that a
// binary made with one is the binary made without.
#include "compiler/pch.hpp"
#include "compiler/nvrtc_compiler.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <string>

namespace kreg::compiler {
namespace {

TEST(PchPrefix, IsTheLeadingIncludesDefinesAndCommentsWhenOneIsNotKregs) {
  EXPECT_EQ(pch::leading_includes("#include <cuda_fp16.h>\n__global__ void k() {}\n"),
            "#include <cuda_fp16.h>\n");
  EXPECT_EQ(
      pch::leading_includes("// fp16\n\n#define N 4\n  #  include <cub/cub.cuh>\n"
                            "#include <kreg/device/half.cuh>\nint x;\n"),
      "// fp16\n\n#define N 4\n  #  include <cub/cub.cuh>\n#include <kreg/device/half.cuh>\n");
  // Only kreg's own small headers: no PCH.
  EXPECT_EQ(pch::leading_includes("#include <kreg/device/kernel.cuh>\nint x;\n"), "");
  EXPECT_EQ(pch::leading_includes("#include \"kreg/device/kernel.cuh\"\nint x;\n"), "");
  // A conditional, or code, ends the prefix; what follows is not looked at.
  EXPECT_EQ(pch::leading_includes("#if 1\n#include <cuda_fp16.h>\n#endif\n"), "");
  EXPECT_EQ(pch::leading_includes("int x;\n#include <cuda_fp16.h>\n"), "");
  // A line continued with a backslash, or one that may open a comment, ends it before.
  EXPECT_EQ(pch::leading_includes("#include <cuda_fp16.h>\n#define A \\\n  1\n"),
            "#include <cuda_fp16.h>\n");
  EXPECT_EQ(pch::leading_includes("#include <cuda_fp16.h>\n// a \\\n#include <x.h>\n"),
            "#include <cuda_fp16.h>\n");
  EXPECT_EQ(pch::leading_includes("#include <cuda_fp16.h> /* a\n b */\n"), "");
  // A last line without its newline is not taken.
  EXPECT_EQ(pch::leading_includes("#include <cuda_fp16.h>"), "");
  EXPECT_EQ(pch::leading_includes(""), "");
}

// `source` must outlive the request, which only views it.
Request request(const std::string& name, const std::string& source) {
  Request r;
  r.program_name = name;
  r.source = source;
  r.arch = "sm_90";
  r.options = {"-I" + toolkit_include_dir()};
  return r;
}

// The leading includes are what a PCH covers; the rest uses internal-linkage names, whose
// spelling in the image must not depend on the PCH.
const std::string kHalfSource =
    "#define KREG_PCH_TEST_SAME_BYTES 1\n"
    "#include <cuda_fp16.h>\n"
    "namespace {\n"
    "__device__ __noinline__ float twice(float x) { return 2.0f * x; }\n"
    "__device__ int table[4] = {1, 2, 3, 4};\n"
    "}\n"
    "extern \"C\" __global__ void half_sum(const __half* a, float* out) {\n"
    "  out[threadIdx.x] = twice(__half2float(a[threadIdx.x])) + table[threadIdx.x % 4];\n"
    "}\n";

TEST(Pch, TheSecondCompileOfAPrefixMakesItLaterOnesUseItAndTheBytesStayTheSame) {
  if (toolkit_include_dir().empty()) GTEST_SKIP() << "no toolkit include folder";
  const Request r = request("half_sum.cu", kHalfSource);
  const Result first = compile(r);
  ASSERT_TRUE(first.ok) << first.log;
  EXPECT_FALSE(first.pch_created) << "a process that compiles one heavy kernel pays no PCH";
  EXPECT_FALSE(first.pch_used);
  const Result second = compile(r);
  ASSERT_TRUE(second.ok) << second.log;
  EXPECT_TRUE(second.pch_created);
  const Result third = compile(r);
  ASSERT_TRUE(third.ok) << third.log;
  EXPECT_TRUE(third.pch_used);
  EXPECT_FALSE(third.pch_created);

  EXPECT_EQ(second.image, first.image);
  EXPECT_EQ(third.image, first.image);
  // NVRTC's trace leaves out what came from the PCH; kreg adds what the PCH was made from.
  ASSERT_TRUE(third.files_known);
  const std::string fp16 = toolkit_include_dir() + "/cuda_fp16.h";
  EXPECT_NE(std::find(third.files_read.begin(), third.files_read.end(), fp16),
            third.files_read.end());
  for (const std::string& file : first.files_read) {
    EXPECT_NE(std::find(third.files_read.begin(), third.files_read.end(), file),
              third.files_read.end())
        << file << " read without a PCH, missing with one";
  }
  // NVRTC's messages about the PCH are kreg's business, not the log's.
  EXPECT_EQ(third.log.find("precompiled header"), std::string::npos) << third.log;
  EXPECT_EQ(second.log.find("precompiled header"), std::string::npos) << second.log;
}

TEST(Pch, DiagnosticsKeepTheSourcesNameAndLines) {
  if (toolkit_include_dir().empty()) GTEST_SKIP() << "no toolkit include folder";
  const std::string prefix = "#define KREG_PCH_TEST_LINES 1\n#include <cuda_fp16.h>\n";
  const Result warm = compile(
      request("lines.cu", prefix + "extern \"C\" __global__ void ok(float* p) { p[0] = 1; }\n"));
  ASSERT_TRUE(warm.ok) << warm.log;
  const std::string broken =
      prefix + "\nextern \"C\" __global__ void bad(float* p) { p[0] = q; }\n";
  for (int i = 0; i < 2; ++i) {
    const Result r = compile(request("lines.cu", broken));
    EXPECT_FALSE(r.ok);
    EXPECT_NE(r.log.find("lines.cu(4)"), std::string::npos) << r.log;
    EXPECT_NE(r.log.find("\"q\""), std::string::npos) << r.log;
  }
}

TEST(Pch, KregPchZeroTurnsItOff) {
  if (toolkit_include_dir().empty()) GTEST_SKIP() << "no toolkit include folder";
  // NOLINTNEXTLINE(concurrency-mt-unsafe): this test's process runs no other thread
  ::setenv("KREG_PCH", "0", 1);
  const std::string source =
      "#define KREG_PCH_TEST_OFF 1\n#include <cuda_fp16.h>\n"
      "extern \"C\" __global__ void off(float* p) { p[0] = 1; }\n";
  const Request r = request("off.cu", source);
  for (int i = 0; i < 3; ++i) {
    const Result result = compile(r);
    ASSERT_TRUE(result.ok) << result.log;
    EXPECT_FALSE(result.pch_created || result.pch_used) << "compile " << i;
  }
  // NOLINTNEXTLINE(concurrency-mt-unsafe): as above
  ::unsetenv("KREG_PCH");
}

}  // namespace
}  // namespace kreg::compiler
