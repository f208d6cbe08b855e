#include "compiler/worker_pool.hpp"

#include "test_support.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

namespace kreg::compiler {
namespace {

Request trivial(const std::string& body = "p[0] = 1;") {
  static thread_local std::string source;  // Request holds a view
  source = "extern \"C\" __global__ void k(int* p) { " + body + " }\n";
  Request r;
  r.program_name = "k.cu";
  r.source = source;
  r.arch = "sm_90";
  r.options = {"-minimal"};
  return r;
}

std::string worker() {
  std::string path = WorkerPool::find_executable();
  if (path.empty()) ADD_FAILURE() << "kreg-nvrtc-worker was not built";
  return path;
}

// A stand-in worker written as a shell script.
std::string script(const std::string& name, const std::string& body) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
  std::system(("chmod +x " + path).c_str());
  return path;
}

TEST(WorkerPool, CompilesLikeInProcess) {
  WorkerPool pool(worker(), 2);
  auto remote = pool.compile(trivial());
  ASSERT_TRUE(remote.has_value());
  ASSERT_TRUE(remote->ok) << remote->log;
  const Result local = compile(trivial());
  EXPECT_EQ(remote->image, local.image);
  EXPECT_EQ(pool.started(), 1u);
  // The same worker serves the next request.
  ASSERT_TRUE(pool.compile(trivial("p[0] = 2;")).has_value());
  EXPECT_EQ(pool.started(), 1u);
}

TEST(WorkerPool, ReportsCompileErrorsAsResults) {
  WorkerPool pool(worker(), 1);
  auto result = pool.compile(trivial("p[0] = not_declared;"));
  ASSERT_TRUE(result.has_value());
  EXPECT_FALSE(result->ok);
  EXPECT_NE(result->log.find("not_declared"), std::string::npos) << result->log;
}

TEST(WorkerPool, ManyThreadsShareAFewWorkers) {
  WorkerPool pool(worker(), 2);
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&, t] {
      auto r = pool.compile(trivial("p[0] = " + std::to_string(t) + ";"));
      if (r && r->ok && !r->image.empty()) ++ok;
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(ok.load(), 6);
  EXPECT_LE(pool.started(), 2u);
}

TEST(WorkerPool, MissingExecutableFallsBackAndStopsTrying) {
  WorkerPool pool("/nonexistent/kreg-nvrtc-worker", 2);
  for (int i = 0; i < 5; ++i) EXPECT_FALSE(pool.compile(trivial()).has_value());
  EXPECT_LE(pool.started(), 3u);  // gives up after a few failures
}

TEST(WorkerPool, DyingOrBabblingWorkersAreRetired) {
  WorkerPool dies(script("kreg_dies.sh", "exit 3"), 1);
  EXPECT_FALSE(dies.compile(trivial()).has_value());
  WorkerPool babbles(script("kreg_babbles.sh", "cat /dev/null; printf 'garbage-garbage-garbage'"),
                     1);
  EXPECT_FALSE(babbles.compile(trivial()).has_value());
}

TEST(WorkerPool, FailingWorkersNeverLeaveWaitersHanging) {
  // More callers than workers, and every worker dies: each caller must come back.
  WorkerPool pool(script("kreg_dies_fast.sh", "exit 1"), 2);
  std::vector<std::thread> threads;
  std::atomic<int> returned{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 3; ++i) EXPECT_FALSE(pool.compile(trivial()).has_value());
      ++returned;
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(returned.load(), 8);
}

TEST(WorkerPool, AWorkerThatPrintsOnItsProtocolIsRetired) {
  // The real worker moves its protocol off stdout; one that prints there is broken.
  WorkerPool chatty(script("kreg_chatty.sh", "echo hello; cat >/dev/null"), 1, 2000, {}, 300);
  EXPECT_FALSE(chatty.compile(trivial()).has_value());
}

// What a worker says when it is ready, as a frame a shell's printf can write: the length
// (23, in octal) as a little-endian u64, then the text.
const char* const kReadyFrame =
    "printf '\\027\\000\\000\\000\\000\\000\\000\\000kreg-nvrtc-worker ready'";

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The largest this process has been, in KiB.
long peak_kib() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

TEST(WorkerPool, AWorkerThatNeverSaysItIsReadyIsKilledAndNoMoreAreStarted) {
  // A program that sleeps instead of serving: every caller comes back after the short
  // ready timeout, not the request timeout, and the pool stops starting workers.
  WorkerPool sleeper(script("kreg_sleeper.sh", "exec sleep 600"), 2, 600'000, {}, 300);
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] { EXPECT_FALSE(sleeper.compile(trivial()).has_value()); });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_LT(seconds_since(start), 2.0);
  EXPECT_LE(sleeper.started(), 2u);
  const auto again = std::chrono::steady_clock::now();
  EXPECT_FALSE(sleeper.compile(trivial()).has_value());
  EXPECT_LT(seconds_since(again), 0.1);
  EXPECT_LE(sleeper.started(), 2u);
}

