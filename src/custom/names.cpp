#include "custom/names.hpp"

#include "custom/preamble.hpp"
#include "lex/lexer.hpp"
#include "lex/text.hpp"

#include <kreg/error.hpp>

#include <algorithm>
#include <array>
#include <string>

namespace kreg::custom {
namespace {

constexpr std::array<Attribute, 20> kAttributes = {{
    {"dispatch_quadgroups_per_threadgroup", "uint", "(kreg_dispatch_threads + 3u) / 4u"},
    {"dispatch_simdgroups_per_threadgroup", "uint", "(kreg_dispatch_threads + 31u) / 32u"},
    {"dispatch_threads_per_threadgroup", "uint3", "blockDim"},
    {"grid_origin", "uint3", "{0u, 0u, 0u}"},
    {"grid_size", "uint3", "kreg_grid"},
    {"quadgroup_index_in_threadgroup", "uint", "kreg_linear / 4u"},
    {"quadgroups_per_threadgroup", "uint", "(kreg_threads + 3u) / 4u"},
    {"simdgroup_index_in_threadgroup", "uint", "kreg_linear / 32u"},
    {"simdgroups_per_threadgroup", "uint", "(kreg_threads + 31u) / 32u"},
    {"thread_execution_width", "uint", "32u"},
    {"thread_index_in_quadgroup", "uint", "kreg_linear % 4u"},
    {"thread_index_in_simdgroup", "uint", "kreg_linear % 32u"},
    {"thread_index_in_threadgroup", "uint", "kreg_linear"},
    {"thread_position_in_grid", "uint3", "{kreg_x, kreg_y, kreg_z}"},
    {"thread_position_in_threadgroup", "uint3", "threadIdx"},
    {"threadgroup_position_in_grid", "uint3", "blockIdx"},
    {"threadgroups_per_grid", "uint3", "gridDim"},
    {"threads_per_grid", "uint3", "kreg_grid"},
    {"threads_per_simdgroup", "uint", "32u"},
    {"threads_per_threadgroup", "uint3", "kreg_group"},
}};

// C++ keywords and alternative tokens, and CUDA's built-in names. What the preamble defines
// is in its table (preamble.hpp).
constexpr std::string_view kTaken[] = {
    "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break",
    "case", "catch", "char", "char8_t", "char16_t", "char32_t", "class", "compl", "concept",
    "const", "consteval", "constexpr", "constinit", "const_cast", "continue", "co_await",
    "co_return", "co_yield", "decltype", "default", "delete", "do", "double", "dynamic_cast",
    "else", "enum", "explicit", "export", "extern", "false", "float", "for", "friend", "goto", "if",
    "inline", "int", "long", "mutable", "namespace", "new", "noexcept", "not", "not_eq", "nullptr",
    "operator", "or", "or_eq", "private", "protected", "public", "register", "reinterpret_cast",
    "requires", "return", "short", "signed", "sizeof", "static", "static_assert", "static_cast",
    "struct", "switch", "template", "this", "thread_local", "throw", "true", "try", "typedef",
    "typeid", "typename", "union", "unsigned", "using", "virtual", "void", "volatile", "wchar_t",
    "while", "xor", "xor_eq",
    // CUDA built-ins
    "threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize", "uint3", "dim3"};

[[noreturn]] void reject(std::string_view kernel, std::string_view role, std::string_view name,
                         std::string_view why) {
  throw Error(ErrorCode::InvalidArgument, "custom kernel '" + std::string(kernel) +
                                              "': " + std::string(role) + " name '" +
                                              std::string(name) + "' " + std::string(why));
}

}  // namespace

std::span<const Attribute> attributes() noexcept {
  return kAttributes;
}

void check_name(std::string_view name, std::string_view role, std::string_view kernel) {
  if (!lex::is_identifier(name)) reject(kernel, role, name, "is not a C++ identifier");
  if (name.starts_with("__") || name.starts_with("kreg")) {
    reject(kernel, role, name, "is reserved (names starting with '__' or 'kreg' are kreg's)");
  }
  if (std::find(std::begin(kTaken), std::end(kTaken), name) != std::end(kTaken) ||
      reserved_by_preamble(name)) {
    reject(kernel, role, name, "is a C++ keyword or a name the kernel preamble defines");
  }
  for (const Attribute& a : kAttributes) {
    if (a.name == name) reject(kernel, role, name, "is a Metal thread attribute kreg declares");
  }
}

}  // namespace kreg::custom
