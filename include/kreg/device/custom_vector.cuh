#pragma once
/// \file
/// Metal's vector types for custom kernels: `metal::vec<T, N>` (N = 2, 3, 4) with Metal's
/// constructors, swizzles, indexing and component-wise operators, and the packed
/// `metal::packed_vec<T, N>` (`packed_float3`) without padding. CUDA's own `float4` and
/// friends are structs at global scope with none of these, so a generated kernel that uses
/// vectors is written inside namespace `kreg_metal`, where the Metal names (`float4`,
/// `uint3`, ...) are aliases of `metal::vec` and hide CUDA's.
///
/// Sizes and alignments are Metal's: N * sizeof(T), with the three-component types as large
/// and aligned as the four-component ones (a float3 is 16 bytes), so a body that casts a
/// pointer (`((device float4*)p)[i]`) moves the same bytes as on Metal, in one access.
///
/// A swizzle (`v.xy`, `v.zyx`, `v.rgba`) is a member without storage of its own, overlaid on
/// the components; it reads as a vector and, when its components are distinct, may be
/// assigned. There are 680 of them for four components, and each costs compile time, so the
/// generated kernel defines `KREG_METAL_SWIZZLES` to the ones its text names; a source that
/// includes this header without it gets a common few. Single components (`x y z w`, `r g b a`)
/// are plain members, so code written for CUDA's `uint3` (`pos.x * n`) reads them as before.
///
/// Includes nothing from the toolkit, so sources compile with NVRTC's `-minimal`.

#include <kreg/device/custom_traits.cuh>
#include <kreg/device/custom_types.cuh>

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)

#ifndef KREG_METAL_SWIZZLES
#define KREG_METAL_SWIZZLES(S)                                                            \
  S(xy, 0, 1)                                                                             \
  S(yx, 1, 0)                                                                             \
  S(xz, 0, 2)                                                                             \
  S(yz, 1, 2)                                                                             \
  S(zw, 2, 3)                                                                             \
  S(xyz, 0, 1, 2) S(zyx, 2, 1, 0) S(yzw, 1, 2, 3) S(xyzw, 0, 1, 2, 3) S(wzyx, 3, 2, 1, 0) \
      S(rg, 0, 1) S(rgb, 0, 1, 2) S(bgr, 2, 1, 0) S(rgba, 0, 1, 2, 3) S(bgra, 2, 1, 0, 3)
#endif

