// Registry behaviour that needs no GPU: sources, replacement, caching, single flight.
#include "test_support.hpp"

#include <atomic>
#include <barrier>
#include <optional>
#include <thread>

namespace kreg {
namespace {

using test::contains;
using test::expect_error;

TEST(Registry, StartsWithBuiltinsAndNothingCompiled) {
  Registry reg(test::sm90_options());
  EXPECT_GE(reg.source_count(), 3u);
  EXPECT_EQ(reg.cached_count(), 0u);
  EXPECT_EQ(reg.stats().compiles, 0u);
  auto sources = reg.source_names();
  EXPECT_NE(std::find(sources.begin(), sources.end(), "elementwise"), sources.end());
  EXPECT_EQ(reg.entry_names("elementwise"),
            (std::vector<std::string>{"elementwise_add_f32", "elementwise_mul_f32"}));
  expect_error(ErrorCode::KernelNotFound, [&] { reg.entry_names("nope"); });
  EXPECT_EQ(reg.arch(), "sm_90");
}

TEST(Registry, RegisterAddsAndCounts) {
  Registry reg(test::sm90_options());
  const std::size_t before = reg.source_count();
  reg.register_source("mine", "extern \"C\" __global__ void my_kernel() {}");
  EXPECT_EQ(reg.source_count(), before + 1);
  reg.register_source("mine", "extern \"C\" __global__ void my_kernel() {}");
  EXPECT_EQ(reg.source_count(), before + 1);  // replaced, not added
}

TEST(Registry, EntryNamesMustBeUniqueAcrossSources) {
  Registry reg(test::sm90_options());
  reg.register_source("original", "extern \"C\" __global__ void my_add_f32() {}");
  std::string message = expect_error(ErrorCode::InvalidArgument, [&] {
    reg.register_source("copycat", "extern \"C\" __global__ void my_add_f32() {}");
  });
  EXPECT_TRUE(contains(message, "'original'")) << message;
  EXPECT_GT(reg.compile("my_add_f32").size(), 0u);  // the original is untouched
}

TEST(Registry, ReplacingASourceDropsEveryCachedSpecialization) {
  Registry reg(test::sm90_options());
  reg.register_source("rep", R"(#include <kreg/kernel.cuh>
KREG_CONSTANT_DEFAULT(int, n, 1, 1);
extern "C" __global__ void rep_a(int* p) { p[0] = n; }
extern "C" __global__ void rep_b(int* p) { p[0] = -n; })");
  const std::vector<KernelRequest> requests = {
      {"rep_a", {}}, {"rep_a", {.ints = {{1, 2}}}}, {"rep_b", {.ints = {{1, 3}}}}};
  EXPECT_EQ(reg.prewarm(requests), 3u);
  EXPECT_EQ(reg.cached_count(), 3u);
  EXPECT_TRUE(reg.is_cached("rep_a", {.ints = {{1, 2}}}));
  const Binary& old_binary = reg.compile("rep_a", {.ints = {{1, 2}}});
  const std::string old_key = old_binary.key();
  EXPECT_EQ(reg.stats().compiles, 3u);

  reg.register_source("rep", R"(#include <kreg/kernel.cuh>
KREG_CONSTANT_DEFAULT(int, n, 1, 1);
extern "C" __global__ void rep_a(int* p) { p[0] = 2 * n; })");
  EXPECT_EQ(reg.cached_count(), 0u);
  EXPECT_FALSE(reg.is_cached("rep_a"));
  EXPECT_FALSE(reg.is_cached("rep_a", {.ints = {{1, 2}}}));
  expect_error(ErrorCode::KernelNotFound, [&] { reg.compile("rep_b"); });
  const Binary& fresh = reg.compile("rep_a", {.ints = {{1, 2}}});
  EXPECT_NE(&fresh, &old_binary);
  EXPECT_EQ(fresh.key(), old_key);  // same name and constants, new text
  EXPECT_EQ(reg.stats().compiles, 4u);
  EXPECT_GT(old_binary.size(), 0u);  // references handed out earlier stay valid
}

TEST(Registry, SingleFlightCompilesOnceFor32Threads) {
  Registry reg(test::sm90_options());
  constexpr int kThreads = 32;
  std::barrier start(kThreads);
  std::vector<const Binary*> seen(kThreads, nullptr);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      start.arrive_and_wait();
      seen[t] = &reg.compile("powi_f32", {.bools = {{200, true}}, .ints = {{300, 5}}});
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(reg.stats().compiles, 1u);
  EXPECT_EQ(reg.stats().failures, 0u);
  for (const Binary* b : seen) EXPECT_EQ(b, seen[0]);
}

TEST(Registry, SingleFlightSharesAFailureWithoutCachingIt) {
  Registry reg(test::sm90_options());
  reg.register_source("bad", "extern \"C\" __global__ void bad_kernel() { nope(); }");
  constexpr int kThreads = 8;
  std::barrier start(kThreads);
  std::atomic<int> compile_errors{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      start.arrive_and_wait();
      try {
        reg.compile("bad_kernel");
      } catch (const Error& e) {
        if (e.code() == ErrorCode::CompileError) ++compile_errors;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(compile_errors.load(), kThreads);
  EXPECT_GE(reg.stats().failures, 1u);
  EXPECT_LE(reg.stats().failures, static_cast<std::uint64_t>(kThreads));
  EXPECT_EQ(reg.stats().compiles, 0u);
}

TEST(Registry, ConcurrentReplacementAndCompileStayConsistent) {
  Registry reg(test::sm90_options());
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    for (int i = 0; i < 6; ++i) {
      reg.register_source("churn", "extern \"C\" __global__ void churn(int* p) { p[0] = " +
                                       std::to_string(i) + "; }");
    }
    stop = true;
  });
  while (!stop) {
    try {
      EXPECT_GT(reg.compile("churn").size(), 0u);
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::KernelNotFound);  // before the first registration
    }
  }
  writer.join();
  // After the churn, exactly the last text is current.
  const Binary& last = reg.compile("churn");
  EXPECT_EQ(last.key(), "churn@sm_90");
  EXPECT_EQ(&reg.compile("churn"), &last);
}

TEST(Registry, GetWithoutAGpuIsNoDevice) {
  if (test::gpu_unavailable_reason().empty()) GTEST_SKIP() << "this machine has a GPU";
  Registry reg(test::sm90_options());
  std::string message = expect_error(ErrorCode::NoDevice, [&] { reg.get("elementwise_add_f32"); });
  EXPECT_TRUE(contains(message, "no GPU")) << message;
  EXPECT_GT(reg.compile("elementwise_add_f32").size(), 0u);  // compiling still works
  // Bad names are reported as such even here.
  expect_error(ErrorCode::KernelNotFound, [&] { reg.get("nope"); });
  expect_error(ErrorCode::InvalidArgument, [&] { reg.get(""); });
}

TEST(Registry, NoArchAndNoGpuExplainsHowToCompile) {
  if (test::gpu_unavailable_reason().empty()) GTEST_SKIP() << "this machine has a GPU";
  if (std::getenv("KREG_ARCH") != nullptr) GTEST_SKIP() << "KREG_ARCH is set";
  Registry reg(test::isolated_options());
  EXPECT_EQ(reg.arch(), "");
  std::string message =
      expect_error(ErrorCode::NoDevice, [&] { reg.compile("elementwise_add_f32"); });
  EXPECT_TRUE(contains(message, "KREG_ARCH")) << message;
}

TEST(Registry, WarmCompilerThreadDoesNotDisturbCompiles) {
  RegistryOptions options = test::sm90_options();
  options.warm_compiler = true;
  Registry reg(options);
  EXPECT_GT(reg.compile("elementwise_add_f32").size(), 0u);
}

TEST(Registry, DestroyedRightAfterCreationWhileWarming) {
  RegistryOptions options = test::sm90_options();
  options.warm_compiler = true;
  for (int i = 0; i < 3; ++i) Registry reg(options);
}

}  // namespace
}  // namespace kreg

