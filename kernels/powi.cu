// out[i] = sign * x[i]^exponent, with the exponent and the sign fixed at compile time so
// that the power unrolls into multiplications.
//   constant 200 (bool, default false): negate the result
//   constant 300 (int, required): the exponent, >= 0
// kreg:specialization 300:i2
// kreg:specialization 200:b1|300:i3
#include <kreg/device/kernel.cuh>

KREG_CONSTANT_DEFAULT(bool, negate, 200, false);
KREG_CONSTANT(int, exponent, 300);

static_assert(exponent >= 0, "powi: the exponent must be non-negative");

extern "C" __global__ void powi_f32(const float* __restrict__ x, float* __restrict__ out,
                                    unsigned n) {
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const float v = x[i];
    float r = 1.0f;
#pragma unroll
    for (int k = 0; k < exponent; ++k) r *= v;
    out[i] = negate ? -r : r;
  }
}
