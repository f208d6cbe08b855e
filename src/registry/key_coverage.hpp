#pragma once
// Whether a disk-cache key covers everything a compile read. The key holds the request: the
// source, every in-memory header's text, the options, the toolkit's include folder and
// NVRTC's identity. It does not hold the text of files NVRTC opens from disk, so a binary
// is stored only when every such file is a toolkit header (which changes only with the
// toolkit). Anything else (a header through -I, an absolute path, a path that climbs out of
// the toolkit with "..") could change under the same key.

#include "compiler/nvrtc_compiler.hpp"
#include "registry/source.hpp"

#include <string>

namespace kreg::registry {

// Checked before the disk is read: false if the request lets NVRTC read files its key cannot
// cover whatever the compile then reads (the caller's include paths, pre-included files or
// front-end options), or the source asks whether such a file exists (`__has_include` of an
// absolute path, say), which no trace shows.
bool key_can_cover(const Source& source, const compiler::Request& request);

// Checked after a compile, from the files NVRTC says it read: "" if the key covers them all,
// else a short reason naming the first file it does not cover.
std::string uncovered_read(const compiler::Request& request, const compiler::Result& result);

}  // namespace kreg::registry
