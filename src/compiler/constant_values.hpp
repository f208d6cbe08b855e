#pragma once
// The header through which a constant set reaches a source: NVRTC pre-includes it, and
// <kreg/kernel.cuh>'s KREG_CONSTANT macros read the values from it.

#include "core/label.hpp"

#include <string>
#include <vector>

namespace kreg::compiler {

inline constexpr const char* kConstantValuesHeader = "kreg/constant_values.cuh";

std::string constant_values_header(const std::vector<core::ConstantValue>& values);

}  // namespace kreg::compiler
