#pragma once
/// \file
/// Compile-time constants that specialize a kernel source, and their canonical keys.

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kreg {

/// Values for the constants a source declares with `KREG_CONSTANT` or
/// `KREG_CONSTANT_DEFAULT` (see `<kreg/kernel.cuh>`), each given as (index, value).
/// Order does not matter: `{{300, 4}, {200, true}}` and `{{200, true}, {300, 4}}` name the
/// same specialization.
struct Constants {
  std::vector<std::pair<int, bool>> bools;
  std::vector<std::pair<int, std::int32_t>> ints;

  bool empty() const noexcept { return bools.empty() && ints.empty(); }
};

/// The canonical text of a constant set, sorted by index: "200:b1|300:i64".
/// An empty set gives "". Throws `InvalidArgument` if an index appears twice.
std::string constants_key(const Constants& constants);

/// Parses the canonical text back: "200:b1|300:i64" (or "" for no constants). Throws
/// `InvalidArgument` for malformed text or a repeated index.
Constants parse_constants(std::string_view key);

/// The cache key of a kernel: its name alone without constants, else
/// "name|200:b1|300:i64". This is what `Kernel::label()` returns.
std::string kernel_label(std::string_view name, const Constants& constants);

}  // namespace kreg
