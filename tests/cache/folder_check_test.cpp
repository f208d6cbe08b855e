#include "cache/folder_check.hpp"
#include "cache/disk_cache.hpp"
#include "cache/entry.hpp"
#include "test_support.hpp"

#include <kreg/cache.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace kreg::cache {
namespace {

namespace fs = std::filesystem;
using test::contains;

class FolderCheckTest : public ::testing::Test {
 protected:
  test::ScratchDir scratch_{"kreg_folder_"};
  const fs::path& dir_ = scratch_.path();
  const std::string format_ = "v" + std::to_string(kFormatVersion);
};

TEST_F(FolderCheckTest, AMissingFolderWillBeCreatedAndIsNot) {
  const FolderCheck check = DiskCache::inspect(dir_ / "a" / "b");
  EXPECT_EQ(check.state, CacheState::WillBeCreated);
  EXPECT_EQ(check.note, "does not exist yet; kreg will create it");
  const CacheUsage usage = cache_usage(dir_ / "a" / "b");
  EXPECT_TRUE(usage.usable);
  EXPECT_EQ(usage.entries, 0u);
  EXPECT_FALSE(fs::exists(dir_));
}

TEST_F(FolderCheckTest, AnEmptyFolderOfOursHoldsNoEntriesYet) {
  fs::create_directory(dir_);
  fs::permissions(dir_, fs::perms::owner_all);
  const FolderCheck check = DiskCache::inspect(dir_);
  EXPECT_EQ(check.state, CacheState::WillBeCreated);
  EXPECT_EQ(check.note, "holds no entries yet; kreg will create them");
}

TEST_F(FolderCheckTest, AFolderARegistryMadeIsReady) {
  DiskCache(dir_, 0).store("k", "v");
  const FolderCheck check = DiskCache::inspect(dir_);
  EXPECT_EQ(check.state, CacheState::Ready);
  EXPECT_EQ(check.note, "");
  EXPECT_EQ(cache_usage(dir_).entries, 1u);
}

TEST_F(FolderCheckTest, EachRefusalNamesThePathAndTheReason) {
  fs::create_directory(dir_);
  const fs::path file = dir_ / "file";
  std::ofstream(file) << "x";
  const fs::path fifo = dir_ / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const fs::path open = dir_ / "open";
  fs::create_directory(open);
  fs::permissions(open, fs::perms::all);
  const fs::path link = dir_ / "link";
  fs::create_directory_symlink(dir_, link);
  struct Case {
    fs::path path;
    std::string why;
  } cases[] = {
      {file, file.string() + " is a file, not a folder"},
      {fifo, fifo.string() + " is a FIFO, not a folder"},
      {open, open.string() + " is writable by others (mode 0777)"},
      {link, link.string() + " is a symbolic link"},
      {file / "cache", "cannot create " + (file / "cache").string() + ": " + file.string() +
                           " is a file, not a folder"},
  };
  for (const Case& c : cases) {
    const FolderCheck check = DiskCache::inspect(c.path);
    EXPECT_EQ(check.state, CacheState::Unusable) << c.path;
    EXPECT_EQ(check.note, c.why);
    const CacheUsage usage = cache_usage(c.path);
    EXPECT_FALSE(usage.usable) << c.path;
    EXPECT_EQ(usage.note, c.why);
  }
}

TEST_F(FolderCheckTest, AGroupWritableFolderIsRefusedByInspectionAndByOpening) {
  fs::create_directory(dir_);
  fs::permissions(dir_, fs::perms::owner_all | fs::perms::group_all);
  const FolderCheck check = DiskCache::inspect(dir_);
  EXPECT_EQ(check.state, CacheState::Unusable);
  EXPECT_TRUE(contains(check.note, "is writable by its group (mode 0770)")) << check.note;
  EXPECT_FALSE(DiskCache(dir_, 0).usable());
}

TEST_F(FolderCheckTest, KregsOwnFoldersAreJudgedToo) {
  fs::create_directory(dir_);
  fs::permissions(dir_, fs::perms::owner_all);
  std::ofstream(dir_ / format_) << "x";
  const FolderCheck check = DiskCache::inspect(dir_);
  EXPECT_EQ(check.state, CacheState::Unusable);
  EXPECT_EQ(check.note, (dir_ / format_).string() + " is a file, not a folder");
}

TEST_F(FolderCheckTest, AFolderThisUserCannotWriteIsReadOnlyOrUnusable) {
  if (::geteuid() == 0) GTEST_SKIP() << "root may write to any folder";
  DiskCache(dir_, 0).store("k", "v");
  fs::permissions(dir_, fs::perms::owner_read | fs::perms::owner_exec);
  FolderCheck check = DiskCache::inspect(dir_);
  EXPECT_EQ(check.state, CacheState::ReadOnly);
  EXPECT_TRUE(contains(check.note, "is not writable by this user (mode 0500)")) << check.note;
  EXPECT_EQ(cache_usage(dir_).entries, 1u);
  check = DiskCache::inspect(dir_ / "below");
  EXPECT_EQ(check.state, CacheState::Unusable);
  EXPECT_TRUE(contains(check.note, "cannot create")) << check.note;
  fs::permissions(dir_, fs::perms::owner_all);
}

}  // namespace
}  // namespace kreg::cache
