// Activations for float32, float16 and bfloat16, computed in float:
//   swiglu: out = silu(a) * b = a / (1 + exp(-a)) * b
//   gelu:   out = x * Phi(x), with Phi from erf, or the tanh approximation
//   constant 200 (bool, default false): gelu's tanh form
// kreg:entry swiglu_f32=swiglu<float>
// kreg:entry swiglu_f16=swiglu<kreg::half>
// kreg:entry swiglu_bf16=swiglu<kreg::bfloat16>
// kreg:entry gelu_f32=gelu<float>
// kreg:entry gelu_f16=gelu<kreg::half>
// kreg:entry gelu_bf16=gelu<kreg::bfloat16>
// kreg:specialization 200:b1
#include <kreg/kernel.cuh>
#include <kreg/vec.cuh>

KREG_CONSTANT_DEFAULT(bool, tanh_form, 200, false);

__device__ inline float silu_times(float a, float b) {
  return a / (1.0f + __expf(-a)) * b;
}

__device__ inline float gelu_of(float x) {
  if (tanh_form) {
    const float inner = 0.7978845608028654f * (x + 0.044715f * x * x * x);  // sqrt(2/pi)
    return 0.5f * x * (1.0f + tanhf(inner));
  }
  return 0.5f * x * (1.0f + erff(x * 0.7071067811865476f));  // 1/sqrt(2)
}

template <typename T>
__global__ void swiglu(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ out,
                       unsigned long long n) {
  using namespace kreg;
  for_each_vector(
      n, vec_aligned(a) && vec_aligned(b) && vec_aligned(out),
      [&](unsigned long long i) {
        const vec8<T> x = load8(a + i);
        const vec8<T> y = load8(b + i);
        vec8<T> r;
#pragma unroll
        for (int k = 0; k < kVecWidth; ++k)
          r.v[k] = from_float<T>(silu_times(to_float(x.v[k]), to_float(y.v[k])));
        store8(out + i, r);
      },
      [&](unsigned long long e) {
        out[e] = from_float<T>(silu_times(to_float(a[e]), to_float(b[e])));
      });
}

template <typename T>
__global__ void gelu(const T* __restrict__ in, T* __restrict__ out, unsigned long long n) {
  using namespace kreg;
  for_each_vector(
      n, vec_aligned(in) && vec_aligned(out),
      [&](unsigned long long i) {
        const vec8<T> x = load8(in + i);
        vec8<T> r;
#pragma unroll
        for (int k = 0; k < kVecWidth; ++k) r.v[k] = from_float<T>(gelu_of(to_float(x.v[k])));
        store8(out + i, r);
      },
      [&](unsigned long long e) { out[e] = from_float<T>(gelu_of(to_float(in[e]))); });
}
