#pragma once
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
// Comments and literals are left alone; `#include` lines too.

#include "lex/edits.hpp"
#include "lex/text.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace kreg::custom {

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
