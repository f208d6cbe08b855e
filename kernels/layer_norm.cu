// Layer norm over the last dimension, one block per row, in float, with the two-pass
// variance (mean first, then the mean square of the deviations), which stays accurate when
// the mean is large. Each pass ends in one block sum of a single float, which costs less than
// merging per-thread moments in one reduction:
//   out = (x - mean) / sqrt(var + eps) (* weight) (+ bias)
// Constants and parameters: kreg/contracts/layer_norm.cuh.
// Rows of up to 32768 elements stay in registers; longer ones are read three times.
// kreg:entry layer_norm_f32=layer_norm<float>
// kreg:entry layer_norm_f16=layer_norm<kreg::half>
// kreg:entry layer_norm_bf16=layer_norm<kreg::bfloat16>
// kreg:specialization 200:b0|201:b0
// kreg:specialization 201:b0
#include <kreg/contracts/layer_norm.cuh>
#include <kreg/device/kernel.cuh>
#include <kreg/device/vec.cuh>

KREG_CONSTANT_DEFAULT(bool, has_weight, kreg::contracts::layer_norm::kHasWeight, true);
KREG_CONSTANT_DEFAULT(bool, has_bias, kreg::contracts::layer_norm::kHasBias, true);

__device__ inline float affine(float v, float w, float b) {
  if (has_weight) v *= w;
  if (has_bias) v += b;
  return v;
}

// The op launches up to 1024 threads a block; the bound keeps every size launchable.
template <typename T>
__global__ void __launch_bounds__(1024)
    layer_norm(const T* __restrict__ x, const T* __restrict__ weight, const T* __restrict__ bias,
               T* __restrict__ out, unsigned cols, float eps) {
  KREG_SIGNATURE(layer_norm<T>, kreg::contracts::layer_norm::LayerNorm<T>);
  using namespace kreg;
  __shared__ float scratch[32];
  const unsigned long long base = static_cast<unsigned long long>(blockIdx.x) * cols;
  const T* xr = x + base;
  T* outr = out + base;
  const float n = static_cast<float>(cols);
  const bool vector = cols % kVecWidth == 0 && vec_aligned(xr) && vec_aligned(outr) &&
                      (!has_weight || vec_aligned(weight)) && (!has_bias || vec_aligned(bias));
  if (row_in_registers(cols, vector)) {
    vec8<T> v[kRowVectors];
    load_row(v, xr, cols);
    float sum = 0.0f;
    for_each_row_vector(cols, [&](unsigned j, unsigned) {
#pragma unroll
      for (int k = 0; k < kVecWidth; ++k) sum += to_float(v[j].v[k]);
    });
    const float mean = block_sum(sum, scratch) / n;
    float squares = 0.0f;
    for_each_row_vector(cols, [&](unsigned j, unsigned) {
#pragma unroll
      for (int k = 0; k < kVecWidth; ++k) {
        const float d = to_float(v[j].v[k]) - mean;
        squares += d * d;
      }
    });
    const float inv = rsqrtf(block_sum(squares, scratch) / n + eps);
    for_each_row_vector(cols, [&](unsigned j, unsigned c) {
      vec8<T> w;
      vec8<T> b;
      if (has_weight) w = load8(weight + c);
      if (has_bias) b = load8(bias + c);
      float o[kVecWidth];
#pragma unroll
      for (int k = 0; k < kVecWidth; ++k) {
        o[k] = affine((to_float(v[j].v[k]) - mean) * inv, has_weight ? to_float(w.v[k]) : 1.0f,
                      has_bias ? to_float(b.v[k]) : 0.0f);
      }
      store8(outr + c, pack8<T>(o));
    });
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
    outr[c] = from_float<T>(affine((to_float(xr[c]) - mean) * inv,
                                   has_weight ? to_float(weight[c]) : 1.0f,
                                   has_bias ? to_float(bias[c]) : 0.0f));
  }
}
