// Manifests (src/registry/manifest.hpp): the reader on arbitrary text, as a damaged or
// hand-edited manifest file would give it, and the writer on arbitrary kernel names.
//
// Reader: accepts or throws InvalidArgument naming the file, nothing else; what it accepts
// is a kreg manifest of version 1 exactly, whose kernels it returns in order; written out
// again and read back, they are the same requests, and that text is a fixed point.
// Writer: each line of the input is a kernel name (the last constant set read, if any, goes
// with each); the text it writes reads back to the same requests, or it throws
// InvalidArgument.
#include "registry/manifest.hpp"

#include <kreg/error.hpp>

#include "fuzz_check.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace {

using kreg::KernelRequest;
using kreg::fuzz::refused;
using kreg::registry::manifest_text;
using kreg::registry::parse_manifest;

const char* const kOrigin = "fuzz.json";

bool same(const std::vector<KernelRequest>& a, const std::vector<KernelRequest>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].name != b[i].name ||
        kreg::constants_key(a[i].constants) != kreg::constants_key(b[i].constants)) {
      return false;
    }
  }
  return true;
}

// Written out and read back, `requests` must come back unchanged, and the text must be
// what writing them again gives.
void check_round_trip(const std::vector<KernelRequest>& requests, const std::string& text) {
  std::vector<KernelRequest> back;
  KREG_FUZZ_CHECK(!refused([&] { back = parse_manifest(text, kOrigin); }),
                  "kreg cannot read a manifest it wrote:\n" + text);
  KREG_FUZZ_CHECK(same(back, requests), "a manifest read back differs:\n" + text);
  KREG_FUZZ_CHECK(manifest_text(back) == text, "writing a manifest is not stable:\n" + text);
}

void check_reader(std::string_view text) {
  std::vector<KernelRequest> requests;
  try {
    requests = parse_manifest(text, kOrigin);
  } catch (const kreg::Error& e) {
    KREG_FUZZ_CHECK(e.code() == kreg::ErrorCode::InvalidArgument, e.what());
    KREG_FUZZ_CHECK(std::string_view(e.what()).find(kOrigin) != std::string_view::npos,
                    std::string("the error does not name the file: ") + e.what());
    return;
  }
  // Accepted, so it is JSON; check what it says with the JSON library alone.
  const nlohmann::json json = nlohmann::json::parse(text);
  KREG_FUZZ_CHECK(json.at("format") == "kreg-manifest", "accepted another format");
  KREG_FUZZ_CHECK(json.at("version") == 1, "accepted version " + json.at("version").dump());
  const nlohmann::json& kernels = json.at("kernels");
  KREG_FUZZ_CHECK(kernels.size() == requests.size(), "kernels were lost or added");
  for (std::size_t i = 0; i < requests.size(); ++i) {
    KREG_FUZZ_CHECK(kernels[i].at("name") == requests[i].name,
                    "kernel " + std::to_string(i) + " has another name");
  }
  check_round_trip(requests, manifest_text(requests));
}

void check_writer(std::string_view text) {
  std::vector<KernelRequest> requests;
  kreg::Constants constants;
  std::size_t start = 0;
  while (start < text.size() && requests.size() < 64) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    const std::string_view line = text.substr(start, end - start);
    start = end + 1;
    // A line that is a constant set sets the constants of the names after it.
    if (!refused([&] { constants = kreg::parse_constants(line); })) continue;
    requests.push_back({std::string(line), constants});
  }
  std::string written;
  if (refused([&] { written = manifest_text(requests); })) return;
  check_round_trip(requests, written);
}

}  // namespace

void kreg::fuzz::test_one_input(std::string_view input) {
  check_reader(input);
  check_writer(input);
}
