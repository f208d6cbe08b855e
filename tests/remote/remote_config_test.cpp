#include "cache/remote_config.hpp"

#include <kreg/error.hpp>

#include <gtest/gtest.h>

#include <cstdlib>

namespace kreg::cache {
namespace {

RemoteConfig parsed(const std::string& url) {
  RemoteConfig config;
  const std::string why = parse_remote_url(url, config);
  EXPECT_EQ(why, "") << url;
  return config;
}

std::string why_not(const std::string& url) {
  RemoteConfig config;
  return parse_remote_url(url, config);
}

TEST(RemoteConfig, ParsesTcpAndUnixUrls) {
  RemoteConfig a = parsed("redis://cache.internal:6380/3");
  EXPECT_FALSE(a.endpoint.unix_socket);
  EXPECT_EQ(a.endpoint.host, "cache.internal");
  EXPECT_EQ(a.endpoint.port, 6380);
  EXPECT_EQ(a.endpoint.db, 3);
  RemoteConfig b = parsed("redis://10.0.0.7");
  EXPECT_EQ(b.endpoint.port, 6379);
  EXPECT_EQ(b.endpoint.db, 0);
  RemoteConfig c = parsed("redis://[::1]:7000/");
  EXPECT_EQ(c.endpoint.host, "::1");
  EXPECT_EQ(c.endpoint.port, 7000);
  RemoteConfig d = parsed("unix:///run/redis/redis.sock?db=2");
  EXPECT_TRUE(d.endpoint.unix_socket);
  EXPECT_EQ(d.endpoint.path, "/run/redis/redis.sock");
  EXPECT_EQ(d.endpoint.db, 2);
}

TEST(RemoteConfig, QueryAttributesSetTheOptions) {
  RemoteConfig c = parsed(
      "redis://h:1/0?prefix=fleet1:&read_only=1&connect_timeout_ms=50&timeout_ms=250&ttl=3600");
  EXPECT_EQ(c.key_prefix, "fleet1:");
  EXPECT_TRUE(c.read_only);
  EXPECT_EQ(c.connect_timeout.count(), 50);
  EXPECT_EQ(c.operation_timeout.count(), 250);
  EXPECT_EQ(c.ttl.count(), 3600);
}

TEST(RemoteConfig, MalformedUrlsSayWhatIsWrong) {
  EXPECT_EQ(why_not("http://h:6379"), "unknown scheme");
  EXPECT_EQ(why_not("redis//h"), "unknown scheme");
  EXPECT_EQ(why_not("redis://"), "no host");
  EXPECT_EQ(why_not("redis://h:0"), "the port must be 1 to 65535");
  EXPECT_EQ(why_not("redis://h:99999"), "the port must be 1 to 65535");
  EXPECT_EQ(why_not("redis://h:12x"), "the port must be 1 to 65535");
  EXPECT_EQ(why_not("redis://h/db1"), "the database after '/' must be a number");
  EXPECT_NE(why_not("redis://user:pw@h"), "");
  EXPECT_EQ(why_not("rediss://h"), "TLS (rediss://) is not supported");
  EXPECT_NE(why_not("unix://relative.sock"), "");
  EXPECT_EQ(why_not("redis://h?ttl=-1"), "ttl must be a number of seconds");
  EXPECT_EQ(why_not("redis://h?colour=blue"), "unknown attribute 'colour'");
  EXPECT_EQ(why_not("redis://h?read_only"), "attribute 'read_only' has no value");
  EXPECT_EQ(why_not("redis://h?timeout_ms=0"), "timeout_ms must be 1 to 3600000");
}

TEST(RemoteConfig, AMalformedUrlFailsTheRegistryWithTheUrlAndTheForms) {
  RemoteCacheOptions options;
  options.url = "redis:/localhost";
  try {
    remote_config(options);
    FAIL() << "expected InvalidArgument";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
    const std::string what = e.what();
    EXPECT_NE(what.find("'redis:/localhost'"), std::string::npos) << what;
    EXPECT_NE(what.find("redis://host[:port][/db]"), std::string::npos) << what;
  }
}

TEST(RemoteConfig, TheEnvironmentNamesTheServerAndTheSecret) {
  ::setenv("KREG_REMOTE_CACHE", "redis://127.0.0.1:6390", 1);
  ::setenv("KREG_REMOTE_CACHE_SECRET", "s3cret", 1);
  const std::optional<RemoteConfig> config = remote_config({});
  ::unsetenv("KREG_REMOTE_CACHE");
  ::unsetenv("KREG_REMOTE_CACHE_SECRET");
  ASSERT_TRUE(config.has_value());
  EXPECT_EQ(config->endpoint.port, 6390);
  EXPECT_EQ(config->secret, "s3cret");
  EXPECT_EQ(config->connect_timeout.count(), 100);  // the defaults
  EXPECT_LT(config->operation_timeout.count(), 1000);
  EXPECT_FALSE(remote_config({}).has_value());  // no URL: no remote tier
  RemoteCacheOptions off;
  off.url = "redis://h";
  off.enabled = false;
  EXPECT_FALSE(remote_config(off).has_value());
}

}  // namespace
}  // namespace kreg::cache
