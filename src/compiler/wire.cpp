#include "compiler/wire.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <optional>

namespace kreg::compiler {
namespace {

constexpr std::uint32_t kRequestMagic = 0x5752474b;  // "KGRW"
constexpr std::uint32_t kResultMagic = 0x5252474b;   // "KGRR"
constexpr std::uint32_t kKeyMagic = 0x4b52474b;      // "KGRK"
constexpr std::uint32_t kVersion = 4;

class Writer {
 public:
  void u32(std::uint32_t v) { raw(&v, sizeof(v)); }
  void u64(std::uint64_t v) { raw(&v, sizeof(v)); }
  void f64(double v) { raw(&v, sizeof(v)); }
  void text(std::string_view s) {
    u64(s.size());
    out_.append(s);
  }
  template <class Range>
  void texts(const Range& range) {
    u64(range.size());
    for (const auto& s : range) text(s);
  }
  std::string take() { return std::move(out_); }

 private:
  void raw(const void* p, std::size_t n) { out_.append(static_cast<const char*>(p), n); }
  std::string out_;
};

class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}
  bool u32(std::uint32_t& v) { return raw(&v, sizeof(v)); }
  bool u64(std::uint64_t& v) { return raw(&v, sizeof(v)); }
  bool f64(double& v) { return raw(&v, sizeof(v)); }
  bool text(std::string& s) {
    std::string_view view;
    if (!text(view)) return false;
    s.assign(view);
    return true;
  }
  // A view into the input, which must outlive it.
  bool text(std::string_view& s) {
    std::uint64_t n = 0;
    if (!u64(n) || n > in_.size() - at_) return false;
    s = in_.substr(at_, n);
    at_ += n;
    return true;
  }
  bool texts(std::vector<std::string>& out) {
    std::uint64_t n = 0;
    if (!u64(n) || n > in_.size() - at_) return false;  // each item takes at least 8 bytes
    out.resize(n);
    for (auto& s : out) {
      if (!text(s)) return false;
    }
    return true;
  }
  bool done() const { return at_ == in_.size(); }

 private:
  bool raw(void* p, std::size_t n) {
    if (n > in_.size() - at_) return false;
    std::memcpy(p, in_.data() + at_, n);
    at_ += n;
    return true;
  }
  std::string_view in_;
  std::size_t at_ = 0;
};

bool header_ok(Reader& r, std::uint32_t magic) {
  std::uint32_t m = 0;
  std::uint32_t v = 0;
  return r.u32(m) && r.u32(v) && m == magic && v == kVersion;
}

bool write_all(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    // send() with MSG_NOSIGNAL: a worker that died must not kill its host with SIGPIPE.
    const ssize_t n = ::send(fd, data, size, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == ENOTSOCK) {
      const ssize_t w = ::write(fd, data, size);  // a worker's stdout may be a plain pipe
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) return false;
      data += w;
      size -= static_cast<std::size_t>(w);
      continue;
    }
    if (n <= 0) return false;
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

using Clock = std::chrono::steady_clock;

// Reads exactly `size` bytes, waiting no later than `deadline` (none: forever).
bool read_all(int fd, char* data, std::size_t size,
              const std::optional<Clock::time_point>& deadline, FrameError& error) {
  while (size > 0) {
    if (deadline) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - Clock::now()).count();
      pollfd p{fd, POLLIN, 0};
      const int ready = left > 0 ? ::poll(&p, 1, static_cast<int>(left)) : 0;
      if (ready < 0 && errno == EINTR) continue;
      if (ready <= 0) {
        error = ready == 0 ? FrameError::TimedOut : FrameError::Failed;
        return false;
      }
    }
    const ssize_t n = ::read(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      error = n == 0 ? FrameError::Closed : FrameError::Failed;
      return false;
    }
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

Request OwnedRequest::view() const {
  Request r;
  r.program_name = program_name;
  r.source = source;
  r.arch = arch;
  r.options = options;
  for (const auto& [name, text] : headers) r.headers.push_back({name, text});
  r.name_expressions = name_expressions;
  return r;
}

