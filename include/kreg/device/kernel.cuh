#pragma once
// Device-side support for kernel sources compiled by kreg (with NVRTC at run time, or with
// nvcc at build time). Kept free of toolkit includes so that NVRTC can compile sources
// with -minimal.
//
// Constants specialize a source at compile time, like Metal function constants:
//
//   KREG_CONSTANT(bool, has_mask, 200);          // required: compiling without it fails
//   KREG_CONSTANT_DEFAULT(int, block, 300, 256); // optional, with a fallback value
//
// Each declares a `constexpr` variable of the given type (`bool` or `int`) whose value is
// the one the host passed for that index in `kreg::Constants`. The index is a decimal
// literal, or the qualified name of a namespace-scope `constexpr int` in one of kreg's own
// headers (as the built-in kernels name theirs, from the contracts they share with the host). The
// host checks the same rules before compiling; the static_asserts below keep sources honest when
// they are compiled by other means.

#ifndef KREG_CONSTANT_VALUES_DEFINED
namespace kreg {
namespace detail {
// No constants were supplied: every index reads as "not given".
template <int Index>
struct given_constant {
  static constexpr int kind = 0;
  static constexpr long long value = 0;
};
}  // namespace detail
}  // namespace kreg
#endif

namespace kreg {
namespace detail {
template <class T>
struct constant_kind {
  static constexpr int value = 0;
};
template <>
struct constant_kind<bool> {
  static constexpr int value = 1;
};
template <>
struct constant_kind<int> {
  static constexpr int value = 2;
};
template <class A, class B>
struct same_type {
  static constexpr bool value = false;
};
template <class A>
struct same_type<A, A> {
  static constexpr bool value = true;
};
// decltype of a parenthesized name, as a template-id with a comma must be, is a reference.
template <class T>
struct unreferenced {
  using type = T;
};
template <class T>
struct unreferenced<T&> {
  using type = T;
};
}  // namespace detail
}  // namespace kreg

#define KREG_CONSTANT(type, name, index)                                                          \
  static_assert(::kreg::detail::constant_kind<type>::value != 0,                                  \
                "KREG_CONSTANT: constant '" #name "' (index " #index ") must be bool or int");    \
  static_assert(::kreg::detail::given_constant<index>::kind != 0,                                 \
                "KREG_CONSTANT: required constant '" #name "' (index " #index ") was not given"); \
  static_assert(                                                                                  \
      ::kreg::detail::given_constant<index>::kind == ::kreg::detail::constant_kind<type>::value,  \
      "KREG_CONSTANT: constant '" #name "' (index " #index ") was given as the wrong type");      \
  constexpr type name = static_cast<type>(::kreg::detail::given_constant<index>::value)

#define KREG_CONSTANT_DEFAULT(type, name, index, fallback)                   \
  static_assert(::kreg::detail::constant_kind<type>::value != 0,             \
                "KREG_CONSTANT_DEFAULT: constant '" #name "' (index " #index \
                ") must be bool or int");                                    \
  static_assert(::kreg::detail::given_constant<index>::kind == 0 ||          \
                    ::kreg::detail::given_constant<index>::kind ==           \
                        ::kreg::detail::constant_kind<type>::value,          \
                "KREG_CONSTANT_DEFAULT: constant '" #name "' (index " #index \
                ") was given as the wrong type");                            \
  constexpr type name = ::kreg::detail::given_constant<index>::kind == 0     \
                            ? static_cast<type>(fallback)                    \
                            : static_cast<type>(::kreg::detail::given_constant<index>::value)

// Inside a kernel's body: its parameter list must be `signature`, a function type such as
// `void(const float*, float*, unsigned)`, shared with the host code that launches it. A
// template checks each instantiation. `__restrict__` and launch bounds are not part of it.
// A kernel name with a comma goes in parentheses: KREG_SIGNATURE((cast<From, To>), ...).
//
//   template <typename T>
//   __global__ void scale(const T* in, T* out, unsigned n) {
//     KREG_SIGNATURE(scale<T>, void(const T*, T*, unsigned));
#define KREG_SIGNATURE(kernel, ...)                                                            \
  static_assert(                                                                               \
      ::kreg::detail::same_type<typename ::kreg::detail::unreferenced<decltype(kernel)>::type, \
                                __VA_ARGS__>::value,                                           \
      "KREG_SIGNATURE: the parameters of " #kernel " differ from " #__VA_ARGS__)
