#include "custom/preamble.hpp"

#include "lex/text.hpp"

#include <algorithm>
#include <array>

namespace kreg::custom {
namespace {

constexpr Word named(std::string_view w) {
  return {w, Use::Named, false};
}
constexpr Word taken(std::string_view w) {
  return {w, Use::Named, true};
}
constexpr Word called(std::string_view w) {
  return {w, Use::Called, false};
}

// Packed by hand: clang-format would set most of these lists one word a line.
// clang-format off
constexpr Word kTypes[] = {
    taken("uint"), taken("ushort"), taken("uchar"), taken("int8_t"), taken("int16_t"),
    taken("int32_t"), taken("int64_t"), taken("uint8_t"), taken("uint16_t"), taken("uint32_t"),
    taken("uint64_t")};
constexpr Word kComplex[] = {
    named("complex64_t")};
// Metal's 16-bit names, kreg's and the vector types made of them.
constexpr Word kFloat16[] = {
    taken("float16_t"), taken("bfloat16_t"), named("half"), named("half2"), named("half3"),
    named("half4"), named("packed_half2"), named("packed_half3"), named("packed_half4"),
    named("bfloat"), named("bfloat16"), named("bfloat2"), named("bfloat3"), named("bfloat4"),
    named("packed_bfloat2"), named("packed_bfloat3"), named("packed_bfloat4")};
constexpr Word kBarrier[] = {
    taken("threadgroup_barrier"), taken("simdgroup_barrier"), taken("mem_flags")};
constexpr Word kSimd[] = {
    taken("simd_sum"), taken("simd_prod"), taken("simd_product"), taken("simd_max"),
    taken("simd_min"), taken("simd_and"), taken("simd_or"), taken("simd_xor"), taken("simd_all"),
    taken("simd_any"), taken("simd_ballot"), taken("simd_broadcast"), taken("simd_shuffle"),
    taken("simd_shuffle_up"), taken("simd_shuffle_down"), taken("simd_shuffle_xor"),
    taken("simd_shuffle_rotate_up"), taken("simd_shuffle_rotate_down"),
    taken("simd_prefix_inclusive_sum"), taken("simd_prefix_exclusive_sum"),
    taken("simd_prefix_inclusive_product"), taken("simd_prefix_exclusive_product")};
constexpr Word kSimdgroupMatrix[] = {
    named("simdgroup_matrix"), named("simdgroup_float8x8"), named("simdgroup_half8x8"),
    named("simdgroup_bfloat8x8"), named("simdgroup_load"), named("simdgroup_store"),
    named("simdgroup_multiply"), named("simdgroup_multiply_accumulate"),
    named("make_filled_simdgroup_matrix")};
constexpr Word kAtomic[] = {
    taken("atomic"), taken("atomic_int"), taken("atomic_uint"), taken("atomic_float"),
    taken("memory_order"), taken("memory_order_relaxed"), taken("memory_order_acquire"),
    taken("memory_order_release"), taken("memory_order_acq_rel"), taken("memory_order_seq_cst"),
    taken("atomic_fetch_add_explicit"), taken("atomic_fetch_sub_explicit"),
    taken("atomic_fetch_max_explicit"), taken("atomic_fetch_min_explicit"),
    taken("atomic_fetch_and_explicit"), taken("atomic_fetch_or_explicit"),
    taken("atomic_fetch_xor_explicit"), taken("atomic_exchange_explicit"),
    taken("atomic_compare_exchange_weak_explicit"), taken("atomic_load_explicit"),
    taken("atomic_store_explicit")};
// Metal's namespaces, qualifying a name, and calls of the functions CUDA lacks. A body's own
// variable named `step` or `sign` does not count. CUDA has exp, min, sqrt and the like for
// float itself, so a body that calls only those compiles without the part.
constexpr Word kMath[] = {
    {"metal", Use::Scoped, false}, {"fast", Use::Scoped, false}, {"precise", Use::Scoped, false},
    called("clamp"), called("select"), called("saturate"), called("mix"), called("step"),
    called("smoothstep"), called("fract"), called("sign"), called("powr"), called("divide")};
// Each costs compile time, so a part of their own.
constexpr Word kConstants[] = {
    named("INFINITY"), named("NAN"), named("HUGE_VALF"), named("MAXFLOAT"), named("FLT_MAX"),
    named("FLT_MIN"), named("FLT_EPSILON"), named("M_E_F"), named("M_LOG2E_F"),
    named("M_LOG10E_F"), named("M_LN2_F"), named("M_LN10_F"), named("M_PI_F"), named("M_PI_2_F"),
    named("M_PI_4_F"), named("M_1_PI_F"), named("M_2_PI_F"), named("M_2_SQRTPI_F"),
    named("M_SQRT2_F"), named("M_SQRT1_2_F")};
constexpr Word kUtils[] = {
    named("elem_to_loc"), named("elem_to_loc_1"), named("elem_to_loc_2"), named("elem_to_loc_3"),
    named("ceildiv")};
constexpr Word kLimits[] = {
    named("Limits")};
constexpr Word kBits[] = {
    {"as_type", Use::Templated, false}};
// What, called on a vector, needs the vector forms of the math part.
constexpr Word kVectorMath[] = {
    called("dot"), called("length"), called("length_squared"), called("distance"),
    called("normalize"), called("cross"), called("abs"), called("fabs"), called("exp"),
    called("exp2"), called("exp10"), called("log"), called("log2"), called("log10"),
    called("sqrt"), called("rsqrt"), called("sin"), called("cos"), called("tan"), called("tanh"),
    called("erf"), called("floor"), called("ceil"), called("round"), called("rint"),
    called("trunc"), called("fract"), called("sign"), called("saturate"), called("min"),
    called("max"), called("fmin"), called("fmax"), called("pow"), called("powr"), called("fmod"),
    called("atan2"), called("copysign"), called("step"), called("divide"), called("clamp"),
    called("mix"), called("fma"), called("smoothstep"), called("select")};
// clang-format on

constexpr Part kNeedsTypes[] = {Part::Types};
constexpr Part kNeedsFloat16Types[] = {Part::Float16, Part::Types};
constexpr Part kNeedsFloat16Simd[] = {Part::Float16, Part::Simd};
constexpr Part kNeedsFloat16Math[] = {Part::Float16, Part::Math};
constexpr Part kNeedsFloat16Vector[] = {Part::Float16, Part::Vector};
constexpr Part kNeedsMathVector[] = {Part::Math, Part::Vector};

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

bool uses_any(const lex::Text& text, std::span<const Word> words) noexcept {
  return std::any_of(words.begin(), words.end(), [&](const Word& w) {
    switch (w.use) {
      case Use::Named: return text.names(w.text);
      case Use::Called: return text.names_before(w.text, "(");
      case Use::Scoped: return text.names_before(w.text, "::");
      case Use::Templated: return text.names_before(w.text, "<");
    }
    return false;
  });
}

bool reserved_by_preamble(std::string_view name) noexcept {
  return std::any_of(kParts.begin(), kParts.end(), [&](const PartInfo& p) {
    return std::any_of(p.words.begin(), p.words.end(),
                       [&](const Word& w) { return w.reserved && w.text == name; });
  });
}

}  // namespace kreg::custom
