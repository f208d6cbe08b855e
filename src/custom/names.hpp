#pragma once
// The names of custom kernels: Metal's thread attributes as kreg declares them, and what a
// parameter may be called.

#include <span>
#include <string>
#include <string_view>

namespace kreg::custom {

// What an attribute's value is computed from, besides CUDA's built-ins: values the generated
// kernel declares before the attributes only when one needs them.
enum AttributeNeeds : unsigned char {
  kNeedsNothing = 0,
  kNeedsGroup = 1,     // kreg_group, kreg_threads: the threadgroup, cut at the grid's edge
  kNeedsDispatch = 2,  // kreg_dispatch_threads: the threadgroup as launched
  kNeedsLinear = 4,    // kreg_linear: the thread's index in its threadgroup
};

// One of Metal's kernel attributes and the CUDA expression that gives its value.
struct Attribute {
  std::string_view name;
  std::string_view type;  // "uint" or "uint3"
  std::string_view value;
  unsigned char needs = kNeedsNothing;
};

// All 20 attributes MLX's metal_kernel knows, sorted by name.
std::span<const Attribute> attributes() noexcept;

// Throws InvalidArgument: "custom kernel 'kernel': what".
[[noreturn]] void invalid(std::string_view kernel, std::string_view what);

// Throws InvalidArgument unless `name` can be a parameter or template parameter: an
// identifier that is not a C++ keyword, not reserved (`__x`, `kreg...`), and not a name
// the preamble reserves (preamble.hpp) or the generated code defines. `role` says what it
// is ("input", ...).
void check_name(std::string_view name, std::string_view role, std::string_view kernel);

}  // namespace kreg::custom