namespace metal {

template <class T, int N>
struct vec;
template <class T, int N>
struct packed_vec;
template <class T, int... I>
struct swizzle;

namespace vector_detail {

using ::kreg::detail::enable_if;
using ::kreg::detail::is_same;
using ::kreg::detail::when;

/// Scalars a vector combines with: Metal's arithmetic types, 16-bit floats included.
template <class T>
constexpr bool is_scalar = ::kreg::detail::is_floating<T> || ::kreg::detail::is_integer<T> ||
                           ::kreg::detail::is_float16<T>;

/// What a vector-like type (a vector or a swizzle of one) holds: `size` 0 for anything else.
template <class A>
struct traits {
  static constexpr int size = 0;
  using element = A;
};
template <class T, int N>
struct traits<vec<T, N>> {
  static constexpr int size = N;
  using element = T;
};
template <class T, int N>
struct traits<packed_vec<T, N>> {
  static constexpr int size = N;
  using element = T;
};
template <class T, int... I>
struct traits<swizzle<T, I...>> {
  static constexpr int size = sizeof...(I);
  using element = T;
};

template <class A>
constexpr bool is_vector = traits<A>::size > 0;

/// How many components an argument of a vector constructor gives: one for a scalar.
template <class A>
constexpr int components = is_vector<A> ? traits<A>::size : (is_scalar<A> ? 1 : -64);

/// The vector an operation on `a` and `b` gives, when one is vector-like and the other is a
/// scalar or a vector-like of the same element type and size (Metal converts no element
/// type implicitly between vectors). Substitution fails otherwise.
template <class A, class B, bool AV = is_vector<A>, bool BV = is_vector<B>>
struct result {};
template <class A, class B>
struct result<A, B, true, true>
    : enable_if<traits<A>::size == traits<B>::size &&
                    is_same<typename traits<A>::element, typename traits<B>::element>,
                vec<typename traits<A>::element, traits<A>::size>> {};
template <class A, class B>
struct result<A, B, true, false>
    : enable_if<is_scalar<B>, vec<typename traits<A>::element, traits<A>::size>> {};
template <class A, class B>
struct result<A, B, false, true>
    : enable_if<is_scalar<A>, vec<typename traits<B>::element, traits<B>::size>> {};
template <class A, class B>
using result_t = typename result<A, B>::type;

template <int... I>
__host__ __device__ constexpr bool distinct() {
  constexpr int index[] = {I...};
  for (int i = 0; i < static_cast<int>(sizeof...(I)); ++i) {
    for (int j = i + 1; j < static_cast<int>(sizeof...(I)); ++j) {
      if (index[i] == index[j]) return false;
    }
  }
  return true;
}

template <int... I>
__host__ __device__ constexpr int largest() {
  int m = 0;
  ((m = I > m ? I : m), ...);
  return m;
}

/// Component k of a scalar (itself), a vector or a swizzle.
template <class A, when<is_scalar<A>> = 0>
__device__ inline A component(const A& a, int /*k*/) {
  return a;
}
template <class T, int N>
__device__ inline T component(const vec<T, N>& a, int k) {
  return a[k];
}
template <class T, int N>
__device__ inline T component(const packed_vec<T, N>& a, int k) {
  return a[k];
}
template <class T, int... I>
__device__ inline T component(const swizzle<T, I...>& a, int k) {
  return a.get(k);
}

/// CUDA's own vector struct of N components of T, or `none` where it has none.
struct none {};
template <class T, int N>
struct cuda_vector {
  using type = none;
};
#define KREG_METAL_CUDA_VECTOR(type_, name) \
  template <>                               \
  struct cuda_vector<type_, 2> {            \
    using type = ::name##2;                 \
  };                                        \
  template <>                               \
  struct cuda_vector<type_, 3> {            \
    using type = ::name##3;                 \
  };                                        \
  template <>                               \
  struct cuda_vector<type_, 4> {            \
    using type = ::name##4;                 \
  };
KREG_METAL_CUDA_VECTOR(float, float)
KREG_METAL_CUDA_VECTOR(int, int)
KREG_METAL_CUDA_VECTOR(unsigned, uint)
KREG_METAL_CUDA_VECTOR(short, short)
KREG_METAL_CUDA_VECTOR(unsigned short, ushort)
KREG_METAL_CUDA_VECTOR(char, char)
KREG_METAL_CUDA_VECTOR(unsigned char, uchar)
#undef KREG_METAL_CUDA_VECTOR
template <class T, int N>
using cuda_t = typename cuda_vector<T, N>::type;

/// A swizzle member that names a component past the vector's: unusable, so `v2.z` style
/// mistakes fail where they are used.
struct no_swizzle {};
template <class T, int N, int... I>
using swizzle_for =
    typename ::kreg::detail::pick<((I < N) && ...), swizzle<T, I...>, no_swizzle>::type;

// The components, overlaid with the swizzles: `all_` moves the whole vector in one access.
#define KREG_METAL_SWIZZLE_MEMBER(name, ...) swizzle_for<T, N, __VA_ARGS__> name;

// Packed storage is the components alone, with T's alignment and no padding (a
// packed_float3 is 12 bytes).
template <class T, int N, bool Packed>
struct storage;

template <class T, bool Packed>
struct alignas(Packed ? alignof(T) : 2 * sizeof(T)) storage<T, 2, Packed> {
  static constexpr int N = 2;
  struct words {
    T v[2];
  };
  union {
    words all_;
    struct {
      T x, y;
    };
    struct {
      T r, g;
    };
    KREG_METAL_SWIZZLES(KREG_METAL_SWIZZLE_MEMBER)
  };
};

template <class T, bool Packed>
struct alignas(Packed ? alignof(T) : 4 * sizeof(T)) storage<T, 3, Packed> {
  static constexpr int N = 3;
  struct words {
    T v[Packed ? 3 : 4];  // Metal pads three components to four
  };
  union {
    words all_;
    struct {
      T x, y, z;
    };
    struct {
      T r, g, b;
    };
    KREG_METAL_SWIZZLES(KREG_METAL_SWIZZLE_MEMBER)
  };
};

template <class T, bool Packed>
struct alignas(Packed ? alignof(T) : 4 * sizeof(T)) storage<T, 4, Packed> {
  static constexpr int N = 4;
  struct words {
    T v[4];
  };
  union {
    words all_;
    struct {
      T x, y, z, w;
    };
    struct {
      T r, g, b, a;
    };
    KREG_METAL_SWIZZLES(KREG_METAL_SWIZZLE_MEMBER)
  };
};

#undef KREG_METAL_SWIZZLE_MEMBER

/// What vectors and packed vectors share over their storage: indexing and the compound
/// assignments, which assign the vector result of the operator.
template <class Self, class T, class Storage>
struct indexed : Storage {
  __device__ T& operator[](int k) { return this->all_.v[k]; }
  __device__ const T& operator[](int k) const { return this->all_.v[k]; }

