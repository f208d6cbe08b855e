#pragma once
// The messages between a registry and its compile worker processes: a compile request
// and its result, each framed as a little-endian u64 length and a payload that starts
// with a magic number and the protocol version, so a worker from another kreg build is
// detected instead of misread.

#include "compiler/nvrtc_compiler.hpp"

#include <optional>
#include <string>
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
std::string encode(const Result& result);
// std::nullopt for a payload that is truncated, has trailing bytes, or has the wrong magic
// or version.
std::optional<OwnedRequest> decode_request(const std::string& payload);
std::optional<Result> decode_result(const std::string& payload);

// Frame I/O on a file descriptor; false on EOF or error. Writes to a socket never raise
// SIGPIPE; other descriptors (pipes) are written with write(), which may.
// `timeout_ms` < 0 waits forever; otherwise a frame that has not fully arrived in time
// counts as an error.
bool write_frame(int fd, const std::string& payload);
bool read_frame(int fd, std::string& payload, int timeout_ms = -1);

}  // namespace kreg::compiler
