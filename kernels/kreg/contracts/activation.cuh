#pragma once
// What kernels/activation.cu and the ops that launch it agree on. Both include this file, so
// each constant index and parameter list is written once; the kernels check their own
// signatures against it (KREG_SIGNATURE), and the ops' launches against it.

namespace kreg::contracts::activation {

// bool, default false: gelu takes the tanh approximation instead of erf.
inline constexpr int kTanhForm = 200;

template <class T>
using Swiglu = void(const T* a, const T* b, T* out, unsigned long long n);
template <class T>
using Gelu = void(const T* in, T* out, unsigned long long n);

}  // namespace kreg::contracts::activation
