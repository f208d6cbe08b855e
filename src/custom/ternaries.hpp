#pragma once
// Metal's conditional operator over 16-bit floats, in C++. Pure text.
//
// In Metal, `c ? f : h` with a `float` f and a `half` h is a float, by the usual arithmetic
// conversions. kreg's `half` and `bfloat16` are classes that convert to and from float
// implicitly, so C++ finds the conversion both ways and rejects the conditional as ambiguous.
// The rewrite passes each of the two operands through
// `::kreg::detail::ternary_operand<decltype((other))>(...)` (<kreg/device/custom_ternary.cuh>),
// which gives both Metal's common type where they differ and leaves every other operand as it
// is, lvalues included. Comments, literals and preprocessor lines are left alone, and the
// text keeps its line breaks, so messages keep their line numbers. Each operand's copy
// inside the other's decltype holds the operand as every rewrite leaves it.

#include "lex/edits.hpp"
#include "lex/text.hpp"

#include <string>
#include <string_view>

namespace kreg::custom {

// Adds the edits that wrap each conditional operator's second and third operands.
void rewrite_ternaries(const lex::Text& text, lex::Edits& edits);

}  // namespace kreg::custom
