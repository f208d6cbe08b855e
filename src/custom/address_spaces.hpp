#pragma once
// Metal's address-space words in custom-kernel text, as CUDA spells them. Pure text.
//
// Metal qualifies every pointer and some objects with `device`, `constant`, `thread` or
// `threadgroup`; CUDA has one generic address space for pointers and marks only objects:
//   - `threadgroup T name[N];` (or a scalar) declares shared memory: `__shared__`;
//   - `constant T name[] = {...};` at program scope (a header's table) is `__constant__`;
//     inside a function it is a `const` object;
//   - on a pointer, a reference or in a cast (`const device float* p`, `thread float& r`,
//     `(threadgroup int*)q`), and `thread`/`device` on a local object, the word goes.
// A word counts only where it qualifies something (an identifier follows it), so a CUDA body's
// own variable named `device` or `thread` is left alone, and so are comments, string literals
// and longer names (`threadgroup_barrier`, `thread_position_in_grid`).

#include "lex/edits.hpp"
#include "lex/text.hpp"

#include <cstddef>
#include <string>
#include <string_view>

namespace kreg::custom {

enum class TextScope : unsigned char {
  Program,   // a header: declarations at brace depth 0 are at program scope
  Function,  // a kernel body
};

// Adds the edits that rewrite the text's address-space words. With `dynamic_arrays`, a body's
// threadgroup arrays become arrays carved from dynamic shared memory instead
// (custom_threadgroup.cuh); returns how many.
std::size_t rewrite_address_spaces(const lex::Text& text, TextScope scope, lex::Edits& edits,
                                   bool dynamic_arrays = false);

}  // namespace kreg::custom
