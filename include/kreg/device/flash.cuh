#pragma once
/// The row arithmetic of flash attention on tensor-core fragments, shared by the prefill
/// kernels: scores and outputs lie as mma.sync m16n8k16 C fragments side by side (group g
/// holds columns 8g to 8g + 7 of rows lane / 4 and lane / 4 + 8 of the warp's 16), so each lane
/// carries two rows, whose four lanes (lane % 4) hold the rest of them.

#include <kreg/device/mma.cuh>
#include <kreg/device/vec.cuh>

namespace kreg {

/// tanh by the hardware's approximation, for soft-capped scores.
__device__ inline float tanh_approx(float x) {
  float r;
  asm("tanh.approx.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
}

/// One tile's step of the online softmax, in base 2, for the lane's two rows: `s` (scores,
/// -inf where hidden) becomes 2^(s * exp_scale - the row's running maximum), the running
/// maximum `m_run` and this lane's part of each row's sum `l_run` move on, and `rescale` says
/// by how much the output accumulated so far must shrink.
template <int Groups>
__device__ inline void flash_softmax_step(float (&s)[Groups][4], float (&m_run)[2],
                                          float (&l_run)[2], float (&rescale)[2],
                                          float exp_scale) {
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    float top = m_run[r];
#pragma unroll
    for (int g = 0; g < Groups; ++g) top = fmaxf(top, fmaxf(s[g][2 * r], s[g][2 * r + 1]));
    top = fmaxf(top, __shfl_xor_sync(0xffffffffu, top, 1));
    top = fmaxf(top, __shfl_xor_sync(0xffffffffu, top, 2));
    // Nothing seen yet: every weight is 2^-inf = 0 against any finite reference.
    const float ref = top == negative_infinity() ? 0.0f : top;
    rescale[r] = fast_exp2((m_run[r] - ref) * exp_scale);
    const float offset = -ref * exp_scale;
    m_run[r] = top;
    float sum = 0.0f;
#pragma unroll
    for (int g = 0; g < Groups; ++g) {
      s[g][2 * r] = fast_exp2(fmaf(s[g][2 * r], exp_scale, offset));
      s[g][2 * r + 1] = fast_exp2(fmaf(s[g][2 * r + 1], exp_scale, offset));
      sum += s[g][2 * r] + s[g][2 * r + 1];
    }
    l_run[r] = fmaf(l_run[r], rescale[r], sum);
  }
}

/// The output accumulated so far, each of the lane's rows shrunk by its `rescale`.
template <int Groups>
__device__ inline void flash_rescale(float (&o)[Groups][4], const float (&rescale)[2]) {
#pragma unroll
  for (int g = 0; g < Groups; ++g) {
    o[g][0] *= rescale[0];
    o[g][1] *= rescale[0];
    o[g][2] *= rescale[1];
    o[g][3] *= rescale[1];
  }
}

/// The output: each of the lane's rows divided by its sum over its four lanes, written to row
/// `row0` (and row0 + 8) of `out`, rows `stride` elements apart, where below `rows`. A row that
/// saw no key gives zeros.
template <int Groups, class T>
__device__ inline void flash_store_rows(T* out, unsigned long long stride, int row0, int rows,
                                        const float (&o)[Groups][4], const float (&l_run)[2]) {
  const int lane = static_cast<int>(threadIdx.x % 32);
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    float total = l_run[r];
    total += __shfl_xor_sync(0xffffffffu, total, 1);
    total += __shfl_xor_sync(0xffffffffu, total, 2);
    const float inverse = total > 0.0f ? 1.0f / total : 0.0f;
    const int row = row0 + r * 8;
    if (row >= rows) continue;
    T* dst = out + row * stride + (lane % 4) * 2;
#pragma unroll
    for (int g = 0; g < Groups; ++g) {
      *reinterpret_cast<unsigned*>(dst + g * 8) =
          pack2(o[g][2 * r] * inverse, o[g][2 * r + 1] * inverse, T{});
    }
  }
}

}  // namespace kreg
