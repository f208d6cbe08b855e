#pragma once
// The remote cache's settings as kreg uses them: RemoteCacheOptions merged with the
// environment (KREG_REMOTE_CACHE, KREG_REMOTE_CACHE_SECRET, KREG_REMOTE_CACHE_SECRET_FILE)
// and with the URL's query attributes, the URL parsed into an endpoint.

#include <kreg/types.hpp>

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace kreg::cache {

struct RemoteEndpoint {
  bool unix_socket = false;
  std::string host;  // TCP only
  int port = 6379;   // TCP only
  std::string path;  // Unix socket only
  int db = 0;
};

struct RemoteConfig {
  RemoteEndpoint endpoint;
  std::string url;  // as given, for messages; it never holds the secret
  std::string key_prefix;
  bool read_only = false;
  std::chrono::milliseconds connect_timeout{};
  std::chrono::milliseconds operation_timeout{};
  std::chrono::milliseconds backoff{};
  std::chrono::seconds ttl{};
  std::string secret;  // empty: entries are neither signed nor required to be
};

// The endpoint and attributes of `url` applied to `config`, or "" on success and otherwise
// what is wrong with it.
std::string parse_remote_url(std::string_view url, RemoteConfig& config);

// The settings `options` and the environment give, or std::nullopt when there is no remote
// tier (no URL, or `enabled` false). Throws kreg::Error(InvalidArgument) for a malformed URL
// or attribute, and for a secret file that cannot be read: a fleet that is misconfigured
// should hear it, not run without its cache.
std::optional<RemoteConfig> remote_config(const RemoteCacheOptions& options);

// The secret entries are signed with: `secret`, else KREG_REMOTE_CACHE_SECRET, else the first
// line of `secret_file`, else of KREG_REMOTE_CACHE_SECRET_FILE; empty if none is set. Throws
// kreg::Error(InvalidArgument) for a secret file that cannot be read or is empty.
std::string fleet_secret(const std::string& secret, const std::filesystem::path& secret_file);

}  // namespace kreg::cache