namespace kreg {
namespace {

// Sets an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    ::setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(RegistryEnv, ArchComesFromKregArchWhenOptionsLeaveItEmpty) {
  ScopedEnv arch("KREG_ARCH", "sm_80");
  Registry reg(test::isolated_options());
  EXPECT_EQ(reg.arch(), "sm_80");
  EXPECT_EQ(reg.compile("elementwise_add_f32").arch(), "sm_80");
  Registry explicit_arch(test::sm90_options());  // an explicit option wins
  EXPECT_EQ(explicit_arch.arch(), "sm_90");
}

TEST(RegistryEnv, BadKregArchIsRejected) {
  ScopedEnv arch("KREG_ARCH", "hopper");
  expect_error(ErrorCode::InvalidArgument,
               [] { Registry reg(test::isolated_options()); });
}

TEST(RegistryEnv, CompileProcessesCanBeTurnedOffByEnvironment) {
  ScopedEnv off("KREG_COMPILE_PROCESSES", "0");
  RegistryOptions options = test::sm90_options();
  options.compile_processes = 4;
  Registry reg(options);
  std::vector<std::string> names;
  for (int i = 0; i < 20; ++i) {
    names.push_back("env_numbered_" + std::to_string(i));
    reg.register_source(names.back(), "extern \"C\" __global__ void " + names.back() + "() {}");
  }
  EXPECT_EQ(reg.prewarm(names), names.size());
  EXPECT_EQ(reg.stats().worker_compiles, 0u);
}

}  // namespace
}  // namespace kreg
