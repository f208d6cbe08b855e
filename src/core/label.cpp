#include "core/label.hpp"

#include <kreg/error.hpp>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <span>

namespace kreg::core {
namespace {

// Longest text of one item: "|-2147483648:i-2147483648".
constexpr std::size_t kMaxItemBytes = 1 + 11 + 2 + 11;

template <class Emit>
void for_each_sorted(const Constants& c, std::span<ConstantValue> scratch, Emit&& emit) {
  std::size_t n = 0;
  for (const auto& [index, value] : c.bools) scratch[n++] = {index, true, value ? 1 : 0};
  for (const auto& [index, value] : c.ints) scratch[n++] = {index, false, value};
  // Insertion sort: sets are tiny, and it is stable and allocation-free.
  for (std::size_t i = 1; i < n; ++i) {
    ConstantValue item = scratch[i];
    std::size_t j = i;
    while (j > 0 && scratch[j - 1].index > item.index) {
      scratch[j] = scratch[j - 1];
      --j;
    }
    scratch[j] = item;
  }
  for (std::size_t i = 0; i < n; ++i) emit(scratch[i]);
}

char* write_item(char* out, const ConstantValue& item) {
  *out++ = '|';
  out = std::to_chars(out, out + 11, item.index).ptr;
  *out++ = ':';
  *out++ = item.is_bool ? 'b' : 'i';
  return std::to_chars(out, out + 11, item.value).ptr;
}

constexpr std::size_t kRecordBytes = 9;

char* write_record(char* out, const ConstantValue& item) {
  std::memcpy(out, &item.index, 4);
  out[4] = item.is_bool ? 'b' : 'i';
  std::memcpy(out + 5, &item.value, 4);
  return out + kRecordBytes;
}

}  // namespace

std::string_view LookupKey::build(std::string_view name, const Constants& c) {
  const std::size_t count = c.bools.size() + c.ints.size();
  if (count == 0) return of_name(name);
  if ((!name.empty() && name.front() == kMarker) || name.size() > 0xFFFF) return {};
  const std::size_t size = 3 + name.size() + count * kRecordBytes;
  char* begin = inline_;
  if (size > kInlineBytes) {
    overflow_.resize(size);
    begin = overflow_.data();
  }
  char* out = begin;
  const auto length = static_cast<std::uint16_t>(name.size());
  *out++ = kMarker;
  std::memcpy(out, &length, 2);
  out += 2;
  std::memcpy(out, name.data(), name.size());
  char* const records = out + name.size();
  // Each record goes straight to its sorted place among those written (an insertion sort,
  // stable, as for_each_sorted is): sets are tiny, and a given set is usually sorted already.
  std::size_t n = 0;
  const auto put = [&](const ConstantValue& item) {
    std::size_t at = n;
    while (at > 0) {
      int index = 0;
      std::memcpy(&index, records + (at - 1) * kRecordBytes, 4);
      if (index <= item.index) break;
      --at;
    }
    if (at < n) {
      std::memmove(records + (at + 1) * kRecordBytes, records + at * kRecordBytes,
                   (n - at) * kRecordBytes);
    }
    write_record(records + at * kRecordBytes, item);
    ++n;
  };
  for (const auto& [index, value] : c.bools) put({index, true, value ? 1 : 0});
  for (const auto& [index, value] : c.ints) put({index, false, value});
  return {begin, size};
}

std::vector<ConstantValue> sorted_constants(const Constants& c) {
  std::vector<ConstantValue> values(c.bools.size() + c.ints.size());
  std::vector<ConstantValue> out;
  out.reserve(values.size());
  for_each_sorted(c, values, [&](const ConstantValue& v) { out.push_back(v); });
  return out;
}

int first_repeated_index(const std::vector<ConstantValue>& values) noexcept {
  for (std::size_t i = 1; i < values.size(); ++i) {
    if (values[i].index == values[i - 1].index) return static_cast<int>(i);
  }
  return -1;
}

std::string format_label(std::string_view name, const std::vector<ConstantValue>& values) {
  std::string label(name.size() + values.size() * kMaxItemBytes, '\0');
  std::memcpy(label.data(), name.data(), name.size());
  char* out = label.data() + name.size();
  for (const ConstantValue& v : values) out = write_item(out, v);
  label.resize(static_cast<std::size_t>(out - label.data()));
  return label;
}

}  // namespace kreg::core

namespace kreg {

std::string kernel_label(std::string_view name, const Constants& constants) {
  auto values = core::sorted_constants(constants);
  if (int at = core::first_repeated_index(values); at >= 0) {
    throw Error(ErrorCode::InvalidArgument,
                "constant index " + std::to_string(values[static_cast<std::size_t>(at)].index) +
                    " is given more than once for '" + std::string(name) + "'");
  }
  return core::format_label(name, values);
}

Constants parse_constants(std::string_view key) {
  Constants out;
  auto bad = [&](const std::string& why) {
    return Error(ErrorCode::InvalidArgument, "'" + std::string(key) + "' is not a constant set (" +
                                                 why + "; expected e.g. 200:b1|300:i64)");
  };
  std::string_view rest = key;
  while (!rest.empty()) {
    const std::size_t bar = rest.find('|');
    const std::string_view item = rest.substr(0, bar);
    rest = bar == std::string_view::npos ? std::string_view{} : rest.substr(bar + 1);
    if (item.empty() || (bar != std::string_view::npos && rest.empty())) throw bad("empty item");
    const std::size_t colon = item.find(':');
    if (colon == std::string_view::npos || colon + 2 > item.size()) throw bad("missing ':'");
    int index = 0;
    auto [index_end, index_error] = std::from_chars(item.data(), item.data() + colon, index);
    if (index_error != std::errc() || index_end != item.data() + colon || index < 0) {
      throw bad("bad index");
    }
    const char type = item[colon + 1];
    const std::string_view value = item.substr(colon + 2);
    std::int32_t number = 0;
    auto [value_end, value_error] =
        std::from_chars(value.data(), value.data() + value.size(), number);
    if (value.empty() || value_error != std::errc() || value_end != value.data() + value.size()) {
      throw bad("bad value");
    }
    if (type == 'b') {
      if (number != 0 && number != 1) throw bad("a bool is b0 or b1");
      out.bools.emplace_back(index, number == 1);
    } else if (type == 'i') {
      out.ints.emplace_back(index, number);
    } else {
      throw bad("type must be b or i");
    }
  }
  kernel_label("", out);  // rejects repeated indices
  return out;
}

std::string constants_key(const Constants& constants) {
  std::string label = kernel_label("", constants);
  // Drop the leading '|' that separates the (empty) name from the first constant.
  return label.empty() ? label : label.substr(1);
}

}  // namespace kreg
