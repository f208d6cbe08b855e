#pragma once
// The bundle file format: a list of values as they travel off a machine (signed_value.hpp),
// each an entry with its own key and checksum, so that one damaged or forged value is refused
// alone and the rest are still imported.
//
//   bundle := magic version count { length value }*
//   magic  := "KREGBDL\0"                8 bytes
//   version:= u32 (kBundleVersion)       little-endian, as every integer here
//   count  := u64, the values that follow
//   length := u64, then that many bytes of value (at most kMaxEntryBytes and a signature)

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace kreg::cache {

inline constexpr std::uint32_t kBundleVersion = 1;

// Writes a bundle to a temp file beside `path`, renamed over it by commit(); the destructor
// removes the temp file if commit() never ran.
class BundleWriter {
 public:
  // Throws kreg::Error(InvalidArgument) if the temp file cannot be created.
  explicit BundleWriter(std::filesystem::path path);
  ~BundleWriter();
  BundleWriter(const BundleWriter&) = delete;
  BundleWriter& operator=(const BundleWriter&) = delete;

  void add(std::string_view value);
  // Writes the count, syncs and renames; throws kreg::Error(InvalidArgument) on failure.
  void commit();

 private:
  std::filesystem::path path_;
  std::filesystem::path temp_;
  std::FILE* file_ = nullptr;
  std::uint64_t count_ = 0;
  bool ok_ = true;
};

// Reads a bundle's values one at a time, never holding more than one in memory.
class BundleReader {
 public:
  // Throws kreg::Error(InvalidArgument) if `path` cannot be opened or is not a bundle.
  explicit BundleReader(const std::filesystem::path& path);
  ~BundleReader();
  BundleReader(const BundleReader&) = delete;
  BundleReader& operator=(const BundleReader&) = delete;

  std::uint64_t count() const noexcept { return count_; }
  // The next value, or std::nullopt at the end or where the file is cut short (`why` then
  // says so; a clean end leaves it empty).
  std::optional<std::string> next(std::string& why);

 private:
  std::FILE* file_ = nullptr;
  std::uint64_t count_ = 0;
  std::uint64_t read_ = 0;
};

}  // namespace kreg::cache
