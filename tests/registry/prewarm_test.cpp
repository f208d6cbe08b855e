// Parallel prewarming without a GPU: kernels are compiled (not loaded) and counted.
#include "test_support.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <set>

namespace kreg {
namespace {

using test::contains;

RegistryOptions pooled() {
  RegistryOptions options = test::sm90_options();
  options.prewarm_threads = 4;
  return options;
}

TEST(Prewarm, UnknownNamesAreSkippedAndNotCounted) {
  Registry reg(pooled());
  std::size_t ready = reg.prewarm(
      {"elementwise_add_f32", "no_such_kernel", "axpy_f32", "axpy_f64", "also_missing"});
  EXPECT_EQ(ready, 3u);
  EXPECT_EQ(reg.cached_count(), 3u);
  EXPECT_TRUE(reg.is_cached("axpy_f64"));
  EXPECT_FALSE(reg.is_cached("no_such_kernel"));
  EXPECT_EQ(reg.stats().compiles, 2u);  // elementwise and axpy, once each
}

TEST(Prewarm, WithConstantsCompilesEachSetOnce) {
  Registry reg(pooled());
  Constants c4{.ints = {{300, 4}}};
  Constants c8{.bools = {{200, true}}, .ints = {{300, 8}}};
  std::size_t ready = reg.prewarm(std::vector<KernelRequest>{
      {"powi_f32", c4}, {"powi_f32", c8}, {"powi_f32", c4}, {"powi_f32", {}}});
  EXPECT_EQ(ready, 3u);  // the last one lacks the required exponent
  EXPECT_EQ(reg.stats().compiles, 2u);
  EXPECT_TRUE(reg.is_cached("powi_f32", c4));
  EXPECT_TRUE(reg.is_cached("powi_f32", c8));
  EXPECT_FALSE(reg.is_cached("powi_f32"));
  EXPECT_EQ(reg.cached_count(), 2u);
}

TEST(Prewarm, AllReportsWarmedSkippedAndFailures) {
  Registry reg(pooled());
  reg.register_source("broken",
                      "extern \"C\" __global__ void broken_a() { nope(); }\n"
                      "extern \"C\" __global__ void broken_b() {}");
  reg.register_source("needy",
                      "#include <kreg/kernel.cuh>\nKREG_CONSTANT(int, n, 1);\n"
                      "extern \"C\" __global__ void needy(int* p) { p[0] = n; }");
  std::size_t expected_entries = 0;
  for (const std::string& source : reg.source_names()) {
    const SourceInfo info = reg.source_info(source);
    if (source == "broken" || source == "needy") continue;
    const bool plain = std::all_of(info.constants.begin(), info.constants.end(),
                                   [](const ConstantInfo& c) { return c.has_default; });
    expected_entries += info.entries.size() * ((plain ? 1 : 0) + info.specializations.size());
  }
  EXPECT_EQ(reg.source_info("powi").specializations.size(), 2u);
  std::mutex mutex;
  std::vector<PrewarmProgress> steps;
  std::set<std::string> labels;
  PrewarmReport report = reg.prewarm_all([&](const PrewarmProgress& p) {
    std::lock_guard lock(mutex);
    steps.push_back(p);
    labels.insert(std::string(p.label));
  });
  EXPECT_EQ(report.warmed, expected_entries);
  EXPECT_EQ(report.skipped, 1u);  // needy needs a constant and lists none
  EXPECT_TRUE(reg.is_cached("powi_f32", {.bools = {{200, true}}, .ints = {{300, 3}}}));
  ASSERT_EQ(report.failures.size(), 2u);  // both entries of the broken source
  for (const std::string& failure : report.failures) {
    EXPECT_TRUE(contains(failure, "broken_")) << failure;
    EXPECT_TRUE(contains(failure, "nope")) << failure;
  }
  const std::size_t total = expected_entries + 2;
  ASSERT_EQ(steps.size(), total);
  std::set<std::size_t> done;
  for (const PrewarmProgress& p : steps) {
    EXPECT_EQ(p.total, total);
    done.insert(p.done);
  }
  EXPECT_EQ(done.size(), total);  // each step counted once, 1..total
  EXPECT_EQ(*done.rbegin(), total);
  EXPECT_TRUE(labels.contains("elementwise_mul_f32"));
  EXPECT_EQ(reg.cached_count(), expected_entries);
}

TEST(Prewarm, ThrowingProgressCallbackIsContained) {
  Registry reg(pooled());
  std::size_t ready = reg.prewarm({"elementwise_add_f32"}, [](const PrewarmProgress&) {
    throw std::runtime_error("callback failure");
  });
  EXPECT_EQ(ready, 1u);
}

TEST(Prewarm, EmptyListIsANoOp) {
  Registry reg(pooled());
  EXPECT_EQ(reg.prewarm(std::vector<std::string>{}), 0u);
  EXPECT_EQ(reg.stats().compiles, 0u);
}

}  // namespace
}  // namespace kreg

