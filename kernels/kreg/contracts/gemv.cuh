#pragma once
// What kernels/gemv.cu and the op that launches it agree on (see activation.cuh).

namespace kreg::contracts::gemv {

template <class W>
using Gemv = void(const W* w, const float* x, float* y, unsigned rows, unsigned cols);

}  // namespace kreg::contracts::gemv
