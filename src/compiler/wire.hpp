#pragma once
// The messages between a registry and its compile worker processes: a compile request
// and its result, each framed as a little-endian u64 length and a payload that starts
// with a magic number and the protocol version, so a worker from another kreg build is
// detected instead of misread.

#include "compiler/nvrtc_compiler.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kreg::compiler {

// A request that owns its text, as a worker receives it.
struct OwnedRequest {
  std::string program_name;
  std::string source;
  std::string arch;
  std::vector<std::string> options;
  std::vector<std::pair<std::string, std::string>> headers;
  std::vector<std::string> name_expressions;

  Request view() const;
};

std::string encode(const Request& request);
// What keys a request's binary in every cache (precompiled, disk, remote): the request as
// encode() writes it, except that the embedded headers are held by their set's digest.
// Never the same bytes as a wire request (another magic number).
std::string encode_key(const Request& request);
std::string encode(const Result& result);
// std::nullopt for a payload that is truncated, has trailing bytes, or has the wrong magic
// or version.
std::optional<OwnedRequest> decode_request(std::string_view payload);
// With `image_view`, the image is not copied into the result: *image_view views it in
// `payload`, which must then outlive its use (the precompiled set, which lives as long as
// the process).
std::optional<Result> decode_result(std::string_view payload,
                                    std::string_view* image_view = nullptr);

// Bounds on what a frame may announce, so that a peer cannot make the reader allocate
// gigabytes by claiming them. No compile result comes near: the largest CUBINs are tens of
// MB; a request holds a source and its headers.
inline constexpr std::uint64_t kMaxResultBytes = std::uint64_t{256} << 20;
inline constexpr std::uint64_t kMaxRequestBytes = std::uint64_t{256} << 20;
// The handshake: the parent's NVRTC identity, answered by kWorkerReady.
inline constexpr std::uint64_t kMaxIdentityBytes = 4096;
inline constexpr std::string_view kWorkerReady = "kreg-nvrtc-worker ready";

// Why read_frame returned false.
enum class FrameError : unsigned char { Closed, TimedOut, TooLarge, Failed };

// Frame I/O on a file descriptor; false on EOF or error. Writes to a socket never raise
// SIGPIPE; other descriptors (pipes) are written with write(), which may.
// `timeout_ms` < 0 waits forever; otherwise a frame that has not fully arrived in time
// counts as an error. A frame announcing more than `max_bytes` is refused unread; the payload
// grows as bytes arrive, never ahead of them by more than a MiB.
bool write_frame(int fd, std::string_view payload);
bool read_frame(int fd, std::string& payload, int timeout_ms, std::uint64_t max_bytes,
                FrameError* error = nullptr);

}  // namespace kreg::compiler
