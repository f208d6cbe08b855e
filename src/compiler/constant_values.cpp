#include "compiler/constant_values.hpp"

namespace kreg::compiler {

std::string constant_values_header(const std::vector<core::ConstantValue>& values) {
  std::string out =
      "#pragma once\n"
      "#define KREG_CONSTANT_VALUES_DEFINED 1\n"
      "namespace kreg { namespace detail {\n"
      "template <int Index> struct given_constant {\n"
      "  static constexpr int kind = 0;\n"
      "  static constexpr long long value = 0;\n"
      "};\n";
  for (const core::ConstantValue& v : values) {
    out += "template <> struct given_constant<" + std::to_string(v.index) + "> {\n";
    out += "  static constexpr int kind = " + std::string(v.is_bool ? "1" : "2") + ";\n";
    out += "  static constexpr long long value = " + std::to_string(v.value) + ";\n";
    out += "};\n";
  }
  out += "} }\n";
  return out;
}

}  // namespace kreg::compiler
