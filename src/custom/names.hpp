#pragma once
// The names of custom kernels: Metal's thread attributes as kreg declares them, and what a
// parameter may be called.

#include <span>
#include <string>
#include <string_view>

namespace kreg::custom {

// One of Metal's kernel attributes and the CUDA expression that gives its value.
struct Attribute {
  std::string_view name;
  std::string_view type;  // "uint" or "uint3"
  std::string_view value;
};

// All 20 attributes MLX's metal_kernel knows, sorted by name.
std::span<const Attribute> attributes() noexcept;

// Throws InvalidArgument unless `name` can be a parameter or template parameter: an
// identifier that is not a C++ keyword, not reserved (`__x`, `kreg...`), and not a name
// the preamble reserves (preamble.hpp) or the generated code defines. `role` says what it
// is ("input", ...).
void check_name(std::string_view name, std::string_view role, std::string_view kernel);

}  // namespace kreg::custom