  template <class B>
  __device__ Self& operator+=(const B& b) {
    return self() = self() + b;
  }
  template <class B>
  __device__ Self& operator-=(const B& b) {
    return self() = self() - b;
  }
  template <class B>
  __device__ Self& operator*=(const B& b) {
    return self() = self() * b;
  }
  template <class B>
  __device__ Self& operator/=(const B& b) {
    return self() = self() / b;
  }

 private:
  __device__ Self& self() { return static_cast<Self&>(*this); }
};

}  // namespace vector_detail

/// Metal's `vec<T, N>`: `float4` is `vec<float, 4>`.
template <class T, int N>
struct vec : vector_detail::indexed<vec<T, N>, T, vector_detail::storage<T, N, false>> {
  static_assert(N >= 2 && N <= 4, "Metal's vectors have 2, 3 or 4 components");

  vec() = default;
  vec(const vec&) = default;
  // The swizzles' assignments make the implicit one unavailable; this one moves all
  // components as one access.
  __device__ vec& operator=(const vec& other) {
    this->all_ = other.all_;
    return *this;
  }

  /// `float4(x)`, and `float4 v = 0;`: every component.
  template <class U, vector_detail::when<vector_detail::is_scalar<U>> = 0>
  __device__ vec(U s) {
    for (int k = 0; k < N; ++k) this->all_.v[k] = T(s);
  }

  /// `float4(x, y, z, w)`, `float4(v.xy, 0, 1)`, `float3(a.xy, b)`: scalars and vectors whose
  /// components add up to N.
  template <class A, class B, class... R,
            vector_detail::when<vector_detail::components<A> + vector_detail::components<B> +
                                    (0 + ... + vector_detail::components<R>) ==
                                N> = 0>
  __device__ vec(const A& a, const B& b, const R&... rest) {
    int k = 0;
    put(k, a);
    put(k, b);
    (put(k, rest), ...);
  }

  /// `float4(int4_value)`: a vector of another element type, converted component-wise
  /// (explicit, as in Metal).
  template <class V, vector_detail::when<vector_detail::traits<V>::size == N> = 0>
  __device__ explicit vec(const V& v) {
    for (int k = 0; k < N; ++k) this->all_.v[k] = T(vector_detail::component(v, k));
  }

  /// From CUDA's struct of the same element type and size (`make_float4(...)`, the
  /// `uint3` the thread-position attributes start from) and `dim3`, so that code written for
  /// CUDA's vectors keeps working; and back to it.
  template <class C, vector_detail::when<vector_detail::is_same<C, vector_detail::cuda_t<T, N>> ||
                                         (N == 3 && vector_detail::is_same<C, ::dim3>)> = 0>
  __device__ vec(const C& c) {
    this->all_.v[0] = T(c.x);
    this->all_.v[1] = T(c.y);
    if constexpr (N > 2) this->all_.v[2] = T(c.z);
    if constexpr (N > 3) this->all_.v[3] = T(c.w);
  }
  template <class C,
            vector_detail::when<vector_detail::is_same<C, vector_detail::cuda_t<T, N>>> = 0>
  __device__ operator C() const {
    C c;
    c.x = this->all_.v[0];
    c.y = this->all_.v[1];
    if constexpr (N > 2) c.z = this->all_.v[2];
    if constexpr (N > 3) c.w = this->all_.v[3];
    return c;
  }

