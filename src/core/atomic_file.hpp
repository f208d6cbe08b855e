#pragma once
// Publishing a file in one step: the bytes go to a temp file (created exclusively, never
// through a link), which is fsync'ed and then renamed over the target. A reader sees the old
// file or the new one, never part of one, even if the writer crashes; a crash before the
// fsync cannot publish an empty file.

#include <sys/types.h>

#include <filesystem>
#include <string_view>

namespace kreg::core {

// Writes `bytes` to `path` through a temp file in `temp_dir` (same filesystem as `path`),
// named after `path` with the ".tmp" extension. Returns 0, or the errno of the step that
// failed; the temp file never outlives the call.
int write_atomically(const std::filesystem::path& path, std::string_view bytes,
                     const std::filesystem::path& temp_dir, mode_t mode);

}  // namespace kreg::core
