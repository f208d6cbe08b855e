#pragma once
// Canonical kernel labels ("name|200:b1|300:i64") and the packed keys that the lookup path
// builds without allocating.

#include <kreg/constants.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kreg::core {

struct ConstantValue {
  int index;
  bool is_bool;
  std::int32_t value;
};

// The constants of `c`, sorted by index (stable, so duplicates keep their order).
std::vector<ConstantValue> sorted_constants(const Constants& c);

// Index of the first index that appears twice in sorted `values`, or -1.
int first_repeated_index(const std::vector<ConstantValue>& values) noexcept;

// The text label of (name, values), values sorted: "name|200:b1|300:i64". Repeated
// indices are printed as given; callers that must reject them check first.
std::string format_label(std::string_view name, const std::vector<ConstantValue>& values);

// The registry's lookup key for (name, constants): the name itself without constants,
// else a marker byte, the name's length and name, and a fixed 9-byte record per constant
// (index, type, value), sorted by index. Packing instead of printing keeps the hit path
// cheap; the marker and the length keep keys of different shapes from ever comparing
// equal. A name that itself starts with the marker gets an empty key, which matches
// nothing.
// NOLINTNEXTLINE(cppcoreguidelines-pro-type-member-init): inline_ is written before read
class LookupKey {
 public:
  static constexpr char kMarker = '\xff';

  LookupKey() = default;  // NOLINT(cppcoreguidelines-pro-type-member-init)
  LookupKey(const LookupKey&) = delete;
  LookupKey& operator=(const LookupKey&) = delete;

  std::string_view build(std::string_view name, const Constants& c);

  // The key of a name without constants: the name itself, built into nothing.
  static std::string_view of_name(std::string_view name) noexcept {
    return !name.empty() && name.front() == kMarker ? std::string_view() : name;
  }

 private:
  static constexpr std::size_t kInlineBytes = 320;
  // Left uninitialized on purpose: build() writes before it reads, and zeroing 320 bytes
  // would cost more than the lookup.
  char inline_[kInlineBytes];  // NOLINT(cppcoreguidelines-pro-type-member-init)
  std::string overflow_;
};

}  // namespace kreg::core
