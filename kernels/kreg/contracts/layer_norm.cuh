#pragma once
// What kernels/layer_norm.cu and the op that launches it agree on (see activation.cuh).

namespace kreg::contracts::layer_norm {

// bool, default true: multiply by weight.
inline constexpr int kHasWeight = 200;
// bool, default true: add bias.
inline constexpr int kHasBias = 201;

template <class T>
using LayerNorm = void(const T* x, const T* weight, const T* bias, T* out, unsigned cols,
                       float eps);

}  // namespace kreg::contracts::layer_norm
