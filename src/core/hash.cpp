#include "core/hash.hpp"

#define XXH_INLINE_ALL
#include <xxhash.h>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <memory>

namespace kreg::core {

std::uint64_t hash64(std::string_view bytes) noexcept {
  return XXH3_64bits(bytes.data(), bytes.size());
}

std::string hex64(std::uint64_t value) {
  char text[17];
  std::snprintf(text, sizeof(text), "%016llx", static_cast<unsigned long long>(value));
  return text;
}

std::optional<std::string> file_digest(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  const std::unique_ptr<XXH3_state_t, decltype(&XXH3_freeState)> state(XXH3_createState(),
                                                                       &XXH3_freeState);
  bool ok = state != nullptr && XXH3_128bits_reset(state.get()) == XXH_OK;
  std::string buffer(std::size_t{1} << 20, '\0');
  while (ok) {
    const ssize_t n = ::read(fd, buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ok = n == 0;
      break;
    }
    ok = XXH3_128bits_update(state.get(), buffer.data(), static_cast<std::size_t>(n)) == XXH_OK;
  }
  ::close(fd);
  if (!ok) return std::nullopt;
  const XXH128_hash_t h = XXH3_128bits_digest(state.get());
  return hex64(h.high64) + hex64(h.low64);
}

}  // namespace kreg::core
