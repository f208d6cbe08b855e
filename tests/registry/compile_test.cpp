// Compiling with NVRTC: needs no GPU.
#include "test_support.hpp"

namespace kreg {
namespace {

using test::contains;
using test::expect_error;

// Built-ins with required constants get a valid set here.
Constants constants_for(const std::string& source) {
  if (source == "powi") return Constants{.ints = {{300, 3}}};
  return {};
}

class BuiltinCompile : public ::testing::TestWithParam<std::string> {};

TEST_P(BuiltinCompile, EveryBuiltinSourceCompiles) {
  RegistryOptions options = test::sm90_options();
  options.arch = GetParam();
  Registry reg(options);
  ASSERT_GE(reg.source_count(), 3u);
  for (const std::string& source : reg.source_names()) {
    // An arch-specific source (wgmma) compiles for the `a` variant, where there is one.
    const bool a_variant = reg.source_info(source).arch_specific &&
                           std::stoi(GetParam().substr(GetParam().find('_') + 1)) >= 90;
    const std::string arch = a_variant ? GetParam() + "a" : GetParam();
    for (const std::string& entry : reg.entry_names(source)) {
      const Binary& binary = reg.compile(entry, constants_for(source));
      EXPECT_EQ(binary.arch(), arch);
      EXPECT_EQ(binary.source_name(), source);
      EXPECT_EQ(binary.origin(), Origin::Compiled);
      EXPECT_GT(binary.size(), 1000u);
      // A CUBIN is an ELF image.
      ASSERT_GE(binary.image().size(), 4u);
      EXPECT_EQ(std::string(binary.image().data() + 1, 3), "ELF");
      EXPECT_FALSE(binary.symbol(entry).empty()) << entry;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Archs, BuiltinCompile, ::testing::Values("sm_80", "sm_90"));

TEST(Compile, AllEntriesOfASourceShareOneCompile) {
  Registry reg(test::sm90_options());
  const Binary& add = reg.compile("elementwise_add_f32");
  const Binary& mul = reg.compile("elementwise_mul_f32");
  EXPECT_EQ(&add, &mul);
  EXPECT_EQ(reg.stats().compiles, 1u);
  EXPECT_EQ(add.key(), "elementwise@sm_90");
}

TEST(Compile, TemplateEntriesGetLoweredSymbols) {
  Registry reg(test::sm90_options());
  const Binary& binary = reg.compile("axpy_f32");
  EXPECT_EQ(binary.symbol("axpy_f32").substr(0, 2), "_Z");
  EXPECT_NE(binary.symbol("axpy_f32"), binary.symbol("axpy_f64"));
  EXPECT_EQ(reg.stats().compiles, 1u);
}

TEST(Compile, DistinctConstantsGiveDistinctBinaries) {
  Registry reg(test::sm90_options());
  const Binary& four = reg.compile("powi_f32", {.ints = {{300, 4}}});
  const Binary& eight = reg.compile("powi_f32", {.ints = {{300, 8}}});
  const Binary& four_again = reg.compile("powi_f32", {.ints = {{300, 4}}});
  EXPECT_NE(&four, &eight);
  EXPECT_EQ(&four, &four_again);
  EXPECT_EQ(four.key(), "powi|300:i4@sm_90");
  EXPECT_EQ(eight.key(), "powi|300:i8@sm_90");
  EXPECT_EQ(reg.stats().compiles, 2u);
}

TEST(Compile, SyntaxErrorReportsNameKeyAndFullLog) {
  Registry reg(test::sm90_options());
  reg.register_source("broken",
                      "extern \"C\" __global__ void broken_kernel(int* p) {\n"
                      "  p[0] = undeclared_thing;\n}\n");
  std::string message =
      expect_error(ErrorCode::CompileError, [&] { reg.compile("broken_kernel"); });
  EXPECT_TRUE(contains(message, "'broken_kernel'")) << message;
  EXPECT_TRUE(contains(message, "broken@sm_90")) << message;
  EXPECT_TRUE(contains(message, "undeclared_thing")) << message;
  EXPECT_TRUE(contains(message, "broken.cu(2)")) << message;  // the log's line reference
}

// What failed comes as fields too, for callers that show it without parsing the message.
TEST(Compile, ARefusedCompileCarriesItsFailureAsFields) {
  Registry reg(test::sm90_options());
  const std::string text =
      "KREG_CONSTANT_DEFAULT(int, n, 300, 1);\n"
      "extern \"C\" __global__ void refused() { int x = ; }\n";
  reg.register_source("refused_source", "#include <kreg/kernel.cuh>\n" + text);
  try {
    reg.compile("refused", Constants{.ints = {{300, 4}}});
    ADD_FAILURE() << "compiled";
  } catch (const Error& e) {
    ASSERT_NE(e.compile_failure(), nullptr) << e.what();
    const CompileFailure& f = *e.compile_failure();
    EXPECT_EQ(f.source_name, "refused_source");
    EXPECT_EQ(f.label, "refused|300:i4");
    EXPECT_EQ(f.key, "refused_source|300:i4@sm_90");
    EXPECT_TRUE(test::contains(f.log, "expected an expression")) << f.log;
    EXPECT_EQ(f.source, "#include <kreg/kernel.cuh>\n" + text);
    EXPECT_TRUE(test::contains(std::string(e.message()), f.log));
    // Told again by another message, the fields stay.
    const Error told = e.with_message("while warming: " + std::string(e.message()));
    ASSERT_NE(told.compile_failure(), nullptr);
    EXPECT_EQ(told.compile_failure()->key, f.key);
    EXPECT_EQ(told.code(), ErrorCode::CompileError);
  }
  // A constant that never reached NVRTC is a CompileError without one.
  reg.register_source("needs",
                      "#include <kreg/kernel.cuh>\nKREG_CONSTANT(int, m, 301);\n"
                      "extern \"C\" __global__ void needs_m(int* p) { *p = m; }\n");
  try {
    reg.compile("needs_m");
    ADD_FAILURE() << "compiled without its constant";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::CompileError);
    EXPECT_EQ(e.compile_failure(), nullptr);
  }
}

TEST(Compile, EntriesNvrtcNeverCompiledFailByName) {
  RegistryOptions options = test::sm90_options();
  options.precompiled = true;  // prewarm_all below need not compile every built-in
  Registry reg(options);
  reg.register_source("partly", R"(
    extern "C" __global__ void kept(int* p) { p[0] = 1; }
    #if 0
    extern "C" __global__ void hidden(int* p) { p[0] = 2; }
    #endif
    #define NOT_A_KERNEL(name) __device__ void name(int* p) { p[0] = 3; }
    extern "C" { NOT_A_KERNEL(renamed) }
    extern "C" __global__ void macro_made(int* p);
  )");
  EXPECT_EQ(reg.entry_names("partly"), (std::vector<std::string>{"kept", "hidden", "macro_made"}));
  EXPECT_FALSE(reg.compile("kept").symbol("kept").empty());
  for (const char* missing : {"hidden", "macro_made"}) {
    const std::string message =
        expect_error(ErrorCode::CompileError, [&] { reg.compile(missing); });
    EXPECT_TRUE(contains(message, std::string("without kernel '") + missing + "'")) << message;
    EXPECT_TRUE(contains(message, "partly@sm_90")) << message;
    EXPECT_TRUE(reg.compile("kept").symbol(missing).empty());
  }
  EXPECT_EQ(reg.stats().compiles, 1u);  // one compile, shared by every entry
  const PrewarmReport report = reg.prewarm_all();
  ASSERT_EQ(report.failures.size(), 2u);
  EXPECT_TRUE(contains(report.failures[0] + report.failures[1], "without kernel 'hidden'"));
}

TEST(Compile, FailedCompilesAreNotCached) {
  Registry reg(test::sm90_options());
  reg.register_source("flaky", "extern \"C\" __global__ void flaky(int* p) { p[0] = nope; }");
  const std::string first = expect_error(ErrorCode::CompileError, [&] { reg.compile("flaky"); });
  const std::string second = expect_error(ErrorCode::CompileError, [&] { reg.compile("flaky"); });
  EXPECT_EQ(first, second);
  EXPECT_EQ(reg.stats().failures, 2u);  // compiled (and failed) twice: nothing was cached
  EXPECT_EQ(reg.stats().compiles, 0u);
  EXPECT_FALSE(reg.is_cached("flaky"));
  reg.register_source("flaky", "extern \"C\" __global__ void flaky(int* p) { p[0] = 1; }");
  EXPECT_GT(reg.compile("flaky").size(), 0u);
  EXPECT_EQ(reg.stats().compiles, 1u);
}

TEST(Compile, PerSourceAndGlobalOptionsReachNvrtc) {
  // An option NVRTC rejects proves the option was passed.
  Registry reg(test::sm90_options());
  reg.register_source("opt",
                      "// kreg:options --no-such-nvrtc-option\n"
                      "extern \"C\" __global__ void opt_kernel() {}");
  std::string message = expect_error(ErrorCode::CompileError, [&] { reg.compile("opt_kernel"); });
  EXPECT_TRUE(contains(message, "no-such-nvrtc-option")) << message;

  RegistryOptions options = test::sm90_options();
  options.compile_options = {"--another-bogus-option"};
  Registry global(options);
  message = expect_error(ErrorCode::CompileError, [&] { global.compile("elementwise_add_f32"); });
  EXPECT_TRUE(contains(message, "another-bogus-option")) << message;

  Registry fine(test::sm90_options());
  fine.register_source(
      "fast",
      "// kreg:options -use_fast_math -maxrregcount=32\n"
      "extern \"C\" __global__ void fast_kernel(float* p) { p[0] = __expf(p[0]); }");
  EXPECT_GT(fine.compile("fast_kernel").size(), 0u);
}

TEST(Compile, ArchSpecificSourcesTargetTheAVariant) {
  Registry reg(test::sm90_options());
  reg.register_source("hopper",
                      "// kreg:arch-specific\nextern \"C\" __global__ void hopper_only() {}");
  EXPECT_EQ(reg.compile("hopper_only").arch(), "sm_90a");
  EXPECT_EQ(reg.compile("elementwise_add_f32").arch(), "sm_90");
  // Before Hopper there is no `a` variant: the source compiles for the plain target.
  RegistryOptions ampere = test::sm90_options();
  ampere.arch = "sm_80";
  Registry older(ampere);
  older.register_source("hopper",
                        "// kreg:arch-specific\nextern \"C\" __global__ void hopper_only() {}");
  EXPECT_EQ(older.compile("hopper_only").arch(), "sm_80");
}

TEST(Compile, ToolkitHeadersAreFoundWithoutMinimal) {
  Registry reg(test::sm90_options());
  reg.register_source("half",
                      "#include <cuda_fp16.h>\n"
                      "extern \"C\" __global__ void half_add(__half* a, const __half* b) {"
                      " a[0] = __hadd(a[0], b[0]); }");
  EXPECT_GT(reg.compile("half_add").size(), 0u);
}

TEST(Compile, BadArchIsRejectedUpFront) {
  for (const char* arch : {"sm90", "sm_", "compute_90", "sm_9x", "sm_12"}) {
    RegistryOptions options = test::sm90_options();
    options.arch = arch;
    expect_error(ErrorCode::InvalidArgument, [&] { Registry reg(options); });
  }
}

TEST(Compile, VersionsAreReported) {
  EXPECT_FALSE(nvrtc_version().empty());
  auto archs = supported_archs();
  EXPECT_NE(std::find(archs.begin(), archs.end(), "sm_90"), archs.end());
}

}  // namespace
}  // namespace kreg

namespace kreg {
namespace {

TEST(Compile, SourcesNeedingWhatMinimalLeavesOutStillCompile) {
  // Texture objects and vector types are among what -minimal leaves out.
  Registry reg(test::sm90_options());
  reg.register_source("tex", R"(
extern "C" __global__ void fetch(cudaTextureObject_t t, float4* out) {
  out[0] = make_float4(tex1Dfetch<float>(t, 0), 0.f, 0.f, 0.f);
})");
  EXPECT_GT(reg.compile("fetch").size(), 0u);
  // A genuinely broken source still fails, with the log of the full compile.
  reg.register_source("bad", "extern \"C\" __global__ void bad(float4* p) { p[0] = nope; }");
  std::string message = expect_error(ErrorCode::CompileError, [&] { reg.compile("bad"); });
  EXPECT_TRUE(contains(message, "nope")) << message;
  EXPECT_FALSE(contains(message, "\"float4\" is undefined")) << message;  // known without -minimal
}

// Sources that start with the same toolkit #include lines: the second compile makes NVRTC's
// precompiled header of them, the later ones use it, and Stats counts both.
TEST(Compile, HeavySourcesWithOneIncludeSetShareAPrecompiledHeader) {
  Registry reg(test::sm90_options());
  for (int i = 0; i < 3; ++i) {
    const std::string n = std::to_string(i);
    reg.register_source("heavy" + n,
                        "#define KREG_STATS_PCH_TEST 1\n#include <cuda_fp16.h>\n"
                        "extern \"C\" __global__ void heavy" +
                            n + "(__half* p) { p[0] = __float2half(" + n + ".0f); }\n");
  }
  for (int i = 0; i < 3; ++i) EXPECT_GT(reg.compile("heavy" + std::to_string(i)).size(), 0u);
  const Stats stats = reg.stats();
  EXPECT_EQ(stats.compiles, 3u);
  EXPECT_EQ(stats.pch_creations, 1u);
  EXPECT_EQ(stats.pch_uses, 1u);
}

}  // namespace
}  // namespace kreg
