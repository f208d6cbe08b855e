// Activations for float32, float16 and bfloat16, computed in float:
//   swiglu: out = silu(a) * b = a / (1 + exp(-a)) * b
//   gelu:   out = x * Phi(x), with Phi from erf, or the tanh approximation
// Constants and parameters: kreg/contracts/activation.cuh.
// kreg:entry swiglu_f32=swiglu<float>
// kreg:entry swiglu_f16=swiglu<kreg::half>
// kreg:entry swiglu_bf16=swiglu<kreg::bfloat16>
// kreg:entry gelu_f32=gelu<float>
// kreg:entry gelu_f16=gelu<kreg::half>
// kreg:entry gelu_bf16=gelu<kreg::bfloat16>
// kreg:specialization 200:b1
#include <kreg/contracts/activation.cuh>
#include <kreg/device/kernel.cuh>
#include <kreg/device/vec.cuh>

KREG_CONSTANT_DEFAULT(bool, tanh_form, kreg::contracts::activation::kTanhForm, false);

__device__ inline float silu_times(float a, float b) {
  return a / (1.0f + __expf(-a)) * b;
}

// A polynomial by Horner's rule in fused multiply-adds, highest coefficient first:
// polynomial(x, a, b, c) = (a x + b) x + c.
__device__ inline float polynomial(float /*x*/, float c) {
  return c;
}
template <class... Rest>
__device__ inline float polynomial(float x, float a, float b, Rest... rest) {
  return polynomial(x, fmaf(a, x, b), rest...);
}

// erfc(t) for t >= 0 to a small relative error over the whole range: relative, so GELU's
// negative tail stays precise where 1 + erf(x) would cancel. Up to t = 4.5 (|x| < 6.36, all
// but the far tails), exp(Q(t / 4.5) - t^2) with Q a polynomial: one exp and no reciprocal,
// half the cost of erff. Beyond, u * exp(P(u) - t^2) with u = 1 / (1 + t / 2) and P of
// degree 9. For float32 results Q has degree 10 (about 2e-6 relative error); for 16-bit
// results, whose rounding step is 2^-11 relative or coarser, degree 7 (about 7e-6), which
// runs the bfloat16 op about 7% faster.
__device__ inline float erfc_far(float t) {
  const float u = __fdividef(1.0f, fmaf(0.5f, t, 1.0f));
  const float p = polynomial(
      u, 1.820451021e-01f, -8.726416826e-01f, 1.583596706e+00f, -1.231761456e+00f, 3.360064626e-01f,
      -2.061395645e-01f, 1.006541997e-01f, 3.737148345e-01f, 1.000037789e+00f, -1.265512347e+00f);
  return u * __expf(fmaf(-t, t, p));
}

__device__ inline float erfc_near_q10(float s) {
  return polynomial(s, -6.289247870e-01f, 3.512923717e+00f, -8.279726028e+00f, 1.019950581e+01f,
                    -5.530982018e+00f, -2.718444109e+00f, 8.506739616e+00f, -9.446615219e+00f,
                    7.363588333e+00f, -5.077833652e+00f, 5.245705665e-07f);
}

__device__ inline float erfc_near_q7(float s) {
  return polynomial(s, -5.528840423e-01f, 2.893933773e+00f, -6.818661213e+00f, 9.736898422e+00f,
                    -9.664760590e+00f, 7.384376526e+00f, -5.078683376e+00f, 7.243243545e-06f);
}

template <typename T>
__device__ inline float erfc_nonnegative(float t) {
  if (t > 4.5f) return erfc_far(t);
  const float s = t * (1.0f / 4.5f);
  const float q = sizeof(T) == 2 ? erfc_near_q7(s) : erfc_near_q10(s);
  return __expf(fmaf(-t, t, q));
}

template <typename T>
__device__ inline float gelu_of(float x) {
  if (tanh_form) {
    const float inner = 0.7978845608028654f * (x + 0.044715f * x * x * x);  // sqrt(2/pi)
    return 0.5f * x * (1.0f + tanhf(inner));
  }
  // Phi(-|x|) = erfc(|x| / sqrt(2)) / 2, and Phi(x) = 1 - Phi(-x).
  const float tail = 0.5f * erfc_nonnegative<T>(fabsf(x) * 0.7071067811865476f);
  return x * (x >= 0.0f ? 1.0f - tail : tail);
}

template <typename T>
__global__ void swiglu(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ out,
                       unsigned long long n) {
  KREG_SIGNATURE(swiglu<T>, kreg::contracts::activation::Swiglu<T>);
  kreg::map2(a, b, out, n, 0, [](float x, float y) { return silu_times(x, y); });
}

template <typename T>
__global__ void gelu(const T* __restrict__ in, T* __restrict__ out, unsigned long long n) {
  KREG_SIGNATURE(gelu<T>, kreg::contracts::activation::Gelu<T>);
  kreg::map<kreg::kWide<T>>(in, out, n, [](float x) { return gelu_of<T>(x); });
}
