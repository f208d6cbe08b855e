#pragma once
// The names a custom kernel's body uses: identifier rules, whole-word search, and the names
// kreg generates (Metal thread attributes, per-input shape parameters).

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

bool is_identifier(std::string_view name) noexcept;
// Whether `text` uses `word` as a whole identifier: "a_shape" counts in "a_shape[0]" but
// not in "a_shapes" or "my_a_shape".
bool names(std::string_view text, std::string_view word) noexcept;

// Whether `text` has `word` as an identifier (not the end of a longer one) followed, after
// any blanks and line breaks, by `next`: "d" before "[" in "d [0]" (a subscript), "cg"
// before "::", "as_type" before "<".
bool names_before(std::string_view text, std::string_view word, std::string_view next) noexcept;

// Throws InvalidArgument unless `name` can be a parameter or template parameter: an
// identifier that is not a C++ keyword, not reserved (`__x`, `kreg...`), and not a name
// the preamble or the generated code defines. `role` says what it is ("input", ...).
void check_name(std::string_view name, std::string_view role, std::string_view kernel);

}  // namespace kreg::custom
