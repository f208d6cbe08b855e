// The remote tier against a real redis-server: hits across processes, and every way the
// server can fail or lie. Every get must succeed, none may wait much past the timeout, and
// no binary other than a fresh compile's may ever be used.
#include "remote/remote_support.hpp"
#include "test_support.hpp"

#include <chrono>

namespace kreg {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr int kKernels = 6;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

class RemoteTier : public ::testing::Test {
 protected:
  void SetUp() override {
    KREG_REQUIRE_REDIS();
    server_ = std::make_unique<test::RedisServer>(dir() / "redis", server_args());
    ASSERT_TRUE(server_->running()) << server_->error();
    redis_ = server_->connect();
    ASSERT_NE(redis_, nullptr);
  }
  virtual std::vector<std::string> server_args() const { return {}; }

  const fs::path& dir() const { return scratch_.path(); }
  // A registry with an empty disk cache of its own (`name`) and the test's server.
  RegistryOptions options(const std::string& name) const {
    RegistryOptions o = test::remote_options(dir() / name, server_->url());
    o.remote.operation_timeout = std::chrono::milliseconds(200);
    o.remote.backoff = std::chrono::milliseconds(60000);
    return o;
  }
  // Fills the server from a registry of its own, and returns what it built.
  std::vector<std::string> fill(const std::string& secret = {}) {
    RegistryOptions o = options("filler" + std::to_string(fills_++));  // an empty disk each time
    o.remote.secret = secret;
    Registry reg(o);
    std::vector<std::string> images =
        test::images_of(reg, test::register_remote_sources(reg, kKernels));
    reg.flush_disk_cache();
    EXPECT_EQ(test::server_keys(*redis_).size(), static_cast<std::size_t>(kKernels));
    return images;
  }

