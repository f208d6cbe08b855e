// The registry with its disk cache: hits across registries (and processes), keys, recovery
// and degradation.
#include "cache/cache_scan.hpp"
#include "cache/stress_sources.hpp"
#include "test_support.hpp"

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

extern char** environ;  // NOLINT(readability-redundant-declaration): POSIX leaves it undeclared

namespace kreg {
namespace {

namespace fs = std::filesystem;

class RegistryDisk : public ::testing::Test {
 protected:
  RegistryOptions with_disk() const { return test::sm90_disk_options(dir_); }
  std::size_t entries() const {
    std::size_t n = 0;
    for (const auto& e : fs::recursive_directory_iterator(dir_))
      n += e.path().extension() == ".kbin";
    return n;
  }
  test::ScratchDir scratch_{"kreg_rdisk_"};
  const fs::path& dir_ = scratch_.path();
};

TEST_F(RegistryDisk, ASecondRegistryLoadsWhatTheFirstCompiled) {
  std::vector<char> image;
  {
    Registry first(with_disk());
    const Binary& b = first.compile("axpy_f32");
    EXPECT_EQ(b.origin(), Origin::Compiled);
    image.assign(b.image().begin(), b.image().end());
    EXPECT_EQ(first.stats().compiles, 1u);
  }
  Registry second(with_disk());
  const Binary& b = second.compile("axpy_f32");
  EXPECT_EQ(b.origin(), Origin::Disk);
  EXPECT_EQ(std::vector<char>(b.image().begin(), b.image().end()), image);
  EXPECT_EQ(b.symbol("axpy_f64"), second.compile("axpy_f64").symbol("axpy_f64"));
  EXPECT_FALSE(b.symbol("axpy_f64").empty());
  EXPECT_EQ(second.stats().compiles, 0u);
  EXPECT_EQ(second.stats().disk_hits, 1u);
}

TEST_F(RegistryDisk, PrewarmAllFromAWarmCacheCompilesNothing) {
  Registry first(with_disk());
  const PrewarmReport cold = first.prewarm_all();
  first.flush_disk_cache();
  Registry second(with_disk());
  const PrewarmReport warm = second.prewarm_all();
  EXPECT_EQ(warm.warmed, cold.warmed);
  EXPECT_EQ(second.stats().compiles, 0u);
  EXPECT_EQ(second.stats().disk_hits, first.stats().compiles);
}

TEST_F(RegistryDisk, KeysChangeWithEverythingThatShapesTheBinary) {
  const std::string text = "extern \"C\" __global__ void keyed(int* p) { p[0] = 1; }";
  auto compiles_for = [&](RegistryOptions options, const std::string& source,
                          const Constants& constants = {}) {
    Registry reg(options);
    reg.register_source("keyed", source);
    reg.compile("keyed", constants);
    return reg.stats().compiles;
  };
  EXPECT_EQ(compiles_for(with_disk(), text), 1u);
  EXPECT_EQ(compiles_for(with_disk(), text), 0u);        // same everything: a hit
  EXPECT_EQ(compiles_for(with_disk(), text + " "), 1u);  // source text
  RegistryOptions sm80 = with_disk();
  sm80.arch = "sm_80";
  EXPECT_EQ(compiles_for(sm80, text), 1u);  // arch
  RegistryOptions fast = with_disk();
  fast.compile_options = {"-use_fast_math"};
  EXPECT_EQ(compiles_for(fast, text), 1u);  // options
  const std::string specialized =
      "#include <kreg/kernel.cuh>\nKREG_CONSTANT_DEFAULT(int, n, 1, 0);\n"
      "extern \"C\" __global__ void keyed(int* p) { p[0] = n; }";
  EXPECT_EQ(compiles_for(with_disk(), specialized, {.ints = {{1, 5}}}), 1u);
  EXPECT_EQ(compiles_for(with_disk(), specialized, {.ints = {{1, 6}}}), 1u);  // constants
  EXPECT_EQ(compiles_for(with_disk(), specialized, {.ints = {{1, 5}}}), 0u);
}

TEST_F(RegistryDisk, SourcesWithHeadersOutsideTheKeyAreNeverStored) {
  // A user header found through -I is not part of the key, so it must not be cached: an
  // edit of it would otherwise be served the old binary.
  const fs::path include = dir_.parent_path() / ("kreg_inc_" + std::to_string(::getpid()));
  fs::create_directories(include);
  std::ofstream(include / "mine.cuh") << "#pragma once\nconstexpr int kMine = 1;\n";
  Registry reg(with_disk());
  reg.register_source("user_header",
                      "// kreg:options -I" + include.string() +
                          "\n#include \"mine.cuh\"\n"
                          "extern \"C\" __global__ void uses_mine(int* p) { p[0] = kMine; }");
  reg.compile("uses_mine");
  reg.flush_disk_cache();
  EXPECT_EQ(entries(), 0u);
  // Toolkit headers change only with the toolkit, whose NVRTC identity is in the key.
  reg.register_source(
      "toolkit_header",
      "#include <cuda_fp16.h>\n"
      "extern \"C\" __global__ void half_one(__half* p) { p[0] = __float2half(1.f); }");
  reg.compile("half_one");
  reg.flush_disk_cache();
  EXPECT_EQ(entries(), 1u);
  fs::remove_all(include);
}

TEST_F(RegistryDisk, CorruptEntriesAreRecompiledAndReplaced) {
  { Registry(with_disk()).compile("elementwise_add_f32"); }
  for (const auto& e : fs::recursive_directory_iterator(dir_)) {
    if (e.path().extension() == ".kbin") fs::resize_file(e.path(), fs::file_size(e.path()) / 3);
  }
  Registry second(with_disk());
  EXPECT_EQ(second.compile("elementwise_add_f32").origin(), Origin::Compiled);
  EXPECT_EQ(second.stats().compiles, 1u);
  second.flush_disk_cache();
  Registry third(with_disk());
  EXPECT_EQ(third.compile("elementwise_add_f32").origin(), Origin::Disk);
}

TEST_F(RegistryDisk, ACacheFolderRemovedWhileRunningIsMadeAgain) {
  Registry reg(with_disk());
  reg.compile("axpy_f32");
  reg.flush_disk_cache();
  EXPECT_EQ(entries(), 1u);
  fs::remove_all(dir_);  // `rm -rf ~/.cache/kreg` under a running process
  reg.compile("elementwise_add_f32");
  reg.flush_disk_cache();
  test::expect_clean_cache(dir_, 1);
  Registry later(with_disk());
  EXPECT_EQ(later.compile("elementwise_add_f32").origin(), Origin::Disk);
}

TEST_F(RegistryDisk, FailedCompilesAreNeverStored) {
  Registry reg(with_disk());
  reg.register_source("bad", "extern \"C\" __global__ void bad() { nope; }");
  test::expect_error(ErrorCode::CompileError, [&] { reg.compile("bad"); });
  reg.flush_disk_cache();
  EXPECT_EQ(entries(), 0u);
}

TEST_F(RegistryDisk, DisabledByEnvironmentOrUnusableFolderStillCompiles) {
  ::setenv("KREG_DISK_CACHE", "0", 1);
  { Registry(with_disk()).compile("axpy_f32"); }
  ::unsetenv("KREG_DISK_CACHE");
  EXPECT_FALSE(fs::exists(dir_));

  std::ofstream(fs::path(::testing::TempDir()) / "kreg_file_in_the_way") << "x";
  RegistryOptions blocked = with_disk();
  blocked.cache_dir = fs::path(::testing::TempDir()) / "kreg_file_in_the_way" / "cache";
  Registry reg(blocked);
  EXPECT_GT(reg.compile("axpy_f32").size(), 0u);
  EXPECT_EQ(reg.stats().compiles, 1u);
}

// 8 processes x 4 threads prewarm one set into one folder, round after round, while the
// test kills some of them at random moments. Afterwards every entry must be whole, and a
// fresh process must be served every kernel from disk, byte-identical to a fresh compile.
TEST_F(RegistryDisk, ManyProcessesWithRandomKillsLeaveNoCorruptEntry) {
  const std::string worker = KREG_STRESS_WORKER;
  std::mt19937 rng(42);
  std::size_t killed = 0;
  std::size_t clean = 0;
  for (int wave = 0; wave < 3; ++wave) {
    std::vector<pid_t> pids;
    for (int p = 0; p < 8; ++p) {
      std::string dir = dir_.string();
      std::string rounds = "5";
      char* argv[] = {const_cast<char*>(worker.c_str()), dir.data(), rounds.data(), nullptr};
      pid_t pid = -1;
      ASSERT_EQ(::posix_spawn(&pid, worker.c_str(), nullptr, nullptr, argv, environ), 0);
      pids.push_back(pid);
    }
    // Half of the processes get a kill at a random moment of their run.
    std::vector<std::pair<int, pid_t>> kills;
    for (pid_t pid : pids) {
      if (rng() % 2 == 0) kills.emplace_back(static_cast<int>(5 + rng() % 250), pid);
    }
    std::sort(kills.begin(), kills.end());
    const auto start = std::chrono::steady_clock::now();
    for (const auto& [at, pid] : kills) {
      std::this_thread::sleep_until(start + std::chrono::milliseconds(at));
      ::kill(pid, SIGKILL);
    }
    for (pid_t pid : pids) {
      int status = 0;
      ASSERT_EQ(::waitpid(pid, &status, 0), pid);
      if (WIFSIGNALED(status)) {
        EXPECT_EQ(WTERMSIG(status), SIGKILL) << "a worker crashed";
        ++killed;
      } else {
        EXPECT_EQ(WEXITSTATUS(status), 0) << "a worker failed to prewarm every kernel";
        ++clean;
      }
    }
  }
  EXPECT_GT(clean, 0u);
  EXPECT_GT(killed, 0u);  // some were killed while working, or the test proves little
  std::printf("stress: %zu workers killed mid-run, %zu finished\n", killed, clean);

  Registry check(test::stress_options(dir_.string()));
  const auto names = test::register_stress_sources(check);
  EXPECT_EQ(check.prewarm(names), names.size());
  EXPECT_EQ(check.stats().compiles, 0u);  // every kernel was on disk, whole
  Registry fresh(test::sm90_options());
  test::register_stress_sources(fresh);
  for (const std::string& name : names) {
    const Binary& a = check.compile(name);
    const Binary& b = fresh.compile(name);
    EXPECT_EQ(a.origin(), Origin::Disk);
    EXPECT_TRUE(std::equal(a.image().begin(), a.image().end(), b.image().begin(), b.image().end()))
        << name;
  }
}

}  // namespace
}  // namespace kreg
