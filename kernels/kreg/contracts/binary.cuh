#pragma once
// What kernels/binary.cu and the ops that launch it agree on (see activation.cuh).

namespace kreg::contracts::binary {

// b has a's shape (period 0), or is a row of `period` elements repeated along a.
template <class T>
using Binary = void(const T* a, const T* b, T* out, unsigned long long n,
                    unsigned long long period);
template <class T>
using Scale = void(const T* a, float s, T* out, unsigned long long n);

}  // namespace kreg::contracts::binary
