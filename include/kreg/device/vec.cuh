#pragma once
// Vector memory access for kreg's built-in kernels: row kernels move eight elements per load
// or store (16 bytes of a 16-bit type, 32 of a 32-bit one), elementwise kernels 16 bytes.
// Kernels take the vector path when every pointer they touch is aligned to the vector, and
// a scalar path otherwise. Includes nothing from the toolkit, so sources compile with -minimal.

#include <kreg/device/half.cuh>

namespace kreg {

/// Elements per vector access in the row kernels.
constexpr int kVecWidth = 8;

/// Elements of T in one 16-byte access: the width elementwise kernels use (4 floats, 8
/// halves). A thread moving 16 bytes at a time keeps a 1:1 read/write stream at copy speed,
/// where 32 bytes (two accesses) per thread lose a quarter of it on the H200.
template <class T>
constexpr int kWide = sizeof(T) >= 16 ? 1 : static_cast<int>(16 / sizeof(T));

template <class T, int W>
struct alignas(sizeof(T) * W) vec {
  T v[W];
};

template <class T>
using vec8 = vec<T, kVecWidth>;

/// Whether `p` may be accessed as vec<T, W>.
template <int W = kVecWidth, class T>
__device__ inline bool vec_aligned(const T* p) {
  return (reinterpret_cast<unsigned long long>(p) % sizeof(vec<T, W>)) == 0;
}

template <int W, class T>
__device__ inline vec<T, W> load(const T* p) {
  return *reinterpret_cast<const vec<T, W>*>(p);
}

template <class T, int W>
__device__ inline void store(T* p, const vec<T, W>& v) {
  *reinterpret_cast<vec<T, W>*>(p) = v;
}

template <class T>
__device__ inline vec8<T> load8(const T* p) {
  return load<kVecWidth>(p);
}

template <class T>
__device__ inline void store8(T* p, const vec8<T>& v) {
  store(p, v);
}

/// The grid-stride loop of an elementwise kernel over n elements: each thread takes W
/// consecutive ones at a time, as one vector (`on_vector(i)`, elements i..i+W-1) when
/// `vector` and all W exist, else one by one (`on_element(e)`).
template <int W = kVecWidth, class OnVector, class OnElement>
__device__ inline void for_each_vector(unsigned long long n, bool vector, OnVector on_vector,
                                       OnElement on_element) {
  const unsigned long long first =
      (static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x) * W;
  const unsigned long long step = static_cast<unsigned long long>(gridDim.x) * blockDim.x * W;
  for (unsigned long long i = first; i < n; i += step) {
    if (vector && i + W <= n) {
      on_vector(i);
    } else {
      for (unsigned long long e = i; e < i + W && e < n; ++e) on_element(e);
    }
  }
}

__device__ inline float negative_infinity() {
  return __int_as_float(0xff800000u);
}

/// Arithmetic happens in float; these move values in and out of it.
__device__ inline float to_float(float x) {
  return x;
}
__device__ inline float to_float(half x) {
  return static_cast<float>(x);
}
__device__ inline float to_float(bfloat16 x) {
  return static_cast<float>(x);
}

template <class T>
__device__ inline T from_float(float x) {
  return T(x);
}

#if __CUDA_ARCH__ >= 800
/// Two floats rounded into one word of 16-bit values, `lo` in the lower half (the first
/// operand of the instruction goes to the upper half).
__device__ inline unsigned pack2(const half* /*type*/, float lo, float hi) {
  unsigned word;
  asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(word) : "f"(hi), "f"(lo));
  return word;
}
__device__ inline unsigned pack2(const bfloat16* /*type*/, float lo, float hi) {
  unsigned word;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(word) : "f"(hi), "f"(lo));
  return word;
}
#endif

/// Eight floats rounded to T, to nearest even. The 16-bit types round two at a time, which
/// halves the conversions: on the GPU these share a slow pipe with exp and rcp.
template <class T>
__device__ inline vec8<T> pack8(const float (&f)[kVecWidth]) {
  vec8<T> r;
#if __CUDA_ARCH__ >= 800
  if constexpr (sizeof(T) == 2) {
    unsigned* words = reinterpret_cast<unsigned*>(&r);
#pragma unroll
    for (int k = 0; k < kVecWidth / 2; ++k) {
      words[k] = pack2(static_cast<const T*>(nullptr), f[2 * k], f[2 * k + 1]);
    }
    return r;
  }
#endif
#pragma unroll
  for (int k = 0; k < kVecWidth; ++k) r.v[k] = from_float<T>(f[k]);
  return r;
}

/// W floats rounded to T: pack8 for eight, one at a time otherwise.
template <class T, int W>
__device__ inline vec<T, W> pack(const float (&f)[W]) {
  if constexpr (W == kVecWidth) {
    return pack8<T>(f);
  } else {
    vec<T, W> r;
#pragma unroll
    for (int k = 0; k < W; ++k) r.v[k] = from_float<T>(f[k]);
    return r;
  }
}

