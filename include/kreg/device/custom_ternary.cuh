#pragma once
/// \file
/// Metal's common type for a conditional operator that mixes the 16-bit floats with other
/// arithmetic types. kreg rewrites `c ? x : y` in a custom kernel that uses 16-bit floats to
/// `c ? ternary_operand<decltype((y))>((x)) : ternary_operand<decltype((x))>((y))`: where
/// Metal's usual arithmetic conversions would convert one operand, these do it; everything
/// else passes through unchanged, lvalues as lvalues.

#include <kreg/device/custom_traits.cuh>

namespace kreg::detail {

template <class T>
struct bare {
  using type = T;
};
template <class T>
struct bare<T&> : bare<T> {};
template <class T>
struct bare<T&&> : bare<T> {};
template <class T>
struct bare<const T> : bare<T> {};
template <class T>
struct bare<volatile T> : bare<T> {};
template <class T>
struct bare<const volatile T> {
  using type = T;
};

/// `x` as the operand of a conditional whose other operand has type `Other`:
///   - a 16-bit float against `float`, `double` or the other 16-bit float: a `float`
///     (half with bfloat16 meet in float, as they do in arithmetic);
///   - an integer against a 16-bit float: that 16-bit type, as Metal converts it;
///   - anything else: `x` itself.
template <class Other, class T>
__host__ __device__ constexpr decltype(auto) ternary_operand(T&& x) {
  using Self = typename bare<T>::type;
  using With = typename bare<Other>::type;
  if constexpr (is_float16<Self> && !is_same<Self, With> &&
                (is_floating<With> || is_float16<With>)) {
    return static_cast<float>(x);
  } else if constexpr (is_integer<Self> && is_float16<With>) {
    return With(x);
  } else {
    return static_cast<T&&>(x);
  }
}

}  // namespace kreg::detail
