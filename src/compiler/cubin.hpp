#pragma once
// What a CUBIN image defines, read from its ELF symbol table. A source's text claims entry
// points; only the image says which of them NVRTC compiled (one inside `#if 0`, or behind a
// macro that expanded to nothing, never was).

#include <span>
#include <string>
#include <vector>

namespace kreg::compiler {

// The names of the functions the image defines (kernels among them), sorted. Empty for
// anything that is not a well-formed 64-bit little-endian ELF file: every offset and size is
// checked against the image before it is read.
std::vector<std::string> defined_functions(std::span<const char> image);

}  // namespace kreg::compiler
