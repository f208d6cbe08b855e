#include "custom/preamble.hpp"

#include "lex/text.hpp"

#include <algorithm>
#include <array>

namespace kreg::custom {
namespace {

constexpr bool kReserved = true;

// clang-format off
constexpr WordList kTypes[] = {{Use::Named, kReserved,
    "uint ushort uchar int8_t int16_t int32_t int64_t uint8_t uint16_t uint32_t uint64_t"}};
constexpr WordList kComplex[] = {{Use::Named, false, "complex64_t"}};
// Metal's 16-bit names, kreg's and the vector types made of them.
constexpr WordList kFloat16[] = {
    {Use::Named, kReserved, "float16_t bfloat16_t"},
    {Use::Named, false, "half half2 half3 half4 packed_half2 packed_half3 packed_half4 bfloat "
                        "bfloat16 bfloat2 bfloat3 bfloat4 packed_bfloat2 packed_bfloat3 "
                        "packed_bfloat4"}};
constexpr WordList kBarrier[] = {
    {Use::Named, kReserved, "threadgroup_barrier simdgroup_barrier mem_flags"}};
constexpr WordList kSimd[] = {{Use::Named, kReserved,
    "simd_sum simd_prod simd_product simd_max simd_min simd_and simd_or simd_xor simd_all "
    "simd_any simd_ballot simd_broadcast simd_shuffle simd_shuffle_up simd_shuffle_down "
    "simd_shuffle_xor simd_shuffle_rotate_up simd_shuffle_rotate_down "
    "simd_prefix_inclusive_sum simd_prefix_exclusive_sum simd_prefix_inclusive_product "
    "simd_prefix_exclusive_product"}};
constexpr WordList kSimdgroupMatrix[] = {{Use::Named, false,
    "simdgroup_matrix simdgroup_float8x8 simdgroup_half8x8 simdgroup_bfloat8x8 simdgroup_load "
    "simdgroup_store simdgroup_multiply simdgroup_multiply_accumulate "
    "make_filled_simdgroup_matrix"}};
constexpr WordList kAtomic[] = {{Use::Named, kReserved,
    "atomic atomic_int atomic_uint atomic_float memory_order memory_order_relaxed "
    "memory_order_acquire memory_order_release memory_order_acq_rel memory_order_seq_cst "
    "atomic_fetch_add_explicit atomic_fetch_sub_explicit atomic_fetch_max_explicit "
    "atomic_fetch_min_explicit atomic_fetch_and_explicit atomic_fetch_or_explicit "
    "atomic_fetch_xor_explicit atomic_exchange_explicit atomic_compare_exchange_weak_explicit "
    "atomic_load_explicit atomic_store_explicit"}};
// Metal's namespaces, qualifying a name, and calls of the functions CUDA lacks. A body's own
// variable named `step` or `sign` does not count. CUDA has exp, min, sqrt and the like for
// float itself, so a body that calls only those compiles without the part.
constexpr WordList kMath[] = {
    {Use::Scoped, false, "metal fast precise"},
    {Use::Called, false, "clamp select saturate mix step smoothstep fract sign powr divide"}};
// Each costs compile time, so a part of their own.
constexpr WordList kConstants[] = {{Use::Named, false,
    "INFINITY NAN HUGE_VALF MAXFLOAT FLT_MAX FLT_MIN FLT_EPSILON M_E_F M_LOG2E_F M_LOG10E_F "
    "M_LN2_F M_LN10_F M_PI_F M_PI_2_F M_PI_4_F M_1_PI_F M_2_PI_F M_2_SQRTPI_F M_SQRT2_F "
    "M_SQRT1_2_F"}};
constexpr WordList kUtils[] = {
    {Use::Named, false, "elem_to_loc elem_to_loc_1 elem_to_loc_2 elem_to_loc_3 ceildiv"}};
constexpr WordList kLimits[] = {{Use::Named, false, "Limits"}};
constexpr WordList kNumericLimits[] = {{Use::Templated, false, "numeric_limits"}};
constexpr WordList kBits[] = {{Use::Templated, false, "as_type"}};
// What, called on a vector, needs the vector forms of the math part.
constexpr WordList kVectorMath[] = {{Use::Called, false,
    "dot length length_squared distance normalize cross abs fabs exp exp2 exp10 log log2 log10 "
    "sqrt rsqrt sin cos tan tanh erf floor ceil round rint trunc fract sign saturate min max "
    "fmin fmax pow powr fmod atan2 copysign step divide clamp mix fma smoothstep select"}};

constexpr Part kNeedsTypes[] = {Part::Types};
constexpr Part kNeedsFloat16Types[] = {Part::Float16, Part::Types};
constexpr Part kNeedsFloat16Simd[] = {Part::Float16, Part::Simd};
constexpr Part kNeedsFloat16Math[] = {Part::Float16, Part::Math};
constexpr Part kNeedsFloat16Vector[] = {Part::Float16, Part::Vector};
constexpr Part kNeedsMathVector[] = {Part::Math, Part::Vector};
// clang-format on

constexpr std::array<PartInfo, static_cast<std::size_t>(Part::Count)> kParts = {{
    {Part::Types, "kreg/device/custom_types.cuh", kTypes, {}},
    {Part::Complex, "kreg/device/custom_complex.cuh", kComplex, {}},
    {Part::Float16, "kreg/device/custom_float16.cuh", kFloat16, {}},
    {Part::Barrier, "kreg/device/custom_barrier.cuh", kBarrier, {}},
    {Part::Simd, "kreg/device/custom_simd.cuh", kSimd, kNeedsFloat16Types},
    {Part::SimdgroupMatrix, "kreg/device/custom_simdgroup_matrix.cuh", kSimdgroupMatrix,
     kNeedsFloat16Simd},
    {Part::Atomic, "kreg/device/custom_atomic.cuh", kAtomic, kNeedsFloat16Types},
    {Part::Math, "kreg/device/custom_math.cuh", kMath, {}},
    {Part::MathFloat16, "kreg/device/custom_math_float16.cuh", {}, kNeedsFloat16Math},
    {Part::Constants, "kreg/device/custom_constants.cuh", kConstants, {}},
    {Part::Utils, "kreg/device/custom_utils.cuh", kUtils, kNeedsTypes},
    {Part::Limits, "kreg/device/custom_limits.cuh", kLimits, {}},
    {Part::NumericLimits, "kreg/device/custom_numeric_limits.cuh", kNumericLimits, {}},
    {Part::Bits, "kreg/device/custom_bits.cuh", kBits, {}},
    {Part::Ternary, "kreg/device/custom_ternary.cuh", {}, {}},
    {Part::Threadgroup, "kreg/device/custom_threadgroup.cuh", {}, {}},
    {Part::Vector, "kreg/device/custom_vector.cuh", {}, kNeedsTypes},
    {Part::VectorFloat16, "kreg/device/custom_vector_float16.cuh", {}, kNeedsFloat16Vector},
    {Part::VectorMath, "kreg/device/custom_vector_math.cuh", kVectorMath, kNeedsMathVector},
}};

}  // namespace

std::span<const PartInfo> parts() noexcept {
  return kParts;
}

const PartInfo& part(Part p) noexcept {
  return kParts[static_cast<std::size_t>(p)];
}

namespace {

// Calls `found` with each of the part's words until it returns true; whether one did.
template <class Found>
bool any_word(const PartInfo& part, Found found) {
  for (const WordList& list : part.words) {
    std::string_view rest = list.words;
    while (!rest.empty()) {
      const std::size_t space = std::min(rest.find(' '), rest.size());
      if (space > 0 && found(Word{rest.substr(0, space), list.use, list.reserved})) return true;
      rest.remove_prefix(std::min(space + 1, rest.size()));
    }
  }
  return false;
}

}  // namespace

std::vector<Word> words_of(const PartInfo& part) {
  std::vector<Word> out;
  any_word(part, [&](const Word& w) {
    out.push_back(w);
    return false;
  });
  return out;
}

bool uses_any(const lex::Text& text, const PartInfo& part) {
  return any_word(part, [&](const Word& w) {
    switch (w.use) {
      case Use::Named: return text.names(w.text);
      case Use::Called: return text.names_before(w.text, "(");
      case Use::Scoped: return text.names_before(w.text, "::");
      case Use::Templated: return text.names_before(w.text, "<");
    }
    return false;
  });
}

bool reserved_by_preamble(std::string_view name) {
  return std::any_of(kParts.begin(), kParts.end(), [&](const PartInfo& p) {
    return any_word(p, [&](const Word& w) { return w.reserved && w.text == name; });
  });
}

}  // namespace kreg::custom
