// The soak (soak.hpp) in this process, in a second process, and beside a third that clears,
// trims, verifies and removes the cache folder. Every binary served is checked against the
// source text current at the time; afterwards the folder holds only whole entries, and what
// it serves a fresh registry is exactly the text that registry asked for.
//
// KREG_STRESS_SECONDS sets the length (default 12 s, the CI run); run it by hand for longer:
//   KREG_STRESS_SECONDS=1800 ./kreg_cache_tests --gtest_filter='Soak.*'
#include "cache/soak.hpp"
#include "cache/cache_scan.hpp"
#include "core/env.hpp"
#include "test_support.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

extern char** environ;  // NOLINT(readability-redundant-declaration): POSIX leaves it undeclared

namespace kreg {
namespace {

namespace fs = std::filesystem;

double soak_seconds() {
  const std::string text = core::env_string("KREG_STRESS_SECONDS").value_or("12");
  try {
    return std::stod(text);
  } catch (const std::exception&) {
    ADD_FAILURE() << "KREG_STRESS_SECONDS='" << text << "' is not a number";
    return 12;
  }
}

// A worker process with its standard output in `out`.
class Worker {
 public:
  Worker(std::vector<std::string> args, fs::path out) : out_(std::move(out)) {
    const std::string program = KREG_STRESS_WORKER;
    args.insert(args.begin(), program);
    std::vector<char*> argv;
    argv.reserve(args.size() + 1);
    for (std::string& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out_.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0600);
    spawned_ = ::posix_spawn(&pid_, program.c_str(), &actions, nullptr, argv.data(), environ) == 0;
    posix_spawn_file_actions_destroy(&actions);
  }
  ~Worker() {
    if (spawned_ && !waited_) ::waitpid(pid_, nullptr, 0);
  }
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  bool spawned() const { return spawned_; }
  // Waits for the process; its exit status (-1 if it did not exit normally) and output.
  int wait(std::string& output) {
    int status = 0;
    waited_ = ::waitpid(pid_, &status, 0) == pid_;
    std::ifstream in(out_);
    output.assign(std::istreambuf_iterator<char>(in), {});
    return waited_ && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

 private:
  fs::path out_;
  pid_t pid_ = -1;
  bool spawned_ = false;
  bool waited_ = false;
};

std::size_t files_under(const fs::path& dir) {
  std::size_t n = 0;
  std::error_code error;
  for (fs::recursive_directory_iterator it(dir, error), end; !error && it != end;
       it.increment(error)) {
    n += it->is_directory() ? 0 : 1;
  }
  return n;
}

TEST(Soak, MixedOperationsAcrossThreadsAndProcessesServeOnlyCurrentBinaries) {
  const double seconds = soak_seconds();
  test::ScratchDir scratch("kreg_soak_");
  fs::create_directories(scratch.path());
  const fs::path dir = scratch.path() / "cache";
  const std::string time = std::to_string(seconds);
  Worker other({"soak", dir.string(), time, "2", "2"}, scratch.path() / "soak.out");
  Worker churn({"churn", dir.string(), time, "3"}, scratch.path() / "churn.out");
  ASSERT_TRUE(other.spawned());
  ASSERT_TRUE(churn.spawned());

  const test::SoakResult result = test::run_soak({dir, seconds, 4, 1});
  std::printf("this process: %s\n", result.summary().c_str());
  for (const std::string& error : result.counts.first_errors) ADD_FAILURE() << error;
  EXPECT_EQ(result.counts.errors, 0u);
  EXPECT_GT(result.counts.gets, 0u);
  EXPECT_GT(result.counts.replacements, 0u);
  EXPECT_GT(result.counts.prewarms, 0u);
  EXPECT_GT(result.counts.fresh, 0u);

  std::string output;
  EXPECT_EQ(other.wait(output), 0) << output;
  std::printf("second process: %s", output.c_str());
  EXPECT_EQ(churn.wait(output), 0) << output;
  std::printf("third process: %s", output.c_str());

  // Every process is done: nothing half-written may be left, and every entry is whole.
  test::expect_clean_cache(dir, files_under(dir));
  // What the folder serves is exactly the text asked for.
  for (int source = 0; source < test::kSoakSources; ++source) {
    for (int variant = 0; variant < test::kSoakVariants; ++variant) {
      RegistryOptions options = test::sm90_options();
      options.disk_cache = true;
      options.cache_dir = dir;
      Registry reg(options);
      const std::string name = "soak_" + std::to_string(source);
      reg.register_source(name, test::soak_source(source, variant));
      EXPECT_EQ(test::check_soak_binary(reg.compile(name), "sm_90", source, variant), "");
    }
  }
}

}  // namespace
}  // namespace kreg
