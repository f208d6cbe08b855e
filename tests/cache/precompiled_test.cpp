// The set of built-ins compiled at build time (KREG_CUDA_ARCHITECTURES, default 80;90).
#include "cache/precompiled.hpp"

#include "test_support.hpp"

#include <algorithm>

namespace kreg {
namespace {

RegistryOptions with_precompiled(const std::string& arch = "sm_90") {
  RegistryOptions options = test::isolated_options();
  options.precompiled = true;
  options.arch = arch;
  return options;
}

bool built_for(const std::string& arch) {
  const auto archs = precompiled_archs();
  return std::find(archs.begin(), archs.end(), arch) != archs.end();
}

TEST(Precompiled, EveryBuiltinAndSpecializationIsEmbedded) {
  if (!built_for("sm_90")) GTEST_SKIP() << "this build does not precompile for sm_90";
  Registry reg(with_precompiled());
  std::size_t expected = 0;
  for (const std::string& source : reg.source_names()) {
    const SourceInfo info = reg.source_info(source);
    const bool plain = std::all_of(info.constants.begin(), info.constants.end(),
                                   [](const ConstantInfo& c) { return c.has_default; });
    expected += (plain ? 1 : 0) + info.specializations.size();
  }
  std::size_t sm90 = 0;
  // Arch-specific sources (wgmma) are precompiled for sm_90a, the rest for sm_90.
  for (const auto& e : cache::precompiled_entries())
    sm90 += e.arch == "sm_90" || e.arch == "sm_90a";
  EXPECT_EQ(sm90, expected);
}

TEST(Precompiled, BuiltinsAreServedWithoutCompiling) {
  if (!built_for("sm_90")) GTEST_SKIP() << "this build does not precompile for sm_90";
  Registry reg(with_precompiled());
  const PrewarmReport report = reg.prewarm_all();
  EXPECT_TRUE(report.failures.empty());
  EXPECT_EQ(reg.stats().compiles, 0u);
  EXPECT_GT(reg.stats().precompiled_hits, 0u);
  const Binary& b = reg.compile("axpy_f64");
  EXPECT_EQ(b.origin(), Origin::Precompiled);
  EXPECT_EQ(b.symbol("axpy_f64").substr(0, 2), "_Z");
}

// A hit hands out the embedded image itself: a fresh process's first get copies nothing
// (the largest built-in binaries are hundreds of KB).
TEST(Precompiled, AHitViewsTheEmbeddedImage) {
  if (!built_for("sm_90")) GTEST_SKIP() << "this build does not precompile for sm_90";
  Registry reg(with_precompiled());
  const Binary& b = reg.compile("add_f32");
  ASSERT_EQ(b.origin(), Origin::Precompiled);
  const char* image = b.image().data();
  const bool inside = std::any_of(
      cache::precompiled_entries().begin(), cache::precompiled_entries().end(),
      [&](const cache::PrecompiledEntry& e) {
        return image >= e.payload.data() && image + b.size() <= e.payload.data() + e.payload.size();
      });
  EXPECT_TRUE(inside) << "the image was copied";
  EXPECT_EQ(b.size(), b.image().size());
  EXPECT_FALSE(b.symbol("add_f32").empty());
}

TEST(Precompiled, HitsAreByteIdenticalToCompiles) {
  // The precompiled set was compiled by another process (at build time), so this holds only
  // if a compile's output does not depend on the process: every built-in is checked.
  if (!built_for("sm_90")) GTEST_SKIP() << "this build does not precompile for sm_90";
  Registry precompiled(with_precompiled());
  Registry compiled(test::sm90_options());
  const std::vector<KernelRequest> all = precompiled.prewarm_all_requests();
  ASSERT_FALSE(all.empty());
  compiled.prewarm(all);
  for (const KernelRequest& r : all) {
    const std::string label = kernel_label(r.name, r.constants);
    const Binary& a = precompiled.compile(r.name, r.constants);
    const Binary& b = compiled.compile(r.name, r.constants);
    EXPECT_EQ(a.origin(), Origin::Precompiled) << label;
    EXPECT_EQ(b.origin(), Origin::Compiled) << label;
    EXPECT_TRUE(std::equal(a.image().begin(), a.image().end(), b.image().begin(), b.image().end()))
        << label;
  }
}

TEST(Precompiled, AnythingDifferentFallsBackToNvrtc) {
  // An arch without precompiled code, a replaced source, other options, unlisted constants.
  Registry other_arch(with_precompiled("sm_86"));
  if (!built_for("sm_86")) {
    EXPECT_EQ(other_arch.compile("axpy_f32").origin(), Origin::Compiled);
  }
  Registry replaced(with_precompiled());
  replaced.register_source("axpy",
                           "// kreg:entry axpy_f32=axpy<float>\n"
                           "template <typename T> __global__ void axpy(T* y) { y[0] = 1; }");
  EXPECT_EQ(replaced.compile("axpy_f32").origin(), Origin::Compiled);
  RegistryOptions fast = with_precompiled();
  fast.compile_options = {"-use_fast_math"};
  EXPECT_EQ(Registry(fast).compile("axpy_f32").origin(), Origin::Compiled);
  Registry unlisted(with_precompiled());
  EXPECT_EQ(unlisted.compile("powi_f32", {.ints = {{300, 9}}}).origin(), Origin::Compiled);
}

TEST(Precompiled, EnvironmentTurnsItOff) {
  if (!built_for("sm_90")) GTEST_SKIP() << "this build does not precompile for sm_90";
  const Constants listed{.ints = {{300, 2}}};
  ::setenv("KREG_PRECOMPILED_CONSTANTS", "0", 1);
  {
    Registry reg(with_precompiled());
    EXPECT_EQ(reg.compile("axpy_f32").origin(), Origin::Precompiled);
    EXPECT_EQ(reg.compile("powi_f32", listed).origin(), Origin::Compiled);
  }
  ::unsetenv("KREG_PRECOMPILED_CONSTANTS");
  for (const char* off : {"0", "false", "off"}) {
    ::setenv("KREG_PRECOMPILED", off, 1);
    Registry reg(with_precompiled());
    EXPECT_EQ(reg.compile("axpy_f32").origin(), Origin::Compiled) << off;
  }
  ::unsetenv("KREG_PRECOMPILED");
  Registry on(with_precompiled());
  EXPECT_EQ(on.compile("powi_f32", listed).origin(), Origin::Precompiled);
}

}  // namespace
}  // namespace kreg
