#include "cache/disk_cache.hpp"

#include "cache/background_writer.hpp"
#include "cache/entry.hpp"
#include "test_support.hpp"

#include <kreg/cache.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

namespace kreg::cache {
namespace {

namespace fs = std::filesystem;

// A fresh folder per test, removed afterwards.
class DiskCacheTest : public ::testing::Test {
 protected:
  fs::path entry_file(const std::string& key) const {
    const std::string digest = key_digest(key);
    return dir_ / ("v" + std::to_string(kFormatVersion)) / digest.substr(0, 2) / (digest + ".kbin");
  }
  static std::string read(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
  }
  static void write(const fs::path& p, const std::string& bytes) {
    std::ofstream(p, std::ios::binary | std::ios::trunc) << bytes;
  }
  test::ScratchDir scratch_{"kreg_disk_"};
  const fs::path& dir_ = scratch_.path();
};

TEST_F(DiskCacheTest, BackgroundWritesLandByFlushAndByDestruction) {
  DiskCache cache(dir_, 0);
  const auto to_disk = [&cache](const std::string& key, const std::string& payload) {
    cache.store(key, payload);
  };
  {
    BackgroundWriter writer(to_disk);
    for (int i = 0; i < 50; ++i) writer.submit("w" + std::to_string(i), std::string(1000, 'x'));
    writer.flush();
    for (int i = 0; i < 50; ++i) {
      EXPECT_EQ(cache.load("w" + std::to_string(i)).value_or(""), std::string(1000, 'x')) << i;
    }
    for (int i = 0; i < 50; ++i) writer.submit("later" + std::to_string(i), "y");
  }  // the destructor drains the queue
  for (int i = 0; i < 50; ++i) EXPECT_EQ(cache.load("later" + std::to_string(i)).value_or(""), "y");
  EXPECT_EQ(cache.usage().entries, 100u);
  BackgroundWriter idle(to_disk);
  idle.flush();  // nothing queued: returns at once
}

TEST_F(DiskCacheTest, StoresAndLoadsWithPrivatePermissions) {
  DiskCache cache(dir_, 0);
  ASSERT_TRUE(cache.usable());
  EXPECT_FALSE(cache.load("k1").has_value());
  cache.store("k1", "payload one");
  EXPECT_EQ(cache.load("k1").value_or(""), "payload one");
  EXPECT_FALSE(cache.load("k2").has_value());
  struct stat st {};
  ASSERT_EQ(::stat(dir_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  ASSERT_EQ(::stat(entry_file("k1").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(cache.usage().entries, 1u);
}

TEST_F(DiskCacheTest, CorruptEntriesAreMissesAndGetReplaced) {
  DiskCache cache(dir_, 0);
  cache.store("key", "good payload");
  const std::string good = read(entry_file("key"));
  std::string flipped = good;
  flipped[good.size() / 2] ^= 0x10;
  std::string wrong_version = good;
  wrong_version[8] ^= 0x7f;
  const std::string other_key = encode_entry("another key", "good payload");
  for (const std::string& bad :
       {good.substr(0, good.size() / 2), std::string(), flipped, wrong_version, other_key}) {
    write(entry_file("key"), bad);
    EXPECT_FALSE(cache.load("key").has_value());
    cache.store("key", "good payload");  // what the registry does after recompiling
    EXPECT_EQ(cache.load("key").value_or(""), "good payload");
  }
}

TEST_F(DiskCacheTest, EvictionHoldsTheBoundAndKeepsRecentlyUsed) {
  constexpr std::uint64_t kMax = 64 * 1024;
  DiskCache cache(dir_, kMax);
  const std::string payload(4000, 'p');
  cache.store("keep", payload);
  for (int i = 0; i < 60; ++i) {
    cache.store("filler" + std::to_string(i), payload);
    // Entries are aged by modification time; make the order unambiguous.
    fs::last_write_time(
        entry_file("filler" + std::to_string(i)),
        fs::file_time_type::clock::now() - std::chrono::hours(1) + std::chrono::seconds(i));
    ASSERT_TRUE(cache.load("keep").has_value()) << i;  // a hit refreshes it
    EXPECT_LE(cache.usage().bytes, kMax) << i;
  }
  EXPECT_TRUE(cache.load("keep").has_value());
  EXPECT_FALSE(cache.load("filler0").has_value());
  EXPECT_TRUE(cache.load("filler59").has_value());
}

TEST_F(DiskCacheTest, StaleTempFilesAreSwept) {
  DiskCache cache(dir_, 0);
  const fs::path tmp = dir_ / ("v" + std::to_string(kFormatVersion)) / "tmp";
  write(tmp / "old.tmp", "left by a crashed writer");
  write(tmp / "new.tmp", "being written right now");
  fs::last_write_time(tmp / "old.tmp", fs::file_time_type::clock::now() - std::chrono::hours(2));
  cache.trim(DiskCache::kDefaultMaxBytes);
  EXPECT_FALSE(fs::exists(tmp / "old.tmp"));
  EXPECT_TRUE(fs::exists(tmp / "new.tmp"));
}

TEST_F(DiskCacheTest, UncreatableFolderDegradesToNothing) {
  // A path below a regular file can never be created, for root too.
  write(fs::path(::testing::TempDir()) / "kreg_not_a_dir", "x");
  DiskCache cache(fs::path(::testing::TempDir()) / "kreg_not_a_dir" / "cache", 0);
  EXPECT_FALSE(cache.usable());
  cache.store("k", "v");
  EXPECT_FALSE(cache.load("k").has_value());
  EXPECT_EQ(cache.usage().entries, 0u);
}

TEST_F(DiskCacheTest, GroupWritableFolderIsRefused) {
  fs::create_directories(dir_);
  fs::permissions(dir_, fs::perms::owner_all | fs::perms::group_all);
  DiskCache cache(dir_, 0);
  EXPECT_FALSE(cache.usable());
}

TEST_F(DiskCacheTest, FoldersOthersCouldChangeAreRefused) {
  const fs::path elsewhere = dir_.string() + "_real";
  fs::create_directories(elsewhere);
  fs::permissions(elsewhere, fs::perms::owner_all);
  // A sticky folder anyone may write to, as /tmp is.
  fs::create_directories(dir_);
  fs::permissions(dir_, fs::perms::all | fs::perms::sticky_bit);
  EXPECT_FALSE(DiskCache(dir_, 0).usable());
  // A link as the cache folder: whoever made it chose where entries go.
  fs::remove(dir_);
  fs::create_directory_symlink(elsewhere, dir_);
  EXPECT_FALSE(DiskCache(dir_, 0).usable());
  // A link inside it, where the format's folder should be.
  fs::remove(dir_);
  fs::create_directories(dir_);
  fs::permissions(dir_, fs::perms::owner_all);
  fs::create_directory_symlink(elsewhere, dir_ / ("v" + std::to_string(kFormatVersion)));
  EXPECT_FALSE(DiskCache(dir_, 0).usable());
  fs::remove(dir_ / ("v" + std::to_string(kFormatVersion)));
  EXPECT_TRUE(DiskCache(dir_, 0).usable());
  if (::geteuid() == 0) {  // only root can give a folder away
    ASSERT_EQ(::chown(dir_.c_str(), 65534, 65534), 0);
    EXPECT_FALSE(DiskCache(dir_, 0).usable());
  }
  fs::remove_all(elsewhere);
}

TEST_F(DiskCacheTest, GroupWritableOrLinkedEntriesAreRefused) {
  DiskCache cache(dir_, 0);
  cache.store("k", "v");
  fs::permissions(entry_file("k"),
                  fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_write);
  EXPECT_FALSE(cache.load("k").has_value());
  cache.store("k", "v");  // replaced by a private file
  EXPECT_TRUE(cache.load("k").has_value());

  cache.store("target", "v");
  fs::remove(entry_file("k"));
  fs::create_symlink(entry_file("target"), entry_file("k"));
  EXPECT_FALSE(cache.load("k").has_value());
}

TEST_F(DiskCacheTest, AFifoUnderAnEntrysNameDoesNotBlock) {
  DiskCache cache(dir_, 0);
  cache.store("k", "v");
  fs::remove(entry_file("k"));
  ASSERT_EQ(::mkfifo(entry_file("k").c_str(), 0600), 0);
  EXPECT_FALSE(cache.load("k").has_value());  // returns at once: no writer needed
}

TEST_F(DiskCacheTest, InspectingNeverCreatesTheFolder) {
  DiskCache inspect(dir_, 0, false);
  EXPECT_FALSE(inspect.usable());
  EXPECT_FALSE(fs::exists(dir_));
}

TEST_F(DiskCacheTest, BadSizeSettingsFallBackToTheDefault) {
  for (const char* bad : {"-1", " -1", "+5", "lots", "99999999999999999999G", "12X", "0", "512 M",
                          " 512M", "1.5G", "5T", "17179869184G"}) {
    ::setenv("KREG_CACHE_MAX_BYTES", bad, 1);
    EXPECT_EQ(DiskCache::default_max_bytes(), DiskCache::kDefaultMaxBytes) << bad;
  }
  ::setenv("KREG_CACHE_MAX_BYTES", "512M", 1);
  EXPECT_EQ(DiskCache::default_max_bytes(), 512u << 20);
  ::unsetenv("KREG_CACHE_MAX_BYTES");
}

TEST_F(DiskCacheTest, SizesParseStrictly) {
  EXPECT_EQ(parse_size("1"), 1u);
  EXPECT_EQ(parse_size("4K"), 4096u);
  EXPECT_EQ(parse_size("2GiB"), std::uint64_t{2} << 30);
  EXPECT_EQ(parse_size("18446744073709551615"), UINT64_MAX);
  for (const char* bad : {"", "-1", " 1", "1 ", "0", "1k", "1KB", "0x10", "18446744073709551616"}) {
    EXPECT_FALSE(parse_size(bad).has_value()) << bad;
  }
}

TEST_F(DiskCacheTest, RelativeFoldersAreNeverTaken) {
  // From the environment a relative folder is ignored, with a warning; given in code, it is
  // made absolute at once, so a later chdir does not move the cache.
  ::setenv("KREG_CACHE_DIR", "relative/cache", 1);
  ::setenv("XDG_CACHE_HOME", "/xdg", 1);
  EXPECT_EQ(DiskCache::default_dir(), fs::path("/xdg/kreg"));
  ::setenv("XDG_CACHE_HOME", "also/relative", 1);
  EXPECT_TRUE(DiskCache::default_dir().is_absolute() || DiskCache::default_dir().empty());
  ::unsetenv("KREG_CACHE_DIR");
  ::unsetenv("XDG_CACHE_HOME");
  DiskCache cache(fs::path("relative") / "cache", 0, false);
  EXPECT_EQ(cache.dir(), fs::current_path() / "relative" / "cache");
}

TEST_F(DiskCacheTest, ForeignOwnedEntriesAreRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give a file to another user";
  DiskCache cache(dir_, 0);
  cache.store("k", "v");
  ASSERT_EQ(::chown(entry_file("k").c_str(), 65534, 65534), 0);
  EXPECT_FALSE(cache.load("k").has_value());
}

TEST_F(DiskCacheTest, VerifyFindsAndRemovesBadEntries) {
  DiskCache cache(dir_, 0);
  for (int i = 0; i < 5; ++i) cache.store("k" + std::to_string(i), "v");
  write(entry_file("k1"), "garbage");
  fs::rename(entry_file("k2"), entry_file("k2").parent_path() / (std::string(32, 'f') + ".kbin"));
  DiskCache::Verify v = cache.verify(false);
  EXPECT_EQ(v.good, 3u);
  EXPECT_EQ(v.bad, 2u);
  v = cache.verify(true);
  EXPECT_EQ(v.removed, 2u);
  EXPECT_EQ(cache.verify(false).bad, 0u);
  EXPECT_EQ(cache.usage().entries, 3u);
  EXPECT_EQ(cache.clear(), 3u);
  EXPECT_EQ(cache.usage().entries, 0u);
}

TEST_F(DiskCacheTest, AHugeSparseEntryIsAMissAndVerifyCountsIt) {
  DiskCache cache(dir_, 0);
  cache.store("k", "v");
  fs::resize_file(entry_file("k"), std::uintmax_t{1} << 40);  // a terabyte, all holes
  EXPECT_FALSE(cache.load("k").has_value());                  // refused before any read
  const DiskCache::Verify v = cache.verify(true);
  EXPECT_EQ(v.bad, 1u);
  EXPECT_EQ(v.removed, 1u);
  EXPECT_FALSE(fs::exists(entry_file("k")));
}

TEST_F(DiskCacheTest, VerifyReportsAndRemovesAnythingInAnEntrysPlace) {
  DiskCache cache(dir_, 0);
  for (const char* key : {"folder", "fifo", "dangling", "good"}) cache.store(key, "v");
  fs::remove(entry_file("folder"));
  fs::create_directories(entry_file("folder") / "inside");
  fs::remove(entry_file("fifo"));
  ASSERT_EQ(::mkfifo(entry_file("fifo").c_str(), 0600), 0);
  fs::remove(entry_file("dangling"));
  fs::create_symlink(dir_ / "nowhere", entry_file("dangling"));
  DiskCache::Verify v = cache.verify(false);
  EXPECT_EQ(v.good, 1u);
  EXPECT_EQ(v.bad, 3u);
  EXPECT_EQ(v.removed, 0u);
  v = cache.verify(true);
  EXPECT_EQ(v.bad, 3u);
  EXPECT_EQ(v.removed, 3u);
  v = cache.verify(false);
  EXPECT_EQ(v.good, 1u);
  EXPECT_EQ(v.bad, 0u);
  for (const char* key : {"folder", "fifo", "dangling"}) {
    EXPECT_FALSE(fs::exists(fs::symlink_status(entry_file(key)))) << key;
  }
}

TEST_F(DiskCacheTest, AFolderAtAnEntrysNameIsReplacedByTheNextStore) {
  DiskCache cache(dir_, 0);
  cache.store("k", "old");
  fs::remove(entry_file("k"));
  fs::create_directories(entry_file("k") / "inside");
  EXPECT_FALSE(cache.load("k").has_value());
  cache.store("k", "new");
  EXPECT_EQ(cache.load("k").value_or(""), "new");
}

TEST_F(DiskCacheTest, EntriesThroughALinkedFolderAreRefused) {
  DiskCache cache(dir_, 0);
  cache.store("k", "v");
  const fs::path folder = entry_file("k").parent_path();
  const fs::path elsewhere = dir_ / "elsewhere";
  fs::rename(folder, elsewhere);
  fs::create_directory_symlink(elsewhere, folder);
  EXPECT_FALSE(cache.load("k").has_value());
  cache.store("k", "v");  // not written through the link either
  EXPECT_FALSE(cache.load("k").has_value());
  DiskCache::Verify v = cache.verify(true);
  EXPECT_EQ(v.bad, 1u);  // the link, reported once
  EXPECT_EQ(v.removed, 1u);
  EXPECT_FALSE(fs::exists(fs::symlink_status(folder)));
  EXPECT_TRUE(fs::exists(elsewhere / entry_file("k").filename()));  // the target is untouched
  cache.store("k", "v");
  EXPECT_EQ(cache.load("k").value_or(""), "v");
}

TEST_F(DiskCacheTest, EntriesInAFolderOthersCouldChangeAreRefused) {
  DiskCache cache(dir_, 0);
  cache.store("k", "v");
  const fs::path folder = entry_file("k").parent_path();
  fs::permissions(folder, fs::perms::group_write, fs::perm_options::add);
  EXPECT_FALSE(cache.load("k").has_value());
  EXPECT_EQ(cache.verify(false).bad, 1u);
  fs::permissions(folder, fs::perms::group_write, fs::perm_options::remove);
  EXPECT_EQ(cache.load("k").value_or(""), "v");
}

TEST_F(DiskCacheTest, VerifyWhileAnotherProcessClearsFindsNothingBad) {
  DiskCache cache(dir_, 0);
  DiskCache other(dir_, 0);  // another process's view of the same folder
  for (int round = 0; round < 5; ++round) {
    for (int i = 0; i < 400; ++i) cache.store("k" + std::to_string(i), "v");
    std::thread clearing([&] { other.clear(); });
    // An entry removed between verify's listing and its read is gone, not bad.
    while (cache.usage().entries > 0) EXPECT_EQ(cache.verify(false).bad, 0u) << round;
    clearing.join();
  }
}

}  // namespace
}  // namespace kreg::cache
