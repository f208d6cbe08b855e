#pragma once
// A launch choice a built-in op makes by a rule, and that tuning may replace: which values
// of a kernel's int constants (tile widths, warps a block) to launch with for a problem's
// shape. The op asks `choose` once per call: a winner of `ops::tune` for the shape's bucket
// where the op's registry has one (Registry::tuned, remembered after the first ask), the
// rule's values otherwise. Under `ops::tune` the choice is recorded and forced instead.

#include <kreg/constants.hpp>
#include <kreg/registry.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace kreg::ops {

struct Choice {
  // One tunable int constant: the rule's value first, then the others worth timing, and the
  // kernel's own default, left out of the request (so the rule's choice is the precompiled
  // specialization, and the constants' text is the same however it was chosen).
  struct Knob {
    int index = 0;
    std::int32_t kernel_default = 0;
    std::vector<std::int32_t> values;
  };
  std::string kernel;  // the built-in entry, e.g. "matmul_skinny_bf16"
  Constants fixed;     // the constants every candidate has (dtype variants, epilogues)
  std::vector<Knob> knobs;
  std::string bucket;  // the shape bucket, e.g. "m16_n4096_k4096"
};

// A knob of `rule` followed by `others` (those equal to `rule` skipped).
Choice::Knob knob(int index, std::int32_t kernel_default, std::int32_t rule,
                  std::initializer_list<std::int32_t> others);

// The constants to launch `choice` with: `fixed` and a value for each knob.
Constants choose(Registry& registry, const Choice& choice);

// The value `constants` gives int constant `index`, or `fallback`.
std::int32_t int_constant(const Constants& constants, int index, std::int32_t fallback);

// The smallest power of two at least `n` (1 for n <= 1): buckets group problem sizes that
// the same constants suit, such as decode batches of 9 to 16 rows.
std::int64_t bucket_size(std::int64_t n);

}  // namespace kreg::ops
