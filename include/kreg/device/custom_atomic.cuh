#pragma once
/// \file
/// Metal's atomics on CUDA: `kreg::atomic<T>`, laid out as a plain T, with Metal's
/// `atomic_*_explicit` functions and CUDA's `atomicAdd`-style names.

#include <kreg/device/custom_float16.cuh>
#include <kreg/device/custom_traits.cuh>
#include <kreg/device/custom_types.cuh>

/// Metal's memory orders. CUDA's atomics are relaxed; any stronger order adds a device-wide
/// fence on each side of the operation, which is at least as strong as what was asked for.
enum memory_order {
  memory_order_relaxed,
  memory_order_acquire,
  memory_order_release,
  memory_order_acq_rel,
  memory_order_seq_cst
};

namespace kreg {

/// Metal's `atomic<T>`: a T that the `atomic_*` functions access atomically. It is laid out as
/// a plain T, so a buffer of T can be handed to a kernel that declares atomics.
template <class T>
struct atomic {
  T value;
};

}  // namespace kreg

template <class T>
using atomic = kreg::atomic<T>;
typedef kreg::atomic<int> atomic_int;
typedef kreg::atomic<unsigned int> atomic_uint;
typedef kreg::atomic<float> atomic_float;

namespace metal {
using ::atomic;
using ::atomic_float;
using ::atomic_int;
using ::atomic_uint;
using ::memory_order;
using ::memory_order_acq_rel;
using ::memory_order_acquire;
using ::memory_order_relaxed;
using ::memory_order_release;
using ::memory_order_seq_cst;
}  // namespace metal

static_assert(sizeof(atomic_float) == sizeof(float) && alignof(atomic_float) == alignof(float),
              "kreg::atomic<T> must be laid out as T");

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)

namespace kreg {
namespace detail {

template <class T>
struct identity {
  using type = T;
};
// Blocks deduction, so that the operand converts to the atomic's type (`+= 1` on a float).
template <class T>
using operand_t = typename identity<T>::type;

// atomicExch and atomicCAS exist for 32- and 64-bit unsigned words; every T goes through
// those as its bits. atomicMax and atomicMin also have signed forms, which order differently.
template <class T>
struct atomic_words {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "kreg::atomic holds 32- or 64-bit types");
  using word = typename pick<sizeof(T) == 4, unsigned, unsigned long long>::type;
  using signed_word = typename pick<sizeof(T) == 4, int, long long>::type;
  using ordered = typename pick<(static_cast<T>(-1) < static_cast<T>(0)), signed_word, word>::type;
};
template <class T>
using word_t = typename atomic_words<T>::word;

template <class T>
__device__ inline word_t<T> to_word(T v) {
  if constexpr (is_floating<T> && sizeof(T) == 4)
    return __float_as_uint(v);
  else if constexpr (is_floating<T>)
    return static_cast<word_t<T>>(__double_as_longlong(v));
  else
    return static_cast<word_t<T>>(v);
}

template <class T>
__device__ inline T from_word(word_t<T> w) {
  if constexpr (is_floating<T> && sizeof(T) == 4)
    return __uint_as_float(w);
  else if constexpr (is_floating<T>)
    return __longlong_as_double(static_cast<long long>(w));
  else
    return static_cast<T>(w);
}

template <class T>
__device__ inline word_t<T>* word_ptr(atomic<T>* obj) {
  return reinterpret_cast<word_t<T>*>(&obj->value);
}

__device__ inline void fence_unless_relaxed(memory_order order) {
  if (order != memory_order_relaxed) __threadfence();
}

template <class Op>
__device__ inline auto with_order(memory_order order, Op op) {
  fence_unless_relaxed(order);
  const auto old = op();
  fence_unless_relaxed(order);
  return old;
}

template <class T, class Op>
__device__ inline T bitwise(atomic<T>* obj, T v, memory_order order, Op op) {
  static_assert(!is_floating<T>, "bitwise atomics take integers");
  return with_order(order, [&] { return from_word<T>(op(word_ptr(obj), to_word(v))); });
}

// For what CUDA has no instruction for (float min and max): retry a compare-and-swap until no
// other thread wrote in between.
template <class T, class Update>
__device__ inline T update_loop(atomic<T>* obj, Update update) {
  word_t<T> seen = *static_cast<volatile word_t<T>*>(word_ptr(obj));
  for (;;) {
    const word_t<T> next = to_word<T>(update(from_word<T>(seen)));
    if (next == seen) return from_word<T>(seen);
    const word_t<T> before = atomicCAS(word_ptr(obj), seen, next);
    if (before == seen) return from_word<T>(seen);
    seen = before;
  }
}

template <bool Max, class T>
__device__ inline T fetch_min_max(atomic<T>* obj, T v, memory_order order) {
  using ordered_t = typename atomic_words<T>::ordered;
  return with_order(order, [&] {
    if constexpr (is_floating<T>) {
      return update_loop(obj, [=](T cur) { return (Max ? v > cur : v < cur) ? v : cur; });
    } else if constexpr (Max) {
      return static_cast<T>(atomicMax(reinterpret_cast<ordered_t*>(&obj->value), ordered_t(v)));
    } else {
      return static_cast<T>(atomicMin(reinterpret_cast<ordered_t*>(&obj->value), ordered_t(v)));
    }
  });
}

}  // namespace detail
}  // namespace kreg

