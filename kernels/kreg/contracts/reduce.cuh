#pragma once
// What kernels/reduce.cu and the ops that launch it agree on (see activation.cuh).

namespace kreg::contracts::reduce {

template <class T>
using RowReduce = void(const T* x, float* out, unsigned cols);
template <class T>
using Argmax = void(const T* x, long long* out, unsigned cols);

}  // namespace kreg::contracts::reduce
