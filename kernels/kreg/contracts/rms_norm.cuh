#pragma once
// What kernels/rms_norm.cu and the ops that launch it agree on (see activation.cuh).

namespace kreg::contracts::rms_norm {

// bool, default true: multiply by weight.
inline constexpr int kHasWeight = 200;
// bool, default false: add the residual first, and write the sum to residual_out.
inline constexpr int kAddResidual = 201;

template <class T>
using RmsNorm = void(const T* x, const T* weight, const T* residual, T* out, T* residual_out,
                     unsigned cols, float eps);

}  // namespace kreg::contracts::rms_norm
