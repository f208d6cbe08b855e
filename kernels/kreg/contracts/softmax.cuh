#pragma once
// What kernels/softmax.cu and the op that launches it agree on (see activation.cuh).

namespace kreg::contracts::softmax {

// bool, default false: add the mask.
inline constexpr int kHasMask = 200;

template <class T>
using Softmax = void(const T* x, const T* mask, T* out, unsigned cols,
                     unsigned long long mask_stride, float scale);

}  // namespace kreg::contracts::softmax