 private:
  template <class A>
  __device__ void put(int& k, const A& a) {
    if constexpr (vector_detail::is_vector<A>) {
      for (int j = 0; j < vector_detail::traits<A>::size; ++j) {
        this->all_.v[k++] = T(vector_detail::component(a, j));
      }
    } else {
      this->all_.v[k++] = T(a);
    }
  }
};

/// Metal's packed vectors (`packed_float3`): the components of `vec<T, N>` without its
/// padding or alignment, as laid out in buffers of packed structs. They convert to and from
/// the vectors of their element type implicitly (to other element types explicitly), read
/// and write components (`.x`, `[k]`, swizzles), and combine with vectors and scalars as a
/// vector does, giving a `vec`.
template <class T, int N>
struct packed_vec
    : vector_detail::indexed<packed_vec<T, N>, T, vector_detail::storage<T, N, true>> {
  static_assert(N >= 2 && N <= 4, "Metal's packed vectors have 2, 3 or 4 components");

  packed_vec() = default;
  packed_vec(const packed_vec&) = default;
  __device__ packed_vec& operator=(const packed_vec& other) {
    this->all_ = other.all_;
    return *this;
  }

  /// Every component from one scalar.
  template <class U, vector_detail::when<vector_detail::is_scalar<U>> = 0>
  __device__ packed_vec(U s) {
    for (int k = 0; k < N; ++k) this->all_.v[k] = T(s);
  }
  /// From scalars and vectors whose components add up to N, as `vec`'s constructor.
  template <class A, class B, class... R,
            vector_detail::when<vector_detail::components<A> + vector_detail::components<B> +
                                    (0 + ... + vector_detail::components<R>) ==
                                N> = 0>
  __device__ packed_vec(const A& a, const B& b, const R&... rest) {
    *this = vec<T, N>(a, b, rest...);
  }
  /// From a vector, swizzle or packed vector of the same element type.
  template <class V, vector_detail::when<
                         vector_detail::traits<V>::size == N &&
                         vector_detail::is_same<typename vector_detail::traits<V>::element, T>> = 0>
  __device__ packed_vec(const V& v) {
    for (int k = 0; k < N; ++k) this->all_.v[k] = vector_detail::component(v, k);
  }
  /// From a vector of another element type, converted component-wise (explicit, as in
  /// Metal).
  template <class V, vector_detail::when<vector_detail::traits<V>::size == N &&
                                         !vector_detail::is_same<
                                             typename vector_detail::traits<V>::element, T>> = 0>
  __device__ explicit packed_vec(const V& v) {
    for (int k = 0; k < N; ++k) this->all_.v[k] = T(vector_detail::component(v, k));
  }

  __device__ operator vec<T, N>() const {
    vec<T, N> v;
    for (int k = 0; k < N; ++k) v[k] = this->all_.v[k];
    return v;
  }
};

/// A swizzle of a vector of T: component k is the vector's component I[k]. It lies at the
/// start of the vector it belongs to, over the components up to the last it names, so that a
/// copy (`auto s = v.zx;`) holds the components it reads.
template <class T, int... I>
struct swizzle {
  static constexpr int size = sizeof...(I);
  using vector = vec<T, size>;

  __device__ T get(int k) const {
    constexpr int index[] = {I...};
    return reinterpret_cast<const T*>(this)[index[k]];
  }
  __device__ operator vector() const { return vector(reinterpret_cast<const T*>(this)[I]...); }

  __device__ swizzle& operator=(const swizzle& other) { return *this = vector(other); }
  /// Metal allows writing a swizzle only where no component repeats (`v.xy = ...`, not
  /// `v.xx = ...`).
  template <class V>
  __device__ swizzle& operator=(const V& value) {
    static_assert(vector_detail::distinct<I...>(),
                  "a swizzle that repeats a component is read-only");
    const vector v = value;
    T* c = reinterpret_cast<T*>(this);
    int k = 0;
    ((c[I] = v[k++]), ...);
    return *this;
  }
  template <class B>
  __device__ swizzle& operator+=(const B& b) {
    return *this = vector(*this) + b;
  }
  template <class B>
  __device__ swizzle& operator-=(const B& b) {
    return *this = vector(*this) - b;
  }
  template <class B>
  __device__ swizzle& operator*=(const B& b) {
    return *this = vector(*this) * b;
  }
  template <class B>
  __device__ swizzle& operator/=(const B& b) {
    return *this = vector(*this) / b;
  }

