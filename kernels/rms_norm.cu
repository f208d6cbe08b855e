// RMS norm over the last dimension, one block per row, accumulated in float:
//   h = x (+ residual);  out = h / sqrt(mean(h^2) + eps) (* weight)
// With the residual, h is also written to residual_out (rounded to T, and normalized as
// rounded), which is the fused "add, then norm" of a transformer layer.
// Constants and parameters: kreg/contracts/rms_norm.cuh.
// kreg:entry rms_norm_f32=rms_norm<float>
// kreg:entry rms_norm_f16=rms_norm<kreg::half>
// kreg:entry rms_norm_bf16=rms_norm<kreg::bfloat16>
// kreg:specialization 201:b1
// kreg:specialization 200:b0
// kreg:specialization 200:b0|201:b1
#include <kreg/contracts/rms_norm.cuh>
#include <kreg/device/kernel.cuh>
#include <kreg/device/vec.cuh>

KREG_CONSTANT_DEFAULT(bool, has_weight, kreg::contracts::rms_norm::kHasWeight, true);
KREG_CONSTANT_DEFAULT(bool, add_residual, kreg::contracts::rms_norm::kAddResidual, false);

// The op launches up to 1024 threads a block; the bound keeps every size launchable.
template <typename T>
__global__ void __launch_bounds__(1024)
    rms_norm(const T* __restrict__ x, const T* __restrict__ weight, const T* __restrict__ residual,
             T* __restrict__ out, T* __restrict__ residual_out, unsigned cols, float eps) {
  KREG_SIGNATURE(rms_norm<T>, kreg::contracts::rms_norm::RmsNorm<T>);
  using namespace kreg;
  __shared__ float scratch[32];
  const unsigned long long base = static_cast<unsigned long long>(blockIdx.x) * cols;
  const T* xr = x + base;
  T* outr = out + base;
  const T* rr = add_residual ? residual + base : nullptr;
  T* hr = add_residual ? residual_out + base : nullptr;
  const bool vector = cols % kVecWidth == 0 && vec_aligned(xr) && vec_aligned(outr) &&
                      (!has_weight || vec_aligned(weight)) &&
                      (!add_residual || (vec_aligned(rr) && vec_aligned(hr)));

  if (row_in_registers(cols, vector)) {
    // With the residual, each vector's two loads are in flight together, and loading both
    // rows first would take twice the registers (float32 then spills, at 76% of copy
    // bandwidth against 95%).
    vec8<T> h[kRowVectors];
    if (!add_residual) load_row(h, xr, cols);
    float sum = 0.0f;
    for_each_row_vector(cols, [&](unsigned j, unsigned c) {
      if (add_residual) {
        h[j] = load8(xr + c);
        const vec8<T> r = load8(rr + c);
        float sums[kVecWidth];
#pragma unroll
        for (int k = 0; k < kVecWidth; ++k) sums[k] = to_float(h[j].v[k]) + to_float(r.v[k]);
        h[j] = pack8<T>(sums);
        store8(hr + c, h[j]);
      }
#pragma unroll
      for (int k = 0; k < kVecWidth; ++k) sum += to_float(h[j].v[k]) * to_float(h[j].v[k]);
    });
    const float inv = rsqrtf(block_sum(sum, scratch) / static_cast<float>(cols) + eps);
    for_each_row_vector(cols, [&](unsigned j, unsigned c) {
      vec8<T> w;
      if (has_weight) w = load8(weight + c);
      float o[kVecWidth];
#pragma unroll
      for (int k = 0; k < kVecWidth; ++k) {
        const float v = to_float(h[j].v[k]) * inv;
        o[k] = has_weight ? v * to_float(w.v[k]) : v;
      }
      store8(outr + c, pack8<T>(o));
    });
    return;
  }

  // Longer rows, or the scalar path: pass 1 computes h and the sum of its squares; each
  // thread later reads back only what it wrote.
  float sum = 0.0f;
  if (vector) {
    for (unsigned c = threadIdx.x * kVecWidth; c < cols; c += blockDim.x * kVecWidth) {
      vec8<T> h = load8(xr + c);
      if (add_residual) {
        const vec8<T> r = load8(rr + c);
#pragma unroll
        for (int k = 0; k < kVecWidth; ++k) {
          h.v[k] = from_float<T>(to_float(h.v[k]) + to_float(r.v[k]));
        }
        store8(hr + c, h);
      }
#pragma unroll
      for (int k = 0; k < kVecWidth; ++k) sum += to_float(h.v[k]) * to_float(h.v[k]);
    }
  } else {
    for (unsigned c = threadIdx.x; c < cols; c += blockDim.x) {
      T h = xr[c];
      if (add_residual) {
        h = from_float<T>(to_float(h) + to_float(rr[c]));
        hr[c] = h;
      }
      sum += to_float(h) * to_float(h);
    }
  }
  const float inv = rsqrtf(block_sum(sum, scratch) / static_cast<float>(cols) + eps);

  // Pass 2: normalize (the row is in L1 or L2 by now).
  const T* hsrc = add_residual ? hr : xr;
  if (vector) {
    for (unsigned c = threadIdx.x * kVecWidth; c < cols; c += blockDim.x * kVecWidth) {
      const vec8<T> h = load8(hsrc + c);
      vec8<T> w;
      if (has_weight) w = load8(weight + c);
      vec8<T> o;
#pragma unroll
      for (int k = 0; k < kVecWidth; ++k) {
        const float v = to_float(h.v[k]) * inv;
        o.v[k] = from_float<T>(has_weight ? v * to_float(w.v[k]) : v);
      }
      store8(outr + c, o);
    }
  } else {
    for (unsigned c = threadIdx.x; c < cols; c += blockDim.x) {
      const float v = to_float(hsrc[c]) * inv;
      outr[c] = from_float<T>(has_weight ? v * to_float(weight[c]) : v);
    }
  }
}
