#include "registry/manifest.hpp"

#include "core/atomic_file.hpp"
#include "core/read_file.hpp"

#include <kreg/error.hpp>

#include <nlohmann/json.hpp>

#include <cstdint>
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
void require_utf8(const std::string& name) {
  try {
    static_cast<void>(nlohmann::json(name).dump());
  } catch (const nlohmann::json::type_error&) {
    const std::string shown =
        nlohmann::json(name).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    throw Error(ErrorCode::InvalidArgument,
                "kernel name " + shown + " is not UTF-8, so no manifest can hold it");
  }
}

}  // namespace

std::string manifest_text(const std::vector<KernelRequest>& kernels) {
  nlohmann::json json{{"format", "kreg-manifest"}, {"version", kVersion}};
  json["kernels"] = nlohmann::json::array();
  for (const KernelRequest& k : kernels) {
    require_utf8(k.name);
    json["kernels"].push_back({{"name", k.name}, {"constants", constants_key(k.constants)}});
  }
  return json.dump(2) + "\n";
}

void write_manifest(const std::filesystem::path& path, const std::vector<KernelRequest>& kernels) {
  const std::string text = manifest_text(kernels);
  const std::filesystem::path dir = path.has_parent_path() ? path.parent_path() : ".";
  if (const int error = core::write_atomically(path, text, dir, 0644); error != 0) {
    fail(path, "cannot write it: " + std::generic_category().message(error));
  }
}

std::vector<KernelRequest> parse_manifest(std::string_view text,
                                          const std::filesystem::path& origin) {
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

std::vector<KernelRequest> read_manifest(const std::filesystem::path& path) {
  std::string why;
  const std::optional<std::string> text = core::read_regular_file(path, kMaxManifestBytes, why);
  if (!text) fail(path, why);
  return parse_manifest(*text, path);
}

}  // namespace kreg::registry
