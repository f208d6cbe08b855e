#pragma once
// Reading whole files that come from outside (manifests, cache entries) without letting the
// file decide how long the read blocks or how much memory it takes: only regular files, opened
// without blocking, and never more than a bound.

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace kreg::core {

// What a file of mode `mode` is, for messages: "a folder", "a FIFO", "a device", ...
std::string file_kind(mode_t mode);

// Reads from `fd` to its end into `out`, growing `out` as bytes arrive (so a file cannot make
// it allocate what it only claims to hold). False if a read fails or more than `max_bytes`
// arrive; `out` then holds what was read.
bool read_to_end(int fd, std::uint64_t max_bytes, std::string& out);

// The whole of a regular file (after links) of at most `max_bytes`, or std::nullopt with
// `why` saying which rule it broke ("is a FIFO, not a regular file", "is 3 GiB, more than
// the 64 MiB allowed", "cannot be opened: ...").
std::optional<std::string> read_regular_file(const std::filesystem::path& path,
                                             std::uint64_t max_bytes, std::string& why);

// "64 MiB", "3.2 GiB", "512 bytes": a size for messages.
std::string size_text(std::uint64_t bytes);

}  // namespace kreg::core
