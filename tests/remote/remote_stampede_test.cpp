// Many processes on one Redis at once, on the same cold keys, some killed at random moments:
// afterwards no value on the server is damaged, and a fresh process is served every kernel
// from Redis, byte-identical to a fresh compile.
#include "remote/remote_support.hpp"
#include "test_support.hpp"

#include <random>
#include <thread>

namespace kreg {
namespace {

TEST(RemoteStampede, ProcessesKilledAtRandomLeaveNoCorruptValue) {
  KREG_REQUIRE_REDIS();
  test::ScratchDir scratch("kreg_stampede_");
  test::RedisServer server(scratch.path() / "redis");
  ASSERT_TRUE(server.running()) << server.error();
  constexpr int kKernels = 8;
  constexpr int kProcesses = 6;
  std::mt19937 rng(7);
  std::size_t killed = 0;
  std::size_t finished = 0;
  for (int wave = 0; wave < 2; ++wave) {
    std::vector<std::unique_ptr<test::Worker>> workers;
    for (int p = 0; p < kProcesses; ++p) {
      const std::string name = "w" + std::to_string(wave) + "_" + std::to_string(p);
      workers.push_back(std::make_unique<test::Worker>(
          scratch.path() / (name + ".out"),
          std::vector<std::string>{(scratch.path() / (name + "_cache")).string(), server.url(),
                                   std::to_string(kKernels)}));
    }
    // Half get a kill at a random moment of their run (a cold run takes ~100-300 ms here).
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::pair<int, std::size_t>> kills;
    for (std::size_t p = 0; p < workers.size(); ++p) {
      if (rng() % 2 == 0) kills.emplace_back(static_cast<int>(20 + rng() % 200), p);
    }
    std::sort(kills.begin(), kills.end());
    for (const auto& [at, p] : kills) {
      std::this_thread::sleep_until(start + std::chrono::milliseconds(at));
      ::kill(workers[p]->pid(), SIGKILL);
    }
    for (auto& worker : workers) {
      const int status = worker->wait();
      if (WIFSIGNALED(status)) {
        EXPECT_EQ(WTERMSIG(status), SIGKILL) << "a worker crashed";
        ++killed;
      } else {
        EXPECT_EQ(WEXITSTATUS(status), 0) << "a worker failed to build every kernel";
        ++finished;
      }
    }
  }
  EXPECT_GT(finished, 0u);
  std::printf("stampede: %zu workers killed, %zu finished\n", killed, finished);
  auto redis = server.connect();
  ASSERT_NE(redis, nullptr);
  std::size_t good = 0;
  EXPECT_TRUE(test::server_values_are_whole(*redis, "kreg:", "", good));
  EXPECT_EQ(good, static_cast<std::size_t>(kKernels));
  const auto fresh = test::run_worker(scratch.path(), "fresh", server.url(), kKernels);
  EXPECT_EQ(fresh.at("compiles"), "0");
  Registry check(test::remote_options(scratch.path() / "fresh_cache", ""));
  const auto names = test::register_remote_sources(check, kKernels);
  EXPECT_EQ(test::images_of(check, names), test::reference_images(kKernels));
}

}  // namespace
}  // namespace kreg
