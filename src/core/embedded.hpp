#pragma once
// Files compiled into the library at build time (see cmake/embed.cmake).

#include <span>
#include <string_view>

namespace kreg::core {

struct EmbeddedFile {
  std::string_view name;  // path relative to its base folder, e.g. "kreg/kernel.cuh"
  std::string_view text;
  // The SHA-256 of `text` as 64 hex digits, computed when the file was embedded: keys name
  // the text by it, so a key does not grow with the headers or cost a pass over them.
  std::string_view sha256;
};

// kreg's device headers, offered to NVRTC as in-memory headers.
std::span<const EmbeddedFile> embedded_headers();
// The SHA-256 of the set: of each header's name and sha256, each followed by a line break,
// in order. Keys hold it in place of the headers (compiler::encode_key).
std::string_view embedded_headers_sha256();
// The built-in kernel sources from kernels/, named by file ("elementwise.cu"), and their
// set's digest as for the headers.
std::span<const EmbeddedFile> embedded_sources();
std::string_view embedded_sources_sha256();

}  // namespace kreg::core
