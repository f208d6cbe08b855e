#pragma once
// What a custom kernel needs of Metal's vector types: whether its text names one (or a
// swizzle), and which swizzles, so that the generated source defines only those; and the
// `#include` lines of a header, which must stay at global scope when the rest of the header
// moves into the namespace that gives the vector types their Metal names.

#include <string>
#include <string_view>
#include <vector>

namespace kreg::custom {

struct VectorUse {
  bool any = false;                   // a vector type, `vec<`, or a swizzle
  std::vector<std::string> swizzles;  // sorted, each once: "xy", "zyx", "rgba" ...
};

// Scans text as written (comments included: a swizzle named there costs a little compile
// time, nothing else).
VectorUse vector_use(std::string_view body, std::string_view header);

// The text with each swizzle of a swizzle written as one swizzle: `v.xyz.yx` as `v.yx`,
// `v.zw.x` as `v.z`, since the swizzle types have no swizzles of their own. A word that
// `body` or `header` also uses on its own (a struct member `xy`) is left alone, as are
// comments and literals.
std::string compose_swizzles(std::string_view text, std::string_view body, std::string_view header);

// The text with `metal::` (and `::metal::`) dropped before each Metal vector type name
// (`metal::float4`, `metal::packed_half3`), comments and literals left alone. The generated
// kernel's namespace gives the bare names their Metal meaning; namespace `metal` cannot
// declare them itself, because `using namespace metal;` at global scope would then make
// every use of CUDA's `float4` there ambiguous.
std::string unqualify_vectors(std::string_view text);

// "#define KREG_METAL_SWIZZLES(S) S(xy, 0, 1) ...\n", empty of swizzles when there are none.
std::string swizzle_macro(const std::vector<std::string>& swizzles);

struct HoistedHeader {
  std::string includes;  // the `#include` lines, in order
  std::string rest;      // everything else, the included lines left blank
};
HoistedHeader hoist_includes(std::string_view header);

}  // namespace kreg::custom