namespace {

// A request as what a worker is sent (`keyed` false: every header's text) or as its key
// (the embedded set by its digest, empty without one, then the request's own headers).
std::string encode_request(const Request& request, bool keyed) {
  Writer w;
  w.u32(keyed ? kKeyMagic : kRequestMagic);
  w.u32(kVersion);
  w.text(request.program_name);
  w.text(request.source);
  w.text(request.arch);
  w.texts(request.options);
  if (keyed) {
    w.u64(request.embedded.size());
    w.text(request.embedded_sha256);
    w.u64(request.headers.size());
    for (const Header& h : request.headers) {
      w.text(h.name);
      w.text(h.text);
    }
  } else {
    w.u64(request.embedded.size() + request.headers.size());
    for_each_header(request, [&](std::string_view name, std::string_view text) {
      w.text(name);
      w.text(text);
    });
  }
  w.texts(request.name_expressions);
  return w.take();
}

}  // namespace

std::string encode(const Request& request) {
  return encode_request(request, false);
}

std::string encode_key(const Request& request) {
  return encode_request(request, true);
}

std::string encode(const Result& result) {
  Writer w;
  w.u32(kResultMagic);
  w.u32(kVersion);
  w.u32(result.ok ? 1 : 0);
  w.text(std::string_view(result.image.data(), result.image.size()));
  w.text(result.log);
  w.texts(result.lowered_names);
  w.f64(result.milliseconds);
  w.u32(result.files_known ? 1 : 0);
  w.texts(result.files_read);
  w.u32((result.pch_created ? 1U : 0U) | (result.pch_used ? 2U : 0U));
  return w.take();
}

std::optional<OwnedRequest> decode_request(std::string_view payload) {
  Reader r(payload);
  OwnedRequest out;
  std::uint64_t headers = 0;
  if (!header_ok(r, kRequestMagic) || !r.text(out.program_name) || !r.text(out.source) ||
      !r.text(out.arch) || !r.texts(out.options) || !r.u64(headers) || headers > payload.size()) {
    return std::nullopt;
  }
  out.headers.resize(headers);
  for (auto& [name, text] : out.headers) {
    if (!r.text(name) || !r.text(text)) return std::nullopt;
  }
  if (!r.texts(out.name_expressions) || !r.done()) return std::nullopt;
  return out;
}

std::optional<Result> decode_result(std::string_view payload, std::string_view* image_view) {
  Reader r(payload);
  Result out;
  std::uint32_t ok = 0;
  std::uint32_t files_known = 0;
  std::uint32_t pch = 0;
  std::string_view image;
  if (!header_ok(r, kResultMagic) || !r.u32(ok) || ok > 1 || !r.text(image) || !r.text(out.log) ||
      !r.texts(out.lowered_names) || !r.f64(out.milliseconds) || !r.u32(files_known) ||
      files_known > 1 || !r.texts(out.files_read) || !r.u32(pch) || pch > 3 || !r.done()) {
    return std::nullopt;
  }
  out.ok = ok == 1;
  out.files_known = files_known == 1;
  out.pch_created = (pch & 1U) != 0;
  out.pch_used = (pch & 2U) != 0;
  if (image_view != nullptr) {
    *image_view = image;
  } else {
    out.image.assign(image.begin(), image.end());
  }
  return out;
}

bool write_frame(int fd, std::string_view payload) {
  const std::uint64_t size = payload.size();
  return write_all(fd, reinterpret_cast<const char*>(&size), sizeof(size)) &&
         write_all(fd, payload.data(), payload.size());
}

bool read_frame(int fd, std::string& payload, int timeout_ms, std::uint64_t max_bytes,
                FrameError* error) {
  FrameError why = FrameError::Failed;
  std::optional<Clock::time_point> deadline;
  if (timeout_ms >= 0) deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  std::uint64_t size = 0;
  bool ok = read_all(fd, reinterpret_cast<char*>(&size), sizeof(size), deadline, why);
  if (ok && size > max_bytes) {
    why = FrameError::TooLarge;
    ok = false;
  }
  payload.clear();
  constexpr std::uint64_t kChunk = std::uint64_t{1} << 20;
  while (ok && payload.size() < size) {
    const std::size_t at = payload.size();
    const auto chunk = static_cast<std::size_t>(std::min(size - at, kChunk));
    payload.resize(at + chunk);
    ok = read_all(fd, payload.data() + at, chunk, deadline, why);
  }
  if (!ok && error != nullptr) *error = why;
  return ok;
}

}  // namespace kreg::compiler