// Metal's atomic functions. Those that modify return the value held before. Each T above has
// add, sub, min, max, exchange, compare-exchange, load and store; integers also have and, or
// and xor. Double add needs sm_60.

template <class T>
__device__ inline T atomic_fetch_add_explicit(kreg::atomic<T>* obj, kreg::detail::operand_t<T> v,
                                              memory_order order) {
  using namespace kreg::detail;
  return with_order(order, [&] {
    if constexpr (is_floating<T>)
      return atomicAdd(&obj->value, v);
    else
      return from_word<T>(atomicAdd(word_ptr(obj), to_word(v)));
  });
}

template <class T>
__device__ inline T atomic_fetch_sub_explicit(kreg::atomic<T>* obj, kreg::detail::operand_t<T> v,
                                              memory_order order) {
  using namespace kreg::detail;
  return with_order(order, [&] {
    // Adding the negation in the unsigned word wraps exactly as subtraction does.
    if constexpr (is_floating<T>)
      return atomicAdd(&obj->value, -v);
    else
      return from_word<T>(atomicAdd(word_ptr(obj), 0 - to_word(v)));
  });
}

template <class T>
__device__ inline T atomic_fetch_max_explicit(kreg::atomic<T>* obj, kreg::detail::operand_t<T> v,
                                              memory_order order) {
  return kreg::detail::fetch_min_max<true>(obj, v, order);
}

template <class T>
__device__ inline T atomic_fetch_min_explicit(kreg::atomic<T>* obj, kreg::detail::operand_t<T> v,
                                              memory_order order) {
  return kreg::detail::fetch_min_max<false>(obj, v, order);
}

template <class T>
__device__ inline T atomic_fetch_and_explicit(kreg::atomic<T>* obj, kreg::detail::operand_t<T> v,
                                              memory_order order) {
  using W = kreg::detail::word_t<T>;
  return kreg::detail::bitwise(obj, v, order, [](W* p, W w) { return atomicAnd(p, w); });
}

template <class T>
__device__ inline T atomic_fetch_or_explicit(kreg::atomic<T>* obj, kreg::detail::operand_t<T> v,
                                             memory_order order) {
  using W = kreg::detail::word_t<T>;
  return kreg::detail::bitwise(obj, v, order, [](W* p, W w) { return atomicOr(p, w); });
}

template <class T>
__device__ inline T atomic_fetch_xor_explicit(kreg::atomic<T>* obj, kreg::detail::operand_t<T> v,
                                              memory_order order) {
  using W = kreg::detail::word_t<T>;
  return kreg::detail::bitwise(obj, v, order, [](W* p, W w) { return atomicXor(p, w); });
}

