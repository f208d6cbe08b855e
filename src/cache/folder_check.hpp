#pragma once
// Whether kreg can keep its cache in a folder, told without creating or changing anything,
// and why not when it cannot. The disk cache refuses a folder for the same reasons when it
// opens one, so `kreg doctor` says beforehand what a registry will do.

#include <kreg/cache.hpp>

#include <sys/stat.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace kreg::cache {

// Why `path`, as lstat describes it in `st`, is not a folder kreg trusts with executable
// code: not a real folder (a link, a file, a FIFO), owned by another user, or writable by
// group or others. std::nullopt when it is one.
std::optional<std::string> refusal(const std::filesystem::path& path, const struct stat& st);

struct FolderCheck {
  CacheState state = CacheState::Unusable;
  std::string note;  // empty when Ready; else why, or what will be created
};

// Looks at `folders`, each inside the one before it (the cache folder, then kreg's folders in
// it). The first that does not exist, and those after it, would be created: the check is
// then that the nearest folder that exists lets this user create folders in it.
FolderCheck check_folders(const std::vector<std::filesystem::path>& folders);

}  // namespace kreg::cache
