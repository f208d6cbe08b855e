#pragma once
// The rewrites code generation makes in a custom kernel's body and header, one pass a
// construct. Each reads a text's tokens and adds edits to the text's lex::Edits, which
// codegen.cpp applies once at the end, so no pass sees another's output. Comments, literals
// and `#include` lines are left alone, and the text keeps its line breaks, so messages keep
// their line numbers. A construct that must be rewritten rather than defined in a device
// header adds its pass here.

#include "lex/edits.hpp"
#include "lex/text.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace kreg::custom {

// ---- Address spaces (address_spaces.cpp): Metal's words as CUDA spells them.
// Metal qualifies every pointer and some objects with `device`, `constant`, `thread` or
// `threadgroup`; CUDA has one generic address space for pointers and marks only objects:
//   - `threadgroup T name[N];` (or a scalar) declares shared memory: `__shared__`;
//   - `constant T name[] = {...};` at program scope (a header's table) is `__constant__`;
//     inside a function it is a `const` object;
//   - on a pointer, a reference or in a cast (`const device float* p`, `thread float& r`,
//     `(threadgroup int*)q`), and `thread`/`device` on a local object, the word goes.
// A word counts only where it qualifies something (an identifier follows it), so a CUDA body's
// own variable named `device` or `thread` is left alone, and so are longer names
// (`threadgroup_barrier`, `thread_position_in_grid`).

enum class TextScope : unsigned char {
  Program,   // a header: declarations at brace depth 0 are at program scope
  Function,  // a kernel body
};

// Adds the edits that rewrite the text's address-space words. With `dynamic_arrays`, a body's
// threadgroup arrays become arrays carved from dynamic shared memory instead
// (custom_threadgroup.cuh); returns how many.
std::size_t rewrite_address_spaces(const lex::Text& text, TextScope scope, lex::Edits& edits,
                                   bool dynamic_arrays = false);

// ---- Conditionals over 16-bit floats (ternaries.cpp): Metal's `?:` in C++.
// In Metal, `c ? f : h` with a `float` f and a `half` h is a float, by the usual arithmetic
// conversions. kreg's `half` and `bfloat16` are classes that convert to and from float
// implicitly, so C++ finds the conversion both ways and rejects the conditional as ambiguous.
// The rewrite passes each of the two operands through
// `::kreg::detail::ternary_operand<decltype((other))>(...)` (<kreg/device/custom_ternary.cuh>),
// which gives both Metal's common type where they differ and leaves every other operand as it
// is, lvalues included; preprocessor lines are left alone. Each operand's copy inside the
// other's decltype holds the operand as every rewrite leaves it, so each level of nesting
// doubles the text of what it holds: the caller refuses a kernel whose conditionals would
// grow past a bound rather than render them.

// Adds the edits that wrap each conditional operator's second and third operands; returns
// how many bytes they add to the text, at most kTernaryGrowthCap (reaching it means more).
inline constexpr std::size_t kTernaryGrowthCap = std::size_t{1} << 40;
std::size_t rewrite_ternaries(const lex::Text& text, lex::Edits& edits);

// ---- Vector types (vectors.cpp)
// What a custom kernel needs of Metal's vector types, and the rewrites they take:
// - whether its text names a vector type (or `vec<`, or a swizzle), and which swizzles, so
//   that the generated source defines only those;
// - swizzles of swizzles written as one swizzle (`v.xyz.yx` as `v.yx`), since the swizzle
//   types have no swizzles of their own;
// - `metal::` dropped before vector type names: the generated kernel's namespace gives the
//   bare names their Metal meaning, and namespace `metal` cannot declare them itself, because
//   `using namespace metal;` at global scope would then make CUDA's `float4` ambiguous;
// - a header's `#include` lines, which stay at global scope when the rest of the header
//   moves into that namespace.

struct VectorUse {
  bool any = false;                   // a vector type, `vec<`, or a swizzle
  std::vector<std::string> swizzles;  // sorted, each once: "xy", "zyx", "rgba" ...
};

// The chains compose_swizzles wrote as one swizzle: member tokens first..last as `word`.
struct Composed {
  struct Chain {
    std::size_t first = 0;
    std::size_t last = 0;
    std::string word;
  };
  std::vector<Chain> chains;  // in text order
};

// Adds the edits that compose the text's swizzle chains. A word that `body` or `header` also
// uses on its own (a struct member `xy`) is left alone.
Composed compose_swizzles(const lex::Text& text, const lex::Text& body, const lex::Text& header,
                          lex::Edits& edits);

// What the texts use, with each composed chain as the swizzle it becomes.
VectorUse vector_use(const lex::Text& body, const Composed& body_chains, const lex::Text& header,
                     const Composed& header_chains);

// Adds the edits that drop `metal::` (and `::metal::`) before Metal's vector type names.
void unqualify_vectors(const lex::Text& text, lex::Edits& edits);

// Adds the edits that empty the header's `#include` lines, and returns those lines.
std::string hoist_includes(const lex::Text& header, lex::Edits& edits);

// "#define KREG_METAL_SWIZZLES(S) S(xy, 0, 1) ...\n", empty of swizzles when there are none.
std::string swizzle_macro(const std::vector<std::string>& swizzles);

}  // namespace kreg::custom
