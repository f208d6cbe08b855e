#pragma once
/// \file
/// The few type traits the preamble parts share. NVRTC's `-minimal` has no <type_traits>, and
/// including libcu++'s would cost more than all of these. Names the 16-bit types without
/// including their header, which parts that do not use them need not pay for.

namespace kreg {

struct half;
struct bfloat16;

namespace detail {

template <bool B, class A, class C>
struct pick {
  using type = A;
};
template <class A, class C>
struct pick<false, A, C> {
  using type = C;
};

template <bool B, class T = void>
struct enable_if {};
template <class T>
struct enable_if<true, T> {
  using type = T;
};
/// A template parameter `when<condition> = 0` leaves the function out unless `condition`.
template <bool B>
using when = typename enable_if<B, int>::type;

template <class A, class B>
constexpr bool is_same = false;
template <class A>
constexpr bool is_same<A, A> = true;

template <class T>
constexpr bool is_floating = is_same<T, float> || is_same<T, double>;

template <class T>
constexpr bool is_float16 = is_same<T, half> || is_same<T, bfloat16>;

template <class T>
constexpr bool is_signed_integer = is_same<T, signed char> || is_same<T, short> ||
                                   is_same<T, int> || is_same<T, long> || is_same<T, long long>;
template <class T>
constexpr bool is_unsigned_integer =
    is_same<T, unsigned char> || is_same<T, unsigned short> || is_same<T, unsigned> ||
    is_same<T, unsigned long> || is_same<T, unsigned long long>;
/// bool and plain char count too: Metal's select and clamp take them.
template <class T>
constexpr bool is_integer =
    is_signed_integer<T> || is_unsigned_integer<T> || is_same<T, bool> || is_same<T, char>;

}  // namespace detail
}  // namespace kreg
