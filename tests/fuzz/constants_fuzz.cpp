// Constant sets and their canonical forms (src/core/label.hpp, src/compiler/constant_values.hpp):
// the text a user, a manifest or the CLI gives ("200:b1|300:i64"), and sets built through
// the API with any indices and values, repeats included.
//
// The input is read twice. As text, for parse_constants: it accepts or throws
// InvalidArgument; what it accepts has a canonical key that parses back to the same set and
// is its own canonical key, whatever the order the constants were given in. As records
// (a name, then 9 bytes a constant: index, type, value), split into two sets A and B:
// labels and lookup keys are order-blind and equal exactly when the sorted sets (and names)
// are; a repeated index is refused by labels and found by first_repeated_index; a label
// parses back to its set; the header NVRTC reads defines exactly the set's values.
#include "compiler/constant_values.hpp"
#include "core/label.hpp"

#include <kreg/error.hpp>

#include "fuzz_check.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace {

using kreg::Constants;
using kreg::ErrorCode;
using kreg::core::ConstantValue;
using kreg::fuzz::refused;

bool same(const std::vector<ConstantValue>& a, const std::vector<ConstantValue>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                    [](const ConstantValue& x, const ConstantValue& y) {
                      return x.index == y.index && x.is_bool == y.is_bool && x.value == y.value;
                    });
}

Constants reversed(const Constants& c) {
  return {{c.bools.rbegin(), c.bools.rend()}, {c.ints.rbegin(), c.ints.rend()}};
}

std::string key_of(std::string_view name, const Constants& c) {
  kreg::core::LookupKey builder;
  return std::string(builder.build(name, c));
}

void check_text(std::string_view text) {
  Constants given;
  if (refused([&] { given = kreg::parse_constants(text); })) return;
  const std::string key = kreg::constants_key(given);
  Constants again;
  KREG_FUZZ_CHECK(!refused([&] { again = kreg::parse_constants(key); }),
                  "the canonical key '" + key + "' does not parse");
  KREG_FUZZ_CHECK(kreg::constants_key(again) == key, "the key '" + key + "' is not canonical");
  KREG_FUZZ_CHECK(same(kreg::core::sorted_constants(again), kreg::core::sorted_constants(given)),
                  "the key '" + key + "' lost or changed a constant");
  KREG_FUZZ_CHECK(kreg::constants_key(reversed(given)) == key,
                  "the key depends on the order of the constants: " + key);
}

// A constant set as the API could be given it: the bytes name indices and values freely.
std::vector<ConstantValue> records(std::string_view bytes) {
  std::vector<ConstantValue> out;
  for (std::size_t at = 0; at + 9 <= bytes.size(); at += 9) {
    ConstantValue v{};
    std::memcpy(&v.index, bytes.data() + at, 4);
    v.is_bool = (bytes[at + 4] & 1) != 0;
    std::memcpy(&v.value, bytes.data() + at + 5, 4);
    if (v.is_bool) v.value &= 1;
    out.push_back(v);
  }
  return out;
}

Constants to_constants(const std::vector<ConstantValue>& values) {
  Constants c;
  for (const ConstantValue& v : values) {
    if (v.is_bool) {
      c.bools.emplace_back(v.index, v.value != 0);
    } else {
      c.ints.emplace_back(v.index, v.value);
    }
  }
  return c;
}

// What sorted_constants must return, computed another way: bools before ints (the order
// Constants lists them in), then a stable sort by index.
std::vector<ConstantValue> expected_order(const std::vector<ConstantValue>& values) {
  std::vector<ConstantValue> out;
  for (const ConstantValue& v : values) {
    if (v.is_bool) out.push_back(v);
  }
  for (const ConstantValue& v : values) {
    if (!v.is_bool) out.push_back(v);
  }
  std::stable_sort(out.begin(), out.end(), [](const ConstantValue& a, const ConstantValue& b) {
    return a.index < b.index;
  });
  return out;
}

struct Checked {
  std::vector<ConstantValue> sorted;
  bool repeats = false;
  std::string label;
  std::string key;
};