template <class T>
__device__ inline T atomic_exchange_explicit(kreg::atomic<T>* obj, kreg::detail::operand_t<T> v,
                                             memory_order order) {
  using namespace kreg::detail;
  return with_order(order, [&] { return from_word<T>(atomicExch(word_ptr(obj), to_word(v))); });
}

/// Compares bit patterns, as C++ does: a stored NaN matches an expected NaN of the same bits.
/// Never fails spuriously, which the weak form allows but does not require.
template <class T>
__device__ inline bool atomic_compare_exchange_weak_explicit(kreg::atomic<T>* obj,
                                                             kreg::detail::operand_t<T>* expected,
                                                             kreg::detail::operand_t<T> desired,
                                                             memory_order success, memory_order) {
  using namespace kreg::detail;
  const word_t<T> want = to_word(*expected);
  const word_t<T> seen =
      with_order(success, [&] { return atomicCAS(word_ptr(obj), want, to_word(desired)); });
  if (seen == want) return true;
  *expected = from_word<T>(seen);
  return false;
}

// A volatile access of an aligned word is one load or store, which is all a relaxed access
// needs.
template <class T>
__device__ inline T atomic_load_explicit(const kreg::atomic<T>* obj, memory_order order) {
  using namespace kreg::detail;
  return with_order(order, [&] {
    return from_word<T>(*reinterpret_cast<const volatile word_t<T>*>(&obj->value));
  });
}

template <class T>
__device__ inline void atomic_store_explicit(kreg::atomic<T>* obj, kreg::detail::operand_t<T> v,
                                             memory_order order) {
  using namespace kreg::detail;
  fence_unless_relaxed(order);
  *reinterpret_cast<volatile word_t<T>*>(&obj->value) = to_word(v);
  fence_unless_relaxed(order);
}

// CUDA's own names, for bodies already ported to CUDA.
template <class T>
__device__ inline T atomicAdd(kreg::atomic<T>* a, kreg::detail::operand_t<T> v) {
  return atomic_fetch_add_explicit(a, v, memory_order_relaxed);
}
template <class T>
__device__ inline T atomicSub(kreg::atomic<T>* a, kreg::detail::operand_t<T> v) {
  return atomic_fetch_sub_explicit(a, v, memory_order_relaxed);
}
template <class T>
__device__ inline T atomicMax(kreg::atomic<T>* a, kreg::detail::operand_t<T> v) {
  return atomic_fetch_max_explicit(a, v, memory_order_relaxed);
}
template <class T>
__device__ inline T atomicMin(kreg::atomic<T>* a, kreg::detail::operand_t<T> v) {
  return atomic_fetch_min_explicit(a, v, memory_order_relaxed);
}
template <class T>
__device__ inline T atomicExch(kreg::atomic<T>* a, kreg::detail::operand_t<T> v) {
  return atomic_exchange_explicit(a, v, memory_order_relaxed);
}
template <class T>
__device__ inline T atomicCAS(kreg::atomic<T>* a, kreg::detail::operand_t<T> compare,
                              kreg::detail::operand_t<T> v) {
  atomic_compare_exchange_weak_explicit(a, &compare, v, memory_order_relaxed, memory_order_relaxed);
  return compare;  // on success it already equals the old value
}

/// The same names under `metal::`, as Metal code often spells them
/// (`metal::memory_order_relaxed`, `metal::atomic_fetch_add_explicit`).
namespace metal {
using ::atomic_compare_exchange_weak_explicit;
using ::atomic_exchange_explicit;
using ::atomic_fetch_add_explicit;
using ::atomic_fetch_and_explicit;
using ::atomic_fetch_max_explicit;
using ::atomic_fetch_min_explicit;
using ::atomic_fetch_or_explicit;
using ::atomic_fetch_sub_explicit;
using ::atomic_fetch_xor_explicit;
using ::atomic_load_explicit;
using ::atomic_store_explicit;
}  // namespace metal

#endif  // __CUDACC__ || __CUDACC_RTC__
