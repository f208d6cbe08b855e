#include "registry/manifest.hpp"

#include "core/atomic_file.hpp"
#include "core/read_file.hpp"

#include <kreg/error.hpp>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <limits>
#include <optional>
#include <system_error>

namespace kreg::registry {
namespace {

constexpr int kVersion = 1;
// A million kernels with long names and constants fit in a tenth of this.
constexpr std::uint64_t kMaxManifestBytes = std::uint64_t{64} << 20;

[[noreturn]] void fail(const std::filesystem::path& path, const std::string& what) {
  throw Error(ErrorCode::InvalidArgument, "manifest '" + path.string() + "': " + what);
}

// JSON text is UTF-8, and nlohmann refuses to write any other string, with an exception of
// its own and only once the whole manifest is being written; each name is checked first, so
// that the one refused is named.
void require_utf8(const std::string& name, const char* what = "kernel name") {
  try {
    static_cast<void>(nlohmann::json(name).dump());
  } catch (const nlohmann::json::type_error&) {
    const std::string shown =
        nlohmann::json(name).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    throw Error(ErrorCode::InvalidArgument,
                std::string(what) + " " + shown + " is not UTF-8, so no manifest can hold it");
  }
}

nlohmann::json lookup_json(const TunedLookup& l) {
  require_utf8(l.name);
  require_utf8(l.bucket, "tuning bucket");
  nlohmann::json ints = nlohmann::json::array();
  for (const auto& [index, values] : l.space.ints) ints.push_back({index, values});
  return {{"name", l.name},
          {"bucket", l.bucket},
          {"fixed", constants_key(l.space.fixed)},
          {"ints", std::move(ints)},
          {"bools", l.space.bools}};
}

TunedLookup parse_lookup(const nlohmann::json& item, const std::filesystem::path& origin) {
  const auto is_int = [](const nlohmann::json& j) {
    return j.is_number_integer() && j >= std::numeric_limits<std::int32_t>::min() &&
           j <= std::numeric_limits<std::int32_t>::max();
  };
  if (!item.is_object() || !item.contains("name") || !item["name"].is_string() ||
      !item.contains("bucket") || !item["bucket"].is_string()) {
    fail(origin, "a tuned lookup without a name and a bucket");
  }
  TunedLookup l;
  l.name = item["name"].get<std::string>();
  l.bucket = item["bucket"].get<std::string>();
  const std::string what = "tuned lookup '" + l.name + "' for '" + l.bucket + "': ";
  if (item.contains("fixed")) {
    if (!item["fixed"].is_string()) fail(origin, what + "fixed must be a string");
    try {
      l.space.fixed = parse_constants(item["fixed"].get<std::string>());
    } catch (const Error& e) {
      fail(origin, what + std::string(e.message()));
    }
  }
  if (item.contains("ints")) {
    if (!item["ints"].is_array()) fail(origin, what + "ints must be a list");
    for (const auto& entry : item["ints"]) {
      if (!entry.is_array() || entry.size() != 2 || !is_int(entry[0]) || !entry[1].is_array()) {
        fail(origin, what + "each of ints is [index, [values]]");
      }
      std::vector<std::int32_t> values;
      for (const auto& v : entry[1]) {
        if (!is_int(v)) fail(origin, what + "a value of ints is not a 32-bit integer");
        values.push_back(v.get<std::int32_t>());
      }
      l.space.ints.emplace_back(entry[0].get<int>(), std::move(values));
    }
  }
  if (item.contains("bools")) {
    if (!item["bools"].is_array()) fail(origin, what + "bools must be a list");
    for (const auto& index : item["bools"]) {
      if (!is_int(index)) fail(origin, what + "bools lists constant indices");
      l.space.bools.push_back(index.get<int>());
    }
  }
  return l;
}

}  // namespace

std::string manifest_text(const std::vector<KernelRequest>& kernels,
                          const std::vector<TunedLookup>& lookups) {
  nlohmann::json json{{"format", "kreg-manifest"}, {"version", kVersion}};
  json["kernels"] = nlohmann::json::array();
  for (const KernelRequest& k : kernels) {
    require_utf8(k.name);
    json["kernels"].push_back({{"name", k.name}, {"constants", constants_key(k.constants)}});
  }
  if (!lookups.empty()) {
    json["tuned"] = nlohmann::json::array();
    for (const TunedLookup& l : lookups) json["tuned"].push_back(lookup_json(l));
  }
  return json.dump(2) + "\n";
}

void write_manifest(const std::filesystem::path& path, const std::vector<KernelRequest>& kernels,
                    const std::vector<TunedLookup>& lookups) {
  const std::string text = manifest_text(kernels, lookups);
  const std::filesystem::path dir = path.has_parent_path() ? path.parent_path() : ".";
  if (const int error = core::write_atomically(path, text, dir, 0644); error != 0) {
    fail(path, "cannot write it: " + std::generic_category().message(error));
  }
}

namespace {

// Parsed and checked as JSON; InvalidArgument (naming `origin`) for anything else or for
// anything but a kreg manifest of this version.
nlohmann::json checked_json(std::string_view text, const std::filesystem::path& origin) {
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    fail(origin, std::string("not JSON: ") + e.what());
  }
  // Every field is type-checked before it is read: nlohmann's value() throws its own
  // exceptions on a mistyped field, and a manifest is outside input.
  if (!json.is_object() || !json.contains("format") || !json["format"].is_string() ||
      json["format"].get<std::string>() != "kreg-manifest") {
    fail(origin, "not a kreg manifest");
  }
  // Compared as JSON numbers: get<int>() would wrap 4294967297 to 1.
  if (!json.contains("version") || !json["version"].is_number_integer() ||
      json["version"] != kVersion) {
    fail(origin, "unsupported version (this kreg reads version " + std::to_string(kVersion) + ")");
  }
  return json;
}

}  // namespace

