#pragma once
// What kernels/transpose.cu and the ops that launch it agree on (see activation.cuh).

namespace kreg::contracts::transpose {

template <class T>
using Transpose = void(const T* in, T* out, unsigned rows, unsigned cols);

}  // namespace kreg::contracts::transpose
