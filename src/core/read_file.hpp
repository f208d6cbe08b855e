#pragma once
// Reading whole files without letting the file decide how long the read blocks or how much
// memory it takes (manifests, NVRTC's list of the files a compile read): only regular files,
// opened without blocking, and never more than a bound.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace kreg::core {

// Reads from `fd` to its end into `out`, growing `out` as bytes arrive (so a file cannot make
// it allocate what it only claims to hold). False if a read fails or more than `max_bytes`
// arrive; `out` then holds what was read.
bool read_to_end(int fd, std::uint64_t max_bytes, std::string& out);

// The whole of a regular file (after links) of at most `max_bytes`, or std::nullopt with
// `why` saying which rule it broke ("is a FIFO, not a regular file", "is 3 GiB, more than
// the 64 MiB allowed", "cannot be opened: ...").
std::optional<std::string> read_regular_file(const std::filesystem::path& path,
                                             std::uint64_t max_bytes, std::string& why);

}  // namespace kreg::core