/// The elementwise kernel out[e] = f(in[e]) for e < n, with f on floats: W elements at a time
/// as vectors when both pointers allow, one at a time otherwise.
template <int W, class From, class To, class F>
__device__ inline void map(const From* __restrict__ in, To* __restrict__ out, unsigned long long n,
                           F f) {
  for_each_vector<W>(
      n, vec_aligned<W>(in) && vec_aligned<W>(out),
      [&](unsigned long long i) {
        const vec<From, W> x = load<W>(in + i);
        float r[W];
#pragma unroll
        for (int k = 0; k < W; ++k) r[k] = f(to_float(x.v[k]));
        store(out + i, pack<To, W>(r));
      },
      [&](unsigned long long e) { out[e] = from_float<To>(f(to_float(in[e]))); });
}

/// The elementwise kernel out[e] = f(a[e], b[e % period]) for e < n (period 0: b[e]), with f
/// on floats: kWide<T> elements at a time as vectors when the pointers and the period allow.
template <class T, class F>
__device__ inline void map2(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ out,
                            unsigned long long n, unsigned long long period, F f) {
  constexpr int W = kWide<T>;
  const bool vector =
      vec_aligned<W>(a) && vec_aligned<W>(b) && vec_aligned<W>(out) && period % W == 0;
  for_each_vector<W>(
      n, vector,
      [&](unsigned long long i) {
        const vec<T, W> x = load<W>(a + i);
        const vec<T, W> y = load<W>(b + (period == 0 ? i : i % period));
        float r[W];
#pragma unroll
        for (int k = 0; k < W; ++k) r[k] = f(to_float(x.v[k]), to_float(y.v[k]));
        store(out + i, pack<T, W>(r));
      },
      [&](unsigned long long e) {
        out[e] = from_float<T>(f(to_float(a[e]), to_float(b[period == 0 ? e : e % period])));
      });
}

/// 2^x by the hardware's approximation (two ulp; subnormal results flush to zero), for
/// kernels that fold the change of base into a multiplication they do anyway.
__device__ inline float fast_exp2(float x) {
  float r;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
}

/// Warp shuffles of the values reductions carry: a float, or a small struct of floats that
/// declares `shuffle_xor` itself.
__device__ inline float shuffle_xor(float v, int offset) {
  return __shfl_xor_sync(0xffffffffu, v, offset);
}

/// Combines over the warp; every lane gets the result.
template <class V, class Op>
__device__ inline V warp_reduce(V v, Op op) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) v = op(v, shuffle_xor(v, offset));
  return v;
}

/// Combines over the block (at most 1024 threads); every thread gets the result. `scratch`
/// holds 32 values of shared memory, free for reuse after the call returns; `identity` is
/// what a missing warp contributes.
template <class V, class Op>
__device__ inline V block_reduce(V v, V* scratch, Op op, V identity) {
  const unsigned lane = threadIdx.x % 32;
  const unsigned warp = threadIdx.x / 32;
  v = warp_reduce(v, op);
  __syncthreads();  // scratch may still be read by a previous call
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  const unsigned warps = (blockDim.x + 31) / 32;
  return warp_reduce(lane < warps ? scratch[lane] : identity, op);
}

struct Sum {
  __device__ float operator()(float a, float b) const { return a + b; }
};
struct Max {
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};

__device__ inline float block_sum(float v, float* scratch) {
  return block_reduce(v, scratch, Sum{}, 0.0f);
}
__device__ inline float block_max(float v, float* scratch) {
  return block_reduce(v, scratch, Max{}, negative_infinity());
}

/// Row kernels run one block per row. A thread's vectors of a row start at elements
/// (threadIdx.x + j * blockDim.x) * 8, so a warp's accesses are contiguous. When the row is
/// vector-aligned and each thread has at most kRowVectors of them, kernels keep the row in
/// registers and read it once.
constexpr unsigned kRowVectors = 4;

__device__ inline bool row_in_registers(unsigned cols, bool vector) {
  return vector && cols <= blockDim.x * kVecWidth * kRowVectors;
}

/// The first column of this thread's vector j of a row.
__device__ inline unsigned row_column(unsigned j) {
  return (threadIdx.x + j * blockDim.x) * kVecWidth;
}

/// Calls `f(j, c)` for this thread's vectors j of a row, c being the vector's first column.
/// Unrolled, so arrays indexed by j stay in registers.
template <class F>
__device__ inline void for_each_row_vector(unsigned cols, F f) {
#pragma unroll
  for (unsigned j = 0; j < kRowVectors; ++j) {
    const unsigned c = row_column(j);
    if (c >= cols) break;
    f(j, c);
  }
}

/// Loads this thread's vectors of a row (those for_each_row_vector visits) into `v`. All are
/// loaded before any is used, so that they are in flight together: loading each next to its
/// arithmetic puts one memory latency per vector on the row's path, which cost layer_norm a
/// fifth of its bandwidth.
template <class T>
__device__ inline void load_row(vec8<T> (&v)[kRowVectors], const T* row, unsigned cols) {
#pragma unroll
  for (unsigned j = 0; j < kRowVectors; ++j) {
    const unsigned c = row_column(j);
    if (c < cols) v[j] = load8(row + c);
  }
}

}  // namespace kreg
