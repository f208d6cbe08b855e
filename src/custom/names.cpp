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
    {"dispatch_quadgroups_per_threadgroup", "uint", "(kreg_dispatch_threads + 3u) / 4u",
     kNeedsDispatch},
    {"dispatch_simdgroups_per_threadgroup", "uint", "(kreg_dispatch_threads + 31u) / 32u",
     kNeedsDispatch},
    {"dispatch_threads_per_threadgroup", "uint3", "uint3(blockDim)"},
    {"grid_origin", "uint3", "{0u, 0u, 0u}"},
    {"grid_size", "uint3", "uint3(kreg_grid)"},
    {"quadgroup_index_in_threadgroup", "uint", "kreg_linear / 4u", kNeedsLinear},
    {"quadgroups_per_threadgroup", "uint", "(kreg_threads + 3u) / 4u", kNeedsGroup},
    {"simdgroup_index_in_threadgroup", "uint", "kreg_linear / 32u", kNeedsLinear},
    {"simdgroups_per_threadgroup", "uint", "(kreg_threads + 31u) / 32u", kNeedsGroup},
    {"thread_execution_width", "uint", "32u"},
    {"thread_index_in_quadgroup", "uint", "kreg_linear % 4u", kNeedsLinear},
    {"thread_index_in_simdgroup", "uint", "kreg_linear % 32u", kNeedsLinear},
    {"thread_index_in_threadgroup", "uint", "kreg_linear", kNeedsLinear},
    {"thread_position_in_grid", "uint3", "{kreg_x, kreg_y, kreg_z}"},
    {"thread_position_in_threadgroup", "uint3", "uint3(threadIdx)"},
    {"threadgroup_position_in_grid", "uint3", "uint3(blockIdx)"},
    {"threadgroups_per_grid", "uint3", "uint3(gridDim)"},
    {"threads_per_grid", "uint3", "uint3(kreg_grid)"},
    {"threads_per_simdgroup", "uint", "32u"},
    {"threads_per_threadgroup", "uint3", "uint3(kreg_group)", kNeedsGroup},
}};

// CUDA's built-in names. What the preamble defines is in its table (preamble.hpp).
constexpr std::string_view kBuiltins[] = {"threadIdx", "blockIdx", "blockDim", "gridDim",
                                          "warpSize",  "uint3",    "dim3"};

}  // namespace

std::span<const Attribute> attributes() noexcept {
  return kAttributes;
}

[[noreturn]] void invalid(std::string_view kernel, std::string_view what) {
  throw Error(ErrorCode::InvalidArgument,
              "custom kernel '" + std::string(kernel) + "': " + std::string(what));
}

void check_name(std::string_view name, std::string_view role, std::string_view kernel) {
  const auto reject = [&](std::string_view why) {
    invalid(kernel, std::string(role) + " name '" + std::string(name) + "' " + std::string(why));
  };
  if (!lex::is_identifier(name)) reject("is not a C++ identifier");
  if (name.starts_with("__") || name.starts_with("kreg")) {
    reject("is reserved (names starting with '__' or 'kreg' are kreg's)");
  }
  if (lex::is_keyword(name) ||
      std::find(std::begin(kBuiltins), std::end(kBuiltins), name) != std::end(kBuiltins) ||
      reserved_by_preamble(name)) {
    reject("is a C++ keyword or a name the kernel preamble defines");
  }
  for (const Attribute& a : kAttributes) {
    if (a.name == name) reject("is a Metal thread attribute kreg declares");
  }
}

}  // namespace kreg::custom