namespace kreg {
namespace {

std::string numbered_source(int i) {
  return "extern \"C\" __global__ void numbered_" + std::to_string(i) +
         "(int* p) { p[0] = " + std::to_string(i) + "; }\n";
}

// Registers `count` one-kernel sources; `text(i)` gives source i's text.
std::vector<std::string> register_numbered(
    Registry& reg, int count, const std::function<std::string(int)>& text = numbered_source) {
  std::vector<std::string> names;
  for (int i = 0; i < count; ++i) {
    names.push_back("numbered_" + std::to_string(i));
    reg.register_source(names.back(), text(i));
  }
  return names;
}

TEST(PrewarmWorkers, LargePrewarmsCompileInWorkerProcesses) {
  RegistryOptions options = test::sm90_options();
  options.prewarm_threads = 2;
  options.compile_processes = 2;
  Registry reg(options);
  const std::vector<std::string> names = register_numbered(reg, 20);
  EXPECT_EQ(reg.prewarm(names), names.size());
  EXPECT_EQ(reg.stats().compiles, names.size());
  EXPECT_EQ(reg.stats().worker_compiles, names.size());
  // What the workers built is what an in-process compile builds.
  Registry local(test::sm90_options());
  local.register_source("numbered_7", numbered_source(7));
  const Binary& a = reg.compile("numbered_7");
  const Binary& b = local.compile("numbered_7");
  EXPECT_TRUE(std::equal(a.image().begin(), a.image().end(), b.image().begin(), b.image().end()));
}

TEST(PrewarmWorkers, SmallPrewarmsAndDisabledWorkersStayInProcess) {
  RegistryOptions options = test::sm90_options();
  options.compile_processes = 0;
  Registry off(options);
  const std::vector<std::string> names = register_numbered(off, 20);
  EXPECT_EQ(off.prewarm(names), names.size());
  EXPECT_EQ(off.stats().worker_compiles, 0u);

  Registry small(test::sm90_options());
  EXPECT_EQ(small.prewarm({"elementwise_add_f32", "axpy_f32"}), 2u);
  EXPECT_EQ(small.stats().worker_compiles, 0u);
}

TEST(PrewarmWorkers, AWorkerThatNeverAnswersCostsSecondsNotMinutes) {
  // KREG_COMPILE_WORKER names a program that sleeps: after the ready timeout every worker is
  // killed, no more are started, and the prewarm compiles in-process.
  const std::string sleeper = ::testing::TempDir() + "kreg_prewarm_sleeper.sh";
  std::ofstream(sleeper) << "#!/bin/sh\nexec sleep 600\n";
  std::filesystem::permissions(sleeper, std::filesystem::perms::owner_all);
  ::setenv("KREG_COMPILE_WORKER", sleeper.c_str(), 1);
  RegistryOptions options = test::sm90_options();
  options.compile_processes = 2;
  options.prewarm_threads = 2;
  Registry reg(options);
  const std::vector<std::string> names = register_numbered(reg, 20);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(reg.prewarm(names), names.size());
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ::unsetenv("KREG_COMPILE_WORKER");
  EXPECT_EQ(reg.stats().worker_compiles, 0u);
  EXPECT_EQ(reg.stats().compiles, names.size());
  // The ready timeout (3 s) once, then 20 trivial compiles in-process: far from the request
  // timeout (600 s) that a silent worker used to cost, twice.
  EXPECT_LT(seconds, 60.0) << "prewarm took " << seconds << " s";
}

TEST(PrewarmWorkers, CompileErrorsFromWorkersMatchInProcessOnes) {
  RegistryOptions options = test::sm90_options();
  options.compile_processes = 2;
  Registry reg(options);
  std::vector<std::string> names;
  for (int i = 0; i < 20; ++i) {
    reg.register_source(
        "numbered_" + std::to_string(i),
        i == 3 ? "extern \"C\" __global__ void numbered_3() { broken_here; }" : numbered_source(i));
    names.push_back("numbered_" + std::to_string(i));
  }
  EXPECT_EQ(reg.prewarm(names), names.size() - 1);
  std::string message =
      test::expect_error(ErrorCode::CompileError, [&] { reg.compile("numbered_3"); });
  EXPECT_TRUE(contains(message, "broken_here")) << message;
}

}  // namespace
}  // namespace kreg

namespace kreg {
namespace {

TEST(Prewarm, EveryListFormOfTheDesignCompiles) {
  Registry reg(test::sm90_options());
  EXPECT_EQ(reg.prewarm({"elementwise_add_f32"}), 1u);
  EXPECT_EQ(reg.prewarm({"elementwise_add_f32", "axpy_f32"}), 2u);
  Constants c1{.ints = {{300, 2}}};
  Constants c2{.bools = {{200, true}}, .ints = {{300, 3}}};
  EXPECT_EQ(reg.prewarm({{"powi_f32", c1}, {"powi_f32", c2}}), 2u);
  std::vector<std::string> names = {"axpy_f64"};
  EXPECT_EQ(reg.prewarm(names), 1u);
}

}  // namespace
}  // namespace kreg
