#pragma once
// Checks a disk cache folder after a test is done with it: nothing half-written is left and
// every entry reads back whole.

#include "cache/disk_cache.hpp"
#include "cache/entry.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

namespace kreg::test {

// Every file under `dir` is an entry at its place (v<format>/<2 hex>/<32 hex>.kbin), the temp
// folder is empty, and each entry decodes under its own name; `entries` of them.
inline void expect_clean_cache(const std::filesystem::path& dir, std::size_t entries) {
  namespace fs = std::filesystem;
  const fs::path root = dir / ("v" + std::to_string(cache::kFormatVersion));
  if (!fs::exists(dir)) {
    EXPECT_EQ(entries, 0u) << dir << " does not exist";
    return;
  }
  std::size_t files = 0;
  std::error_code error;
  for (fs::recursive_directory_iterator it(dir, error), end; !error && it != end;
       it.increment(error)) {
    if (it->is_directory()) continue;
    const fs::path& path = it->path();
    ++files;
    EXPECT_EQ(path.extension(), ".kbin") << "left behind: " << path;
    EXPECT_EQ(path.parent_path().parent_path(), root) << "out of place: " << path;
    EXPECT_EQ(path.stem().string().substr(0, 2), path.parent_path().filename().string()) << path;
  }
  EXPECT_FALSE(error) << error.message();
  EXPECT_EQ(files, entries);
  cache::DiskCache inspect(dir, 0, false);
  const cache::DiskCache::Verify verify = inspect.verify(false);
  EXPECT_EQ(verify.bad, 0u);
  EXPECT_EQ(verify.good, entries);
}

}  // namespace kreg::test