  test::ScratchDir scratch_{"kreg_remote_"};
  int fills_ = 0;
  std::unique_ptr<test::RedisServer> server_;
  std::unique_ptr<cache::RedisConnection> redis_;
};

TEST_F(RemoteTier, AProcessWithAnEmptyDiskIsServedFromRedisWithZeroCompiles) {
  const auto a = test::run_worker(dir(), "a", server_->url(), kKernels);
  EXPECT_EQ(a.at("compiles"), std::to_string(kKernels));
  EXPECT_EQ(a.at("remote_hits"), "0");
  const auto b = test::run_worker(dir(), "b", server_->url(), kKernels);
  EXPECT_EQ(b.at("compiles"), "0");
  EXPECT_EQ(b.at("remote_hits"), std::to_string(kKernels));
  EXPECT_EQ(b.at("images"), a.at("images"));  // byte-identical binaries
  // The hits were kept on B's disk: a third process on that disk asks Redis nothing.
  Registry c(test::remote_options(dir() / "b_cache", ""));
  const auto names = test::register_remote_sources(c, kKernels);
  EXPECT_EQ(test::images_of(c, names), test::reference_images(kKernels));
  EXPECT_EQ(c.stats().disk_hits, static_cast<std::uint64_t>(kKernels));
  EXPECT_EQ(c.stats().compiles, 0u);
}

TEST_F(RemoteTier, HitsComeBackCheckedAndReportTheirOrigin) {
  fill();
  Registry reg(options("reader"));
  const auto names = test::register_remote_sources(reg, kKernels);
  for (const std::string& name : names) EXPECT_EQ(reg.compile(name).origin(), Origin::Remote);
  const Stats s = reg.stats();
  EXPECT_EQ(s.remote_hits, static_cast<std::uint64_t>(kKernels));
  EXPECT_EQ(s.remote_misses, 0u);
  EXPECT_EQ(s.remote_errors, 0u);
  EXPECT_GT(s.remote_ms, 0.0);
  EXPECT_EQ(test::images_of(reg, names), test::reference_images(kKernels));
}

TEST_F(RemoteTier, AServerKilledMidRunCostsNothingButCompiles) {
  fill();
  Registry reg(options("reader"));
  const auto names = test::register_remote_sources(reg, kKernels);
  EXPECT_EQ(reg.compile(names[0]).origin(), Origin::Remote);
  server_->kill();
  const auto start = Clock::now();
  for (std::size_t i = 1; i < names.size(); ++i) {
    EXPECT_EQ(reg.compile(names[i]).origin(), Origin::Compiled);
  }
  reg.flush_disk_cache();  // the write-backs are skipped, not waited for
  const Stats s = reg.stats();
  EXPECT_EQ(s.remote_errors, 1u);  // one failure, then the back-off skips the server
  EXPECT_LT(s.remote_ms, 100.0);
  EXPECT_LT(ms_since(start), 5000.0);
  EXPECT_EQ(test::images_of(reg, names), test::reference_images(kKernels));
}

TEST_F(RemoteTier, AServerRestartedUnderKeptConnectionsIsNotAnOutage) {
  fill();
  Registry reg(options("reader"));
  const auto names = test::register_remote_sources(reg, kKernels);
  EXPECT_EQ(reg.compile(names[0]).origin(), Origin::Remote);  // leaves a connection kept
  server_->kill();
  server_->start();
  ASSERT_TRUE(server_->running()) << server_->error();
  redis_ = server_->connect();
  fill();  // the restarted server starts empty
  EXPECT_EQ(reg.compile(names[1]).origin(), Origin::Remote);
  EXPECT_EQ(reg.stats().remote_errors, 0u);
}

TEST_F(RemoteTier, AHungServerCostsOneTimeoutThenIsSkipped) {
  fill();
  server_->stop();
  Registry reg(options("reader"));
  const auto names = test::register_remote_sources(reg, kKernels);
  const auto start = Clock::now();
  for (const std::string& name : names) EXPECT_EQ(reg.compile(name).origin(), Origin::Compiled);
  const auto flush_start = Clock::now();
  reg.flush_disk_cache();  // write-backs to the hung server are skipped in the back-off
  EXPECT_LT(ms_since(flush_start), 300.0);
  const Stats s = reg.stats();
  server_->resume();
  EXPECT_EQ(s.remote_errors, 1u);
  // One wait of the 200 ms operation timeout, and a little more.
  EXPECT_GE(s.remote_ms, 190.0);
  EXPECT_LT(s.remote_ms, 400.0);
  EXPECT_LT(ms_since(start), s.compile_ms + 1500.0);
  EXPECT_EQ(test::images_of(reg, names), test::reference_images(kKernels));
}

TEST_F(RemoteTier, AServerHungDuringAWriteDoesNotHoldUpFlush) {
  Registry reg(options("writer"));
  const auto names = test::register_remote_sources(reg, kKernels);
  server_->stop();
  for (const std::string& name : names) reg.compile(name);
  const auto start = Clock::now();
  reg.flush_disk_cache();
  EXPECT_LT(ms_since(start), 1000.0);  // the first write times out, the rest are skipped
  server_->resume();
  EXPECT_EQ(reg.stats().compiles, static_cast<std::uint64_t>(kKernels));
  EXPECT_GE(reg.stats().remote_errors, 1u);
}

TEST_F(RemoteTier, TruncatedOrAlteredValuesAreMissesAndAreReplaced) {
  fill();
  const std::vector<std::string> keys = test::server_keys(*redis_);
  for (std::size_t i = 0; i < keys.size(); ++i) {
    std::string value = redis_->command({"GET", keys[i]}).text;
    if (i % 3 == 0) value.resize(value.size() / 2);                         // truncated
    if (i % 3 == 1) value[value.size() - 40] ^= 0x01;                       // one bit of the binary
    if (i % 3 == 2) value = cache::encode_entry("another key", "payload");  // a foreign entry
    ASSERT_EQ(redis_->command({"SET", keys[i], value}).status, cache::RedisReply::Status::Ok);
  }
  {
    Registry reg(options("reader"));
    const auto names = test::register_remote_sources(reg, kKernels);
    EXPECT_EQ(test::images_of(reg, names), test::reference_images(kKernels));
    const Stats s = reg.stats();
    EXPECT_EQ(s.compiles, static_cast<std::uint64_t>(kKernels));
    EXPECT_EQ(s.remote_hits, 0u);
    EXPECT_EQ(s.remote_rejected, static_cast<std::uint64_t>(kKernels));
  }  // its compiles are written back over the bad values
  std::size_t good = 0;
  EXPECT_TRUE(test::server_values_are_whole(*redis_, "kreg:", "", good));
  EXPECT_EQ(good, static_cast<std::size_t>(kKernels));
  Registry again(options("again"));
  test::register_remote_sources(again, kKernels);
  EXPECT_EQ(again.compile("remote_k0").origin(), Origin::Remote);
}

TEST_F(RemoteTier, WithASecretOnlyValuesSignedWithItAreUsed) {
  fill("secret A");
  RegistryOptions other = options("other_secret");
  other.remote.secret = "secret B";
  {
    Registry reg(other);
    const auto names = test::register_remote_sources(reg, kKernels);
    EXPECT_EQ(test::images_of(reg, names), test::reference_images(kKernels));
    EXPECT_EQ(reg.stats().remote_rejected, static_cast<std::uint64_t>(kKernels));
    EXPECT_EQ(reg.stats().compiles, static_cast<std::uint64_t>(kKernels));
  }
  // An unsigned value, written by someone without the secret, is refused too.
  redis_->command({"FLUSHALL"});
  fill();
  RegistryOptions signed_reader = options("signed_reader");
  signed_reader.remote.secret = "secret A";
  Registry reg(signed_reader);
  const auto names = test::register_remote_sources(reg, kKernels);
  EXPECT_EQ(test::images_of(reg, names), test::reference_images(kKernels));
  EXPECT_EQ(reg.stats().remote_hits, 0u);
  EXPECT_EQ(reg.stats().remote_rejected, static_cast<std::uint64_t>(kKernels));
}

TEST_F(RemoteTier, SignedValuesServeReadersWithTheSameSecret) {
  fill("secret A");
  RegistryOptions o = options("reader");
  o.remote.secret = "secret A";
  Registry reg(o);
  const auto names = test::register_remote_sources(reg, kKernels);
  EXPECT_EQ(test::images_of(reg, names), test::reference_images(kKernels));
  EXPECT_EQ(reg.stats().remote_hits, static_cast<std::uint64_t>(kKernels));
  std::size_t good = 0;
  EXPECT_TRUE(test::server_values_are_whole(*redis_, "kreg:", "secret A", good));
}

TEST_F(RemoteTier, ReadOnlyWritesNothingAndPrefixAndTtlApply) {
  RegistryOptions read_only = options("read_only");
  read_only.remote.read_only = true;
  {
    Registry reg(read_only);
    test::images_of(reg, test::register_remote_sources(reg, kKernels));
  }
  EXPECT_TRUE(test::server_keys(*redis_).empty());
  RegistryOptions prefixed = options("prefixed");
  prefixed.remote.key_prefix = "team7:";
  prefixed.remote.ttl = std::chrono::seconds(600);
  {
    Registry reg(prefixed);
    test::images_of(reg, test::register_remote_sources(reg, kKernels));
  }
  const std::vector<std::string> keys = test::server_keys(*redis_);
  ASSERT_EQ(keys.size(), static_cast<std::size_t>(kKernels));
  for (const std::string& key : keys) {
    EXPECT_EQ(key.rfind("team7:", 0), 0u) << key;
    const long long ttl = redis_->command({"TTL", key}).integer;
    EXPECT_GT(ttl, 500);
    EXPECT_LE(ttl, 600);
  }
}

class FullRemoteTier : public RemoteTier {
 protected:
  // Full from the start: every write is refused with an OOM error.
  std::vector<std::string> server_args() const override {
    return {"--maxmemory", "1", "--maxmemory-policy", "noeviction"};
  }
};

TEST_F(FullRemoteTier, RefusedWritesAreSkippedAndGetsStillSucceed) {
  Registry reg(options("writer"));
  const auto names = test::register_remote_sources(reg, kKernels);
  EXPECT_EQ(test::images_of(reg, names), test::reference_images(kKernels));
  reg.flush_disk_cache();
  EXPECT_TRUE(test::server_keys(*redis_).empty());
  const Stats s = reg.stats();
  EXPECT_EQ(s.remote_errors, 1u);  // the first refusal; later writes wait out the back-off
  EXPECT_EQ(s.remote_misses, static_cast<std::uint64_t>(kKernels));  // reads go on
}

TEST(RemoteTierNoServer, ADeadServerCostsLessThanTheConnectTimeout) {
  test::ScratchDir scratch("kreg_remote_dead_");
  RegistryOptions o = test::remote_options(scratch.path() / "cache",
                                           "unix://" + (scratch.path() / "none.sock").string());
  Registry reg(o);
  const auto names = test::register_remote_sources(reg, 2);
  for (const std::string& name : names) EXPECT_EQ(reg.compile(name).origin(), Origin::Compiled);
  EXPECT_EQ(reg.stats().remote_errors, 1u);
  EXPECT_LT(reg.stats().remote_ms, 100.0);
  RegistryOptions tcp = test::remote_options(scratch.path() / "cache2", "redis://127.0.0.1:1");
  Registry reg2(tcp);
  test::register_remote_sources(reg2, 1);
  EXPECT_EQ(reg2.compile("remote_k0").origin(), Origin::Compiled);
  EXPECT_LT(reg2.stats().remote_ms, 100.0);
}

// Tuning records travel as binaries do: a member with an empty disk and the same secret
// times nothing; one with another secret refuses them and times everything.
TEST_F(RemoteTier, TuningRecordsAreSharedSignedThroughTheServer) {
  const char* source = R"(
#include <kreg/kernel.cuh>
KREG_CONSTANT_DEFAULT(int, tile, 300, 32);
extern "C" __global__ void tiled(int* out) { out[0] = tile; }
)";
  TuneSpace space;
  space.ints = {{300, {16, 32, 64}}};
  int timed = 0;
  TuneOptions fake;
  fake.timer = [&timed](const Constants& c, const std::function<void()>&) {
    ++timed;
    return 1.0 + (c.ints[0].second == 64 ? 0.0 : 1.0);
  };
  const auto tune_on = [&](const std::string& name, const std::string& secret) {
    RegistryOptions o = options(name);
    o.arch = "sm_90";
    o.remote.secret = secret;
    Registry reg(o);
    reg.register_source("tiled", source);
    const TuneResult r = reg.tune("tiled", space, "bucket", {}, fake);
    EXPECT_EQ(constants_key(r.winner), "300:i64") << name;
    reg.flush_disk_cache();
    return std::make_pair(r.timed, reg.stats().remote_rejected);
  };
  EXPECT_EQ(tune_on("first", "secret A").first, 3U);
  const auto [member_timed, member_rejected] = tune_on("member", "secret A");
  EXPECT_EQ(member_timed, 0U);
  EXPECT_EQ(member_rejected, 0U);
  const auto [other_timed, other_rejected] = tune_on("other", "secret B");
  EXPECT_EQ(other_timed, 3U);
  EXPECT_EQ(other_rejected, 6U);  // three records, and the three binaries it then compiles
  EXPECT_EQ(timed, 6);
}

}  // namespace
}  // namespace kreg