 private:
  T covered_[vector_detail::largest<I...>() + 1];
};

// Component-wise operators of a vector-like with a vector-like or a scalar. Integer vectors
// compute in int where C++ promotes and keep their element type, as Metal's do.
#define KREG_METAL_VECTOR_OPERATOR(op)                                            \
  template <class A, class B, class V = vector_detail::result_t<A, B>>            \
  __device__ inline V operator op(const A& a, const B& b) {                       \
    using T = typename vector_detail::traits<V>::element;                         \
    V r;                                                                          \
    for (int k = 0; k < vector_detail::traits<V>::size; ++k) {                    \
      r[k] = T(vector_detail::component(a, k) op vector_detail::component(b, k)); \
    }                                                                             \
    return r;                                                                     \
  }
KREG_METAL_VECTOR_OPERATOR(+)
KREG_METAL_VECTOR_OPERATOR(-)
KREG_METAL_VECTOR_OPERATOR(*)
KREG_METAL_VECTOR_OPERATOR(/)
KREG_METAL_VECTOR_OPERATOR(%)
KREG_METAL_VECTOR_OPERATOR(&)
KREG_METAL_VECTOR_OPERATOR(|)
KREG_METAL_VECTOR_OPERATOR(^)
KREG_METAL_VECTOR_OPERATOR(<<)
KREG_METAL_VECTOR_OPERATOR(>>)
#undef KREG_METAL_VECTOR_OPERATOR

// Comparisons give a vector of bool, as in Metal (`all(a < b)` reduces it).
#define KREG_METAL_VECTOR_COMPARISON(op)                                                \
  template <class A, class B, class V = vector_detail::result_t<A, B>>                  \
  __device__ inline vec<bool, vector_detail::traits<V>::size> operator op(const A& a,   \
                                                                          const B& b) { \
    vec<bool, vector_detail::traits<V>::size> r;                                        \
    for (int k = 0; k < vector_detail::traits<V>::size; ++k) {                          \
      r[k] = vector_detail::component(a, k) op vector_detail::component(b, k);          \
    }                                                                                   \
    return r;                                                                           \
  }
KREG_METAL_VECTOR_COMPARISON(==)
KREG_METAL_VECTOR_COMPARISON(!=)
KREG_METAL_VECTOR_COMPARISON(<)
KREG_METAL_VECTOR_COMPARISON(<=)
KREG_METAL_VECTOR_COMPARISON(>)
KREG_METAL_VECTOR_COMPARISON(>=)
#undef KREG_METAL_VECTOR_COMPARISON

template <class A, class V = vector_detail::result_t<A, int>>
__device__ inline V operator-(const A& a) {
  V r;
  for (int k = 0; k < vector_detail::traits<V>::size; ++k) r[k] = -vector_detail::component(a, k);
  return r;
}
template <class A, class V = vector_detail::result_t<A, int>>
__device__ inline V operator+(const A& a) {
  return V(a);
}
template <class A, class V = vector_detail::result_t<A, int>>
__device__ inline V operator~(const A& a) {
  V r;
  for (int k = 0; k < vector_detail::traits<V>::size; ++k) r[k] = ~vector_detail::component(a, k);
  return r;
}

/// Whether every (any) component of a bool vector is true.
template <int N>
__device__ inline bool all(const vec<bool, N>& v) {
  bool r = true;
  for (int k = 0; k < N; ++k) r = r && v[k];
  return r;
}
template <int N>
__device__ inline bool any(const vec<bool, N>& v) {
  bool r = false;
  for (int k = 0; k < N; ++k) r = r || v[k];
  return r;
}

}  // namespace metal

/// The Metal names of the vector types, for generated kernels (see the file comment). They
/// live here rather than in `metal`, because `using namespace metal;` at global scope would
/// make them clash with CUDA's.
namespace kreg_metal {
using metal::packed_vec;
using metal::vec;
#define KREG_METAL_VECTOR_NAMES(name, type)            \
  using name##2 = metal::vec<type, 2>;                 \
  using name##3 = metal::vec<type, 3>;                 \
  using name##4 = metal::vec<type, 4>;                 \
  using packed_##name##2 = metal::packed_vec<type, 2>; \
  using packed_##name##3 = metal::packed_vec<type, 3>; \
  using packed_##name##4 = metal::packed_vec<type, 4>;
KREG_METAL_VECTOR_NAMES(float, float)
KREG_METAL_VECTOR_NAMES(int, int)
KREG_METAL_VECTOR_NAMES(uint, unsigned)
KREG_METAL_VECTOR_NAMES(short, short)
KREG_METAL_VECTOR_NAMES(ushort, unsigned short)
KREG_METAL_VECTOR_NAMES(char, char)
KREG_METAL_VECTOR_NAMES(uchar, unsigned char)
KREG_METAL_VECTOR_NAMES(bool, bool)
KREG_METAL_VECTOR_NAMES(long, long long)
KREG_METAL_VECTOR_NAMES(ulong, unsigned long long)
}  // namespace kreg_metal

#endif  // __CUDACC__ || __CUDACC_RTC__
