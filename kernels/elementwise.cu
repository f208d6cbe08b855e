// Elementwise arithmetic on float32 vectors: out[i] = a[i] op b[i] for i < n.
// Grid-stride loops, so any grid covers any n.
#include <kreg/device/kernel.cuh>

extern "C" __global__ void elementwise_add_f32(const float* __restrict__ a,
                                               const float* __restrict__ b, float* __restrict__ out,
                                               unsigned n) {
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    out[i] = a[i] + b[i];
  }
}

extern "C" __global__ void elementwise_mul_f32(const float* __restrict__ a,
                                               const float* __restrict__ b, float* __restrict__ out,
                                               unsigned n) {
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    out[i] = a[i] * b[i];
  }
}