TEST(WorkerPool, AWorkerThatNeverAnswersARequestIsRetiredAfterTheTimeout) {
  WorkerPool silent(script("kreg_silent.sh", std::string(kReadyFrame) + "; cat >/dev/null"), 1,
                    300);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(silent.compile(trivial()).has_value());
  EXPECT_LT(seconds_since(start), 5.0);
  EXPECT_FALSE(silent.compile(trivial()).has_value());
  EXPECT_EQ(silent.started(), 1u);  // not tried again
}

TEST(WorkerPool, AReplyLargerThanAnyBinaryIsRefusedUnread) {
  // 3 GiB announced, then trickled a byte at a time.
  const long before = peak_kib();
  WorkerPool liar(script("kreg_liar.sh", std::string(kReadyFrame) +
                                             "; printf '\\000\\000\\000\\300\\000\\000\\000\\000';"
                                             " while :; do printf x || exit; sleep 0.05; done"),
                  1, 10'000);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(liar.compile(trivial()).has_value());
  EXPECT_LT(seconds_since(start), 2.0);
  EXPECT_LT(peak_kib() - before, 64 * 1024);
}

TEST(WorkerPool, ATrickledReplyCostsWhatArrivedNotWhatWasAnnounced) {
  // 200 MiB announced (under the bound), a byte every 10 ms: memory follows the bytes that
  // came, and the request timeout ends it.
  const long before = peak_kib();
  WorkerPool trickler(
      script("kreg_trickler.sh", std::string(kReadyFrame) +
                                     "; printf '\\000\\000\\200\\014\\000\\000\\000\\000';"
                                     " while :; do printf x || exit; sleep 0.01; done"),
      1, 500);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(trickler.compile(trivial()).has_value());
  EXPECT_LT(seconds_since(start), 3.0);
  EXPECT_LT(peak_kib() - before, 64 * 1024);
}

TEST(WorkerPool, AWorkerWithAnotherNvrtcRefusesToServe) {
  WorkerPool mismatched(worker(), 1, 600'000, "nvrtc 0.0 /elsewhere/libnvrtc.so 1 1");
  EXPECT_FALSE(mismatched.compile(trivial()).has_value());
  WorkerPool matched(worker(), 1);
  EXPECT_TRUE(matched.compile(trivial()).has_value());
}

TEST(WorkerPool, EnvironmentOverridesTheExecutable) {
  const std::string fake = script("kreg_fake_worker.sh", "exit 0");
  ::setenv("KREG_COMPILE_WORKER", fake.c_str(), 1);
  EXPECT_EQ(WorkerPool::find_executable(), fake);
  ::setenv("KREG_COMPILE_WORKER", "/nonexistent", 1);
  EXPECT_EQ(WorkerPool::find_executable(), "");
  ::unsetenv("KREG_COMPILE_WORKER");
}

TEST(WorkerPool, AWorkerOthersCouldHaveWrittenIsNotRun) {
  namespace fs = std::filesystem;
  const std::string fake = script("kreg_guarded_worker.sh", "exit 0");
  ::setenv("KREG_COMPILE_WORKER", fake.c_str(), 1);  // NOLINT(concurrency-mt-unsafe): one thread
  EXPECT_EQ(WorkerPool::find_executable(), fake);    // /tmp is sticky: no one else can replace it
  fs::permissions(fake, fs::perms::others_write, fs::perm_options::add);
  EXPECT_EQ(WorkerPool::find_executable(), "");
  fs::permissions(fake, fs::perms::others_write, fs::perm_options::remove);
  EXPECT_EQ(WorkerPool::find_executable(), fake);

  // In a folder anyone may write to (and not sticky), anyone could have put it there.
  const fs::path open_dir = fs::path(::testing::TempDir()) / "kreg_open_worker_dir";
  fs::create_directories(open_dir);
  fs::permissions(open_dir, fs::perms::all);
  const fs::path planted = open_dir / "kreg-nvrtc-worker";
  fs::copy_file(fake, planted, fs::copy_options::overwrite_existing);
  ::setenv("KREG_COMPILE_WORKER", planted.c_str(), 1);  // NOLINT(concurrency-mt-unsafe)
  EXPECT_EQ(WorkerPool::find_executable(), "");
  fs::permissions(open_dir, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec);
  EXPECT_EQ(WorkerPool::find_executable(), planted.string());

  if (::geteuid() == 0) {  // only root can give a file away
    ASSERT_EQ(::chown(planted.c_str(), 65534, 65534), 0);
    EXPECT_EQ(WorkerPool::find_executable(), "");
  }
  ::unsetenv("KREG_COMPILE_WORKER");  // NOLINT(concurrency-mt-unsafe)
  fs::remove_all(open_dir);
}

}  // namespace
}  // namespace kreg::compiler