Checked check_set(std::string_view name, const std::vector<ConstantValue>& values) {
  const Constants c = to_constants(values);
  Checked out;
  out.sorted = kreg::core::sorted_constants(c);
  KREG_FUZZ_CHECK(same(out.sorted, expected_order(values)), "sorted_constants misorders a set");
  int first_repeat = -1;
  for (std::size_t i = 1; i < out.sorted.size() && first_repeat < 0; ++i) {
    if (out.sorted[i].index == out.sorted[i - 1].index) first_repeat = static_cast<int>(i);
  }
  out.repeats = first_repeat >= 0;
  KREG_FUZZ_CHECK(kreg::core::first_repeated_index(out.sorted) == first_repeat,
                  "first_repeated_index missed or invented a repeat");
  const bool label_refused = refused([&] { out.label = kreg::kernel_label(name, c); });
  KREG_FUZZ_CHECK(label_refused == out.repeats, "a label was refused, or given, wrongly");
  out.key = key_of(name, c);
  if (out.repeats) return out;

  KREG_FUZZ_CHECK(out.label == kreg::core::format_label(name, out.sorted),
                  "the two label writers disagree: " + out.label);
  KREG_FUZZ_CHECK(out.key == key_of(name, reversed(c)), "the lookup key depends on order");
  const std::string constants = out.label.substr(name.size() + (values.empty() ? 0 : 1));
  KREG_FUZZ_CHECK(kreg::constants_key(c) == constants, "constants_key and the label disagree");
  const bool negative =
      std::any_of(values.begin(), values.end(), [](const ConstantValue& v) { return v.index < 0; });
  Constants parsed;
  const bool parse_refused = refused([&] { parsed = kreg::parse_constants(constants); });
  // Sources declare only non-negative indices, and the text form accepts only those.
  KREG_FUZZ_CHECK(parse_refused == negative, "the label '" + out.label + "' was misread");
  if (!negative) {
    KREG_FUZZ_CHECK(same(kreg::core::sorted_constants(parsed), out.sorted),
                    "the label '" + out.label + "' parses to another set");
  }

  const std::string header = kreg::compiler::constant_values_header(out.sorted);
  std::size_t specializations = 0;
  for (std::size_t at = header.find("template <>"); at != std::string::npos;
       at = header.find("template <>", at + 1)) {
    ++specializations;
  }
  KREG_FUZZ_CHECK(specializations == out.sorted.size(), "the header defines another set");
  for (const ConstantValue& v : out.sorted) {
    const std::string definition =
        "struct given_constant<" + std::to_string(v.index) +
        "> {\n  static constexpr int kind = " + (v.is_bool ? "1" : "2") +
        ";\n  static constexpr long long value = " + std::to_string(v.value) + ";\n};\n";
    KREG_FUZZ_CHECK(header.find(definition) != std::string::npos,
                    "the header lacks constant " + std::to_string(v.index));
  }
  return out;
}

void check_records(std::string_view bytes) {
  if (bytes.empty()) return;
  const std::size_t name_size = static_cast<unsigned char>(bytes[0]) % 16;
  const std::string_view name = bytes.substr(1, name_size);
  const std::vector<ConstantValue> all = records(bytes.substr(1 + name.size()));
  const std::vector<ConstantValue> a(all.begin(), all.begin() + static_cast<long>(all.size() / 2));
  const std::vector<ConstantValue> b(all.begin() + static_cast<long>(a.size()), all.end());
  const Checked ca = check_set(name, a);
  const Checked cb = check_set(name, b);
  if (ca.repeats || cb.repeats) return;
  const bool equal = same(ca.sorted, cb.sorted);
  KREG_FUZZ_CHECK((ca.label == cb.label) == equal, "two sets share a label, or one set has two");
  // An empty lookup key is the one that matches nothing (a name starting with the marker).
  if (!ca.key.empty() && !cb.key.empty()) {
    KREG_FUZZ_CHECK((ca.key == cb.key) == equal, "two sets share a lookup key, or one has two");
  }
}

}  // namespace

void kreg::fuzz::test_one_input(std::string_view input) {
  check_text(input);
  check_records(input);
}
