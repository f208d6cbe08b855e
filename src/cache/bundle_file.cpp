#include "cache/bundle_file.hpp"

#include "cache/entry.hpp"

#include <kreg/error.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <cstring>
#include <system_error>

namespace kreg::cache {
namespace {

constexpr char kMagic[8] = {'K', 'R', 'E', 'G', 'B', 'D', 'L', '\0'};
constexpr std::uint64_t kMaxValueBytes = kMaxEntryBytes + 64;  // an entry and its signature
constexpr std::size_t kHeaderBytes = sizeof(kMagic) + 4 + 8;

[[noreturn]] void fail(const std::filesystem::path& path, const std::string& why) {
  throw Error(ErrorCode::InvalidArgument, "bundle " + path.string() + ": " + why);
}

std::string errno_text() {
  return std::generic_category().message(errno);
}

bool read_exact(std::FILE* file, void* out, std::size_t n) {
  return std::fread(out, 1, n, file) == n;
}

}  // namespace

BundleWriter::BundleWriter(std::filesystem::path path)
    : path_(std::move(path)), temp_(path_.string() + ".tmp." + std::to_string(::getpid())) {
  // O_EXCL and O_NOFOLLOW: a name planted beside the bundle is never written through.
  const int fd = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) fail(path_, "cannot create " + temp_.string() + ": " + errno_text());
  file_ = ::fdopen(fd, "wb");
  if (file_ == nullptr) {
    ::close(fd);
    fail(path_, "cannot open " + temp_.string());
  }
  const std::uint32_t version = kBundleVersion;
  ok_ = std::fwrite(kMagic, 1, sizeof(kMagic), file_) == sizeof(kMagic) &&
        std::fwrite(&version, 1, 4, file_) == 4 && std::fwrite(&count_, 1, 8, file_) == 8;
}

BundleWriter::~BundleWriter() {
  if (file_ != nullptr) {
    std::fclose(file_);
    std::error_code error;
    std::filesystem::remove(temp_, error);
  }
}

void BundleWriter::add(std::string_view value) {
  const std::uint64_t length = value.size();
  ok_ = ok_ && std::fwrite(&length, 1, 8, file_) == 8 &&
        std::fwrite(value.data(), 1, value.size(), file_) == value.size();
  ++count_;
}

void BundleWriter::commit() {
  ok_ = ok_ && std::fseek(file_, sizeof(kMagic) + 4, SEEK_SET) == 0 &&
        std::fwrite(&count_, 1, 8, file_) == 8 && std::fflush(file_) == 0 &&
        ::fsync(::fileno(file_)) == 0;
  const std::string why = errno_text();
  const bool closed = std::fclose(file_) == 0;
  file_ = nullptr;
  std::error_code error;
  if (!ok_ || !closed) {
    std::filesystem::remove(temp_, error);
    fail(path_, "cannot write " + temp_.string() + ": " + why);
  }
  std::filesystem::rename(temp_, path_, error);
  if (error) {
    std::filesystem::remove(temp_, error);
    fail(path_, "cannot rename " + temp_.string() + " into place: " + error.message());
  }
}

BundleReader::BundleReader(const std::filesystem::path& path) {
  // O_NONBLOCK: a FIFO given as the bundle must not hang the import.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) fail(path, "cannot open: " + errno_text());
  file_ = ::fdopen(fd, "rb");
  if (file_ == nullptr) {
    ::close(fd);
    fail(path, "cannot open");
  }
  char header[kHeaderBytes];
  if (!read_exact(file_, header, sizeof(header)) ||
      std::memcmp(header, kMagic, sizeof(kMagic)) != 0) {
    std::fclose(file_);
    file_ = nullptr;
    fail(path, "not a kreg cache bundle");
  }
  std::uint32_t version = 0;
  std::memcpy(&version, header + sizeof(kMagic), 4);
  std::memcpy(&count_, header + sizeof(kMagic) + 4, 8);
  if (version != kBundleVersion) {
    std::fclose(file_);
    file_ = nullptr;
    fail(path, "written by another bundle format version (" + std::to_string(version) + ")");
  }
}

BundleReader::~BundleReader() {
  if (file_ != nullptr) std::fclose(file_);
}

std::optional<std::string> BundleReader::next(std::string& why) {
  why.clear();
  if (read_ == count_) return std::nullopt;
  std::uint64_t length = 0;
  if (!read_exact(file_, &length, 8)) {
    why = "cut short after " + std::to_string(read_) + " of " + std::to_string(count_) + " entries";
    return std::nullopt;
  }
  if (length > kMaxValueBytes) {
    why = "entry " + std::to_string(read_) + " claims " + std::to_string(length) +
          " bytes, more than any entry; the rest cannot be read";
    return std::nullopt;
  }
  std::string value(static_cast<std::size_t>(length), '\0');
  if (!read_exact(file_, value.data(), value.size())) {
    why = "cut short in entry " + std::to_string(read_) + " of " + std::to_string(count_);
    return std::nullopt;
  }
  ++read_;
  return value;
}

}  // namespace kreg::cache
