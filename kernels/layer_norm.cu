// Layer norm over the last dimension, one block per row, in float, with the two-pass
// variance (mean first, then the mean square of the deviations), which stays accurate when
// the mean is large:
//   out = (x - mean) / sqrt(var + eps) (* weight) (+ bias)
//   constant 200 (bool, default true): multiply by weight
//   constant 201 (bool, default true): add bias
// Rows of up to 32768 elements stay in registers; longer ones are read three times.
// kreg:entry layer_norm_f32=layer_norm<float>
// kreg:entry layer_norm_f16=layer_norm<kreg::half>
// kreg:entry layer_norm_bf16=layer_norm<kreg::bfloat16>
// kreg:specialization 200:b0|201:b0
// kreg:specialization 201:b0
#include <kreg/kernel.cuh>
#include <kreg/vec.cuh>

KREG_CONSTANT_DEFAULT(bool, has_weight, 200, true);
KREG_CONSTANT_DEFAULT(bool, has_bias, 201, true);

template <typename T>
__device__ inline float affine(float v, const T* weight, const T* bias, unsigned c) {
  using namespace kreg;
  if (has_weight) v *= to_float(weight[c]);
  if (has_bias) v += to_float(bias[c]);
  return v;
}

template <typename T>
__global__ void layer_norm(const T* __restrict__ x, const T* __restrict__ weight,
                           const T* __restrict__ bias, T* __restrict__ out, unsigned cols,
                           float eps) {
  using namespace kreg;
  __shared__ float scratch[32];
  const unsigned long long base = static_cast<unsigned long long>(blockIdx.x) * cols;
  const T* xr = x + base;
  T* outr = out + base;
  const float n = static_cast<float>(cols);
  constexpr unsigned kCached = 4;
  const bool vector = cols % kVecWidth == 0 && vec_aligned(xr) && vec_aligned(outr) &&
                      (!has_weight || vec_aligned(weight)) && (!has_bias || vec_aligned(bias));
  if (vector && cols <= blockDim.x * kVecWidth * kCached) {
    float v[kCached][kVecWidth];
    float sum = 0.0f;
#pragma unroll
    for (unsigned j = 0; j < kCached; ++j) {
      const unsigned c = (threadIdx.x + j * blockDim.x) * kVecWidth;
      if (c >= cols) break;
      const vec8<T> xv = load8(xr + c);
#pragma unroll
      for (int k = 0; k < kVecWidth; ++k) {
        v[j][k] = to_float(xv.v[k]);
        sum += v[j][k];
      }
    }
    const float mean = block_sum(sum, scratch) / n;
    float squares = 0.0f;
#pragma unroll
    for (unsigned j = 0; j < kCached; ++j) {
      if ((threadIdx.x + j * blockDim.x) * kVecWidth >= cols) break;
#pragma unroll
      for (int k = 0; k < kVecWidth; ++k) {
        v[j][k] -= mean;
        squares += v[j][k] * v[j][k];
      }
    }
    const float inv = rsqrtf(block_sum(squares, scratch) / n + eps);
#pragma unroll
    for (unsigned j = 0; j < kCached; ++j) {
      const unsigned c = (threadIdx.x + j * blockDim.x) * kVecWidth;
      if (c >= cols) break;
      vec8<T> o;
#pragma unroll
      for (int k = 0; k < kVecWidth; ++k)
        o.v[k] = from_float<T>(affine(v[j][k] * inv, weight, bias, c + k));
      store8(outr + c, o);
    }
    return;
  }
  float sum = 0.0f;
  for (unsigned c = threadIdx.x; c < cols; c += blockDim.x) sum += to_float(xr[c]);
  const float mean = block_sum(sum, scratch) / n;
  float squares = 0.0f;
  for (unsigned c = threadIdx.x; c < cols; c += blockDim.x) {
    const float d = to_float(xr[c]) - mean;
    squares += d * d;
  }
  const float inv = rsqrtf(block_sum(squares, scratch) / n + eps);
  for (unsigned c = threadIdx.x; c < cols; c += blockDim.x) {
    outr[c] = from_float<T>(affine((to_float(xr[c]) - mean) * inv, weight, bias, c));
  }
}
