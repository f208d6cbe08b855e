#include "registry/manifest.hpp"

#include <kreg/error.hpp>

#include <unistd.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>

namespace kreg::registry {
namespace {

constexpr int kVersion = 1;

[[noreturn]] void fail(const std::filesystem::path& path, const std::string& what) {
  throw Error(ErrorCode::InvalidArgument, "kreg: manifest '" + path.string() + "': " + what);
}

}  // namespace

void write_manifest(const std::filesystem::path& path, const std::vector<KernelRequest>& kernels) {
  nlohmann::json json{{"format", "kreg-manifest"}, {"version", kVersion}};
  json["kernels"] = nlohmann::json::array();
  for (const KernelRequest& k : kernels) {
    json["kernels"].push_back({{"name", k.name}, {"constants", constants_key(k.constants)}});
  }
  const std::filesystem::path temp = path.string() + ".tmp" + std::to_string(::getpid());
  {
    std::ofstream out(temp, std::ios::trunc);
    out << json.dump(2) << '\n';
    out.flush();
    if (!out) fail(path, "cannot write " + temp.string());
  }
  std::error_code error;
  std::filesystem::rename(temp, path, error);
  if (error) {
    std::filesystem::remove(temp, error);
    fail(path, "cannot write it: " + error.message());
  }
}

std::vector<KernelRequest> read_manifest(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) fail(path, "cannot be read");
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(text.str());
  } catch (const nlohmann::json::exception& e) {
    fail(path, std::string("not JSON: ") + e.what());
  }
  if (!json.is_object() || json.value("format", "") != "kreg-manifest") {
    fail(path, "not a kreg manifest");
  }
  if (!json.contains("version") || !json["version"].is_number_integer() ||
      json["version"].get<int>() != kVersion) {
    fail(path, "unsupported version (this kreg reads version " + std::to_string(kVersion) + ")");
  }
  if (!json.contains("kernels") || !json["kernels"].is_array()) fail(path, "no kernel list");
  std::vector<KernelRequest> out;
  for (const auto& item : json["kernels"]) {
    if (!item.is_object() || !item.contains("name") || !item["name"].is_string()) {
      fail(path, "a kernel without a name");
    }
    KernelRequest request;
    request.name = item["name"].get<std::string>();
    const auto constants = item.value("constants", std::string());
    try {
      request.constants = parse_constants(constants);
    } catch (const Error& e) {
      fail(path, "kernel '" + request.name + "': " + e.what());
    }
    out.push_back(std::move(request));
  }
  return out;
}

}  // namespace kreg::registry
