#include "custom/names.hpp"

#include "custom/text_scan.hpp"

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

// C++ keywords and alternative tokens, plus what the preamble and CUDA define.
constexpr std::array<std::string_view, 145> kTaken = {
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
    "threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize", "uint3", "dim3",
    // kreg/custom.cuh
    "uint", "ushort", "uchar", "float16_t", "bfloat16_t", "int8_t", "int16_t", "int32_t", "int64_t",
    "uint8_t", "uint16_t", "uint32_t", "uint64_t", "mem_flags", "memory_order",
    "memory_order_relaxed", "threadgroup_barrier", "simdgroup_barrier", "simd_sum", "simd_max",
    "simd_min", "simd_prod", "simd_shuffle", "simd_shuffle_down", "simd_shuffle_up",
    "simd_shuffle_xor", "simd_broadcast", "atomic", "atomic_int", "atomic_uint", "atomic_float",
    "memory_order_acquire", "memory_order_release", "memory_order_acq_rel", "memory_order_seq_cst",
    "atomic_fetch_add_explicit", "atomic_fetch_sub_explicit", "atomic_fetch_max_explicit",
    "atomic_fetch_min_explicit", "atomic_fetch_and_explicit", "atomic_fetch_or_explicit",
    "atomic_fetch_xor_explicit", "atomic_exchange_explicit",
    "atomic_compare_exchange_weak_explicit", "atomic_load_explicit", "atomic_store_explicit"};

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

bool is_identifier(std::string_view name) noexcept {
  if (name.empty() || (name[0] >= '0' && name[0] <= '9')) return false;
  return std::all_of(name.begin(), name.end(), ident_char);
}

bool names(std::string_view text, std::string_view word) noexcept {
  if (word.empty()) return false;
  for (std::size_t at = text.find(word); at != std::string_view::npos;
       at = text.find(word, at + 1)) {
    const bool starts = at == 0 || !ident_char(text[at - 1]);
    const std::size_t end = at + word.size();
    const bool ends = end == text.size() || !ident_char(text[end]);
    if (starts && ends) return true;
  }
  return false;
}

bool names_before(std::string_view text, std::string_view word, std::string_view next) noexcept {
  if (word.empty()) return false;
  for (std::size_t at = text.find(word); at != std::string_view::npos;
       at = text.find(word, at + 1)) {
    if (at > 0 && ident_char(text[at - 1])) continue;
    std::size_t end = at + word.size();
    while (end < text.size() && space(text[end])) ++end;
    if (text.substr(end).starts_with(next)) return true;
  }
  return false;
}

void check_name(std::string_view name, std::string_view role, std::string_view kernel) {
  if (!is_identifier(name)) reject(kernel, role, name, "is not a C++ identifier");
  if (name.starts_with("__") || name.starts_with("kreg")) {
    reject(kernel, role, name, "is reserved (names starting with '__' or 'kreg' are kreg's)");
  }
  if (std::find(kTaken.begin(), kTaken.end(), name) != kTaken.end()) {
    reject(kernel, role, name, "is a C++ keyword or a name the kernel preamble defines");
  }
  for (const Attribute& a : kAttributes) {
    if (a.name == name) reject(kernel, role, name, "is a Metal thread attribute kreg declares");
  }
}

}  // namespace kreg::custom
