#pragma once
// Binaries compiled at build time (by tools/precompile) and embedded in the library. Each is
// keyed by the XXH3-128 of the exact compile request a run-time compile would make, so a
// hit is byte-for-byte what NVRTC would produce now, and anything that differs (another
// arch, a replaced source, other options or constants) simply misses.

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace kreg::cache {

struct PrecompiledEntry {
  std::string_view digest;     // key_digest of the request's key (compiler::encode_key)
  std::string_view source;     // for reports only
  std::string_view constants;  // canonical key, for reports only
  std::string_view arch;       // for reports only
  std::string_view payload;    // compiler::encode(Result)
};

// The embedded set (generated at build time).
std::span<const PrecompiledEntry> precompiled_entries();

// The payload for a request's key text (compiler::encode_key), if it was precompiled. It
// views the embedded set, which lives as long as the process.
std::optional<std::string_view> find_precompiled(std::string_view key_text);

}  // namespace kreg::cache
