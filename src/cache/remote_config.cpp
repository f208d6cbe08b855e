#include "cache/remote_config.hpp"

#include "core/env.hpp"
#include "core/read_file.hpp"

#include <kreg/error.hpp>

#include <charconv>
#include <limits>

namespace kreg::cache {
namespace {

constexpr const char* kForms =
    "expected redis://host[:port][/db] or unix:///path/to/socket[?db=N], optionally followed "
    "by ?prefix=P&read_only=1&connect_timeout_ms=N&timeout_ms=N&ttl=SECONDS";

// A whole decimal number in [lo, hi].
std::optional<long long> number(std::string_view text, long long lo, long long hi) {
  long long value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size() || value < lo ||
      value > hi) {
    return std::nullopt;
  }
  return value;
}

std::string apply_attribute(std::string_view name, std::string_view value, RemoteConfig& config) {
  constexpr long long kMaxMs = 3'600'000;
  const auto ms = [&] { return number(value, 1, kMaxMs); };
  if (name == "prefix") {
    config.key_prefix = std::string(value);
  } else if (name == "read_only") {
    if (value != "0" && value != "1") return "read_only must be 0 or 1";
    config.read_only = value == "1";
  } else if (name == "db") {
    const auto db = number(value, 0, std::numeric_limits<int>::max());
    if (!db) return "db must be a number";
    config.endpoint.db = static_cast<int>(*db);
  } else if (name == "connect_timeout_ms") {
    const auto v = ms();
    if (!v) return "connect_timeout_ms must be 1 to 3600000";
    config.connect_timeout = std::chrono::milliseconds(*v);
  } else if (name == "timeout_ms") {
    const auto v = ms();
    if (!v) return "timeout_ms must be 1 to 3600000";
    config.operation_timeout = std::chrono::milliseconds(*v);
  } else if (name == "ttl") {
    const auto v = number(value, 0, std::numeric_limits<std::int32_t>::max());
    if (!v) return "ttl must be a number of seconds";
    config.ttl = std::chrono::seconds(*v);
  } else {
    return "unknown attribute '" + std::string(name) + "'";
  }
  return {};
}

std::string apply_query(std::string_view query, RemoteConfig& config) {
  while (!query.empty()) {
    const std::size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    const std::size_t eq = pair.find('=');
    if (eq == std::string_view::npos) return "attribute '" + std::string(pair) + "' has no value";
    if (std::string why = apply_attribute(pair.substr(0, eq), pair.substr(eq + 1), config);
        !why.empty()) {
      return why;
    }
  }
  return {};
}

std::string parse_tcp(std::string_view rest, RemoteEndpoint& endpoint) {
  const std::size_t slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  if (authority.find('@') != std::string_view::npos) {
    return "credentials in the URL are not supported (use a Unix socket or a network only "
           "the fleet reaches)";
  }
  std::string_view host = authority;
  if (!authority.empty() && authority.front() == '[') {  // [::1]:6379
    const std::size_t close = authority.find(']');
    if (close == std::string_view::npos) return "unclosed '[' in the host";
    host = authority.substr(1, close - 1);
    authority.remove_prefix(close + 1);
    if (!authority.empty() && authority.front() != ':') return "junk after the host";
  } else {
    const std::size_t colon = authority.rfind(':');
    host = authority.substr(0, colon);
    authority = colon == std::string_view::npos ? std::string_view() : authority.substr(colon);
  }
  if (host.empty()) return "no host";
  endpoint.host = std::string(host);
  if (!authority.empty()) {  // ":port"
    const auto port = number(authority.substr(1), 1, 65535);
    if (!port) return "the port must be 1 to 65535";
    endpoint.port = static_cast<int>(*port);
  }
  if (slash != std::string_view::npos && slash + 1 < rest.size()) {
    const auto db = number(rest.substr(slash + 1), 0, std::numeric_limits<int>::max());
    if (!db) return "the database after '/' must be a number";
    endpoint.db = static_cast<int>(*db);
  }
  return {};
}

std::string read_secret_file(const std::filesystem::path& path) {
  std::string why;
  std::optional<std::string> read = core::read_regular_file(path, std::uint64_t{64} << 10, why);
  if (!read) {
    throw Error(ErrorCode::InvalidArgument,
                "the remote cache's secret file " + path.string() + " " + why);
  }
  std::string text = read->substr(0, read->find('\n'));
  if (!text.empty() && text.back() == '\r') text.pop_back();
  if (text.empty()) {
    throw Error(ErrorCode::InvalidArgument,
                "the remote cache's secret file " + path.string() + " is empty");
  }
  return text;
}

}  // namespace

std::string parse_remote_url(std::string_view url, RemoteConfig& config) {
  const std::size_t question = url.find('?');
  const std::string_view base = url.substr(0, question);
  RemoteEndpoint endpoint;
  std::string why;
  if (base.starts_with("redis://")) {
    why = parse_tcp(base.substr(8), endpoint);
  } else if (base.starts_with("unix://")) {
    endpoint.unix_socket = true;
    endpoint.path = std::string(base.substr(7));
    if (endpoint.path.empty() || endpoint.path.front() != '/') {
      why = "a Unix socket needs an absolute path (unix:///run/redis.sock)";
    }
  } else if (base.starts_with("rediss://")) {
    why = "TLS (rediss://) is not supported";
  } else {
    why = "unknown scheme";
  }
  if (!why.empty()) return why;
  config.endpoint = std::move(endpoint);
  if (question != std::string_view::npos) why = apply_query(url.substr(question + 1), config);
  return why;
}

std::optional<RemoteConfig> remote_config(const RemoteCacheOptions& options) {
  if (!options.enabled) return std::nullopt;
  const bool from_env = options.url.empty();
  const std::string url =
      from_env ? core::env_string("KREG_REMOTE_CACHE").value_or("") : options.url;
  if (url.empty()) return std::nullopt;
  RemoteConfig config;
  config.url = url;
  config.key_prefix = options.key_prefix;
  config.read_only = options.read_only;
  config.connect_timeout = options.connect_timeout;
  config.operation_timeout = options.operation_timeout;
  config.backoff = options.backoff;
  config.ttl = options.ttl;
  if (const std::string why = parse_remote_url(url, config); !why.empty()) {
    throw Error(ErrorCode::InvalidArgument,
                std::string(from_env ? "KREG_REMOTE_CACHE" : "the remote cache URL") +
                    " '" + url + "' is not usable: " + why + " (" + kForms + ")");
  }
  config.secret = fleet_secret(options.secret, options.secret_file);
  return config;
}

std::string fleet_secret(const std::string& secret, const std::filesystem::path& secret_file) {
  if (!secret.empty()) return secret;
  if (auto value = core::env_string("KREG_REMOTE_CACHE_SECRET"); value && !value->empty()) {
    return *value;
  }
  if (!secret_file.empty()) return read_secret_file(secret_file);
  if (auto file = core::env_string("KREG_REMOTE_CACHE_SECRET_FILE"); file && !file->empty()) {
    return read_secret_file(*file);
  }
  return {};
}

}  // namespace kreg::cache
