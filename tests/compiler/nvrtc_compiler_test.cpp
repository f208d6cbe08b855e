// compiler::compile: what it reports besides the image.
#include "compiler/nvrtc_compiler.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace kreg::compiler {
namespace {

Request request(std::string_view source) {
  Request r;
  r.program_name = "traced.cu";
  r.source = source;
  r.arch = "sm_90";
  r.headers = {{"kreg/traced.cuh", "#pragma once\n#define KREG_TRACED 3\n"}};
  if (!toolkit_include_dir().empty()) r.options = {"-I" + toolkit_include_dir()};
  return r;
}

bool has(const std::vector<std::string>& files, const std::string& file) {
  return std::find(files.begin(), files.end(), file) != files.end();
}

TEST(NvrtcCompiler, ReportsEveryFileItRead) {
  if (toolkit_include_dir().empty()) GTEST_SKIP() << "no toolkit include folder";
  const Result r =
      compile(request("#include <kreg/traced.cuh>\n#include <vector_types.h>\n"
                      "extern \"C\" __global__ void traced(int* p) { p[0] = KREG_TRACED; }\n"));
  ASSERT_TRUE(r.ok) << r.log;
  ASSERT_TRUE(r.files_known);
  EXPECT_TRUE(has(r.files_read, "kreg/traced.cuh"));
  // vector_types.h includes others in turn: nested reads are listed too.
  EXPECT_TRUE(has(r.files_read, toolkit_include_dir() + "/vector_types.h"));
  EXPECT_GT(r.files_read.size(), 3u);
}

TEST(NvrtcCompiler, AFailedCompileStillReportsWhatItRead) {
  const Result r =
      compile(request("#include <kreg/traced.cuh>\nextern \"C\" __global__ void traced(int* p) { "
                      "p[0] = nope; }\n"));
  EXPECT_FALSE(r.ok);
  ASSERT_TRUE(r.files_known);
  EXPECT_TRUE(has(r.files_read, "kreg/traced.cuh"));
}

TEST(NvrtcCompiler, ABadOptionLeavesTheReadsUnknown) {
  Request r = request("extern \"C\" __global__ void traced(int* p) { p[0] = 1; }\n");
  r.options.emplace_back("-not-an-option");
  const Result result = compile(r);
  EXPECT_FALSE(result.ok);
  EXPECT_FALSE(result.files_known);
}

TEST(NvrtcCompiler, DiagnosticsAndFileNameAreTheProgramsOwn) {
  const Result r =
      compile(request("\n\nextern \"C\" __global__ void traced(int* p) {\n"
                      "  static_assert(sizeof(__FILE__) == sizeof(\"traced.cu\"), \"__FILE__\");\n"
                      "  p[0] = nope;\n}\n"));
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.log.find("traced.cu(5): error"), std::string::npos) << r.log;
  EXPECT_EQ(r.log.find("__FILE__"), std::string::npos) << r.log;
  EXPECT_EQ(r.log.find("/dev/null"), std::string::npos) << r.log;
}

TEST(NvrtcCompiler, IdentityIsTheLibrarysBuildIdNotItsPathOrTime) {
  // A path or an mtime would give one library many identities (lib vs lib64, a link,
  // another install of the same toolkit); tests/cli/build_cache_test.sh runs a copy of the
  // library from another folder and is served what the original built.
  const std::string id = identity();
  const std::string prefix = "nvrtc " + version() + " build-id ";
  ASSERT_EQ(id.substr(0, prefix.size()), prefix) << id;
  const std::string build_id = id.substr(prefix.size());
  EXPECT_GE(build_id.size(), 16u) << id;
  EXPECT_EQ(build_id.find_first_not_of("0123456789abcdef"), std::string::npos) << id;
  EXPECT_EQ(id, identity());
}

TEST(NvrtcCompiler, AByteOrderMarkIsAllowed) {
  const Result r =
      compile(request("\xEF\xBB\xBF"
                      "extern \"C\" __global__ void traced(int* p) { p[0] = 1; }\n"));
  EXPECT_TRUE(r.ok) << r.log;
}

}  // namespace
}  // namespace kreg::compiler
