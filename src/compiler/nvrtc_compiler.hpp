#pragma once
// CUDA C++ source to CUBIN with NVRTC. No NVRTC types leak out of this header.

#include "core/embedded.hpp"

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace kreg::compiler {

struct Header {
  std::string_view name;  // as written in #include, e.g. "kreg/kernel.cuh"
  std::string_view text;
};

struct Request {
  std::string program_name;  // shown in diagnostics, e.g. "elementwise.cu"
  std::string_view source;
  std::string arch;                           // "sm_90", "sm_90a", ...
  std::vector<std::string> options;           // everything but -arch
  std::vector<Header> headers;                // offered as in-memory headers
  std::vector<std::string> name_expressions;  // template entries to instantiate and lower
  // kreg's device headers (core::embedded_headers()), offered before `headers`, and their
  // set's digest, which a key holds in their place (encode_key in wire.hpp). Empty in a
  // request a worker decoded: it receives them among `headers`.
  std::span<const core::EmbeddedFile> embedded;
  std::string_view embedded_sha256;
};

// Every header a request offers, the embedded set first: fn(name, text).
template <class Fn>
void for_each_header(const Request& request, Fn&& fn) {
  for (const core::EmbeddedFile& file : request.embedded) fn(file.name, file.text);
  for (const Header& header : request.headers) fn(header.name, header.text);
}

struct Result {
  bool ok = false;
  std::vector<char> image;                 // CUBIN
  std::string log;                         // the compiler's log, warnings included
  std::vector<std::string> lowered_names;  // one per name expression, in order
  double milliseconds = 0;
  // Every file the compile read besides the source, as NVRTC named it (see
  // include_trace.hpp): an in-memory header by its name, a file by its path. Meaningful
  // only when `files_known`; without it, nothing is known of what was read.
  std::vector<std::string> files_read;
  bool files_known = false;
  // NVRTC's automatic precompiled header (pch.hpp): this compile created one for its leading
  // #include lines, or used one an earlier compile of this process created.
  bool pch_created = false;
  bool pch_used = false;
};

// Never throws for a source that does not compile: ok is false and log says why.
// Throws CompileError only when NVRTC itself fails (out of memory, bad program handle).
//
// The program is compiled as if it were a file in a folder that cannot exist, so that a
// quoted include never finds a file in the current folder: what a compile reads depends on
// the request, never on where the process runs. Diagnostics still name `program_name`.
// Internal-linkage names in the image are derived from the program alone, so two compiles
// of one request in two processes give the same bytes, with or without a precompiled header
// (pch.hpp: from the second compile of a source's leading #include lines in a process).
Result compile(const Request& request);

// "13.0".
std::string version();
// The NVRTC library in use, precisely: its version and the GNU build id of the loaded
// library (else a digest of its file's content). An update that keeps the version number
// still changes it; the same library reached by another path (a link, another copy of the
// toolkit, another machine) does not. Disk-cache keys include it, and compile workers must
// match it. Computed once per process (nvrtc_identity.cpp).
std::string identity();
// Targets NVRTC can compile to, e.g. {75, 80, 86, 89, 90, 100, 120}.
std::vector<int> supported_archs();
// The toolkit's include folder, for sources that include toolkit headers; empty if none
// is found. Looked up once per process (CUDA_HOME, CUDA_PATH, the build's toolkit,
// /usr/local/cuda).
std::string toolkit_include_dir();

}  // namespace kreg::compiler