std::vector<TunedLookup> parse_manifest_lookups(std::string_view text,
                                                const std::filesystem::path& origin) {
  const nlohmann::json json = checked_json(text, origin);
  std::vector<TunedLookup> out;
  if (!json.contains("tuned")) return out;
  if (!json["tuned"].is_array()) fail(origin, "tuned must be a list");
  for (const auto& item : json["tuned"]) out.push_back(parse_lookup(item, origin));
  return out;
}

std::vector<KernelRequest> parse_manifest(std::string_view text,
                                          const std::filesystem::path& origin) {
  const nlohmann::json json = checked_json(text, origin);
  if (!json.contains("kernels") || !json["kernels"].is_array()) fail(origin, "no kernel list");
  std::vector<KernelRequest> out;
  for (const auto& item : json["kernels"]) {
    if (!item.is_object() || !item.contains("name") || !item["name"].is_string()) {
      fail(origin, "a kernel without a name");
    }
    KernelRequest request;
    request.name = item["name"].get<std::string>();
    if (item.contains("constants") && !item["constants"].is_string()) {
      fail(origin, "kernel '" + request.name + "': constants must be a string");
    }
    const std::string constants =
        item.contains("constants") ? item["constants"].get<std::string>() : std::string();
    try {
      request.constants = parse_constants(constants);
    } catch (const Error& e) {
      fail(origin, "kernel '" + request.name + "': " + std::string(e.message()));
    }
    out.push_back(std::move(request));
  }
  return out;
}

namespace {

std::string manifest_file(const std::filesystem::path& path) {
  std::string why;
  std::optional<std::string> text = core::read_regular_file(path, kMaxManifestBytes, why);
  if (!text) fail(path, why);
  return std::move(*text);
}

}  // namespace

std::vector<KernelRequest> read_manifest(const std::filesystem::path& path) {
  return parse_manifest(manifest_file(path), path);
}

std::pair<std::vector<KernelRequest>, std::vector<TunedLookup>> read_manifest_and_lookups(
    const std::filesystem::path& path) {
  const std::string text = manifest_file(path);
  return {parse_manifest(text, path), parse_manifest_lookups(text, path)};
}

}  // namespace kreg::registry
