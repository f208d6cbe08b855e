#pragma once
// The key a binary is kept under outside this process, on disk and in the remote cache alike:
// the request's key text (everything NVRTC is given, the embedded headers by their digests)
// salted with what else shapes the binary and is not in the request. The salt names no path or time
// of this machine, so the same request with the same toolkit gives the same key on every machine of
// a fleet.

#include "registry/tier.hpp"

#include <string>

namespace kreg::registry {

// NVRTC's identity, the toolkit's include folder and the key format's version.
std::string storage_salt();

inline std::string storage_key(const std::string& salt, const BuildRequest& request) {
  return salt + request.key_text;
}

}  // namespace kreg::registry
