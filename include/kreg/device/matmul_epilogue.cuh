#pragma once
/// What the matmul kernels do to a float result before it is stored: the bias, one of the
/// epilogues of <kreg/contracts/matmul.cuh>, and the conversion to the output type. A thread
/// stores two neighbouring columns of a row at a time, as the tensor cores' accumulators lie.

#include <kreg/contracts/matmul.cuh>
#include <kreg/device/half.cuh>
#include <kreg/device/mma.cuh>

namespace kreg::matmul {

namespace mc = kreg::contracts::matmul;

/// The type a kernel stores: float where its kFloatOut constant is set, else its inputs'.
template <bool Float, class T>
struct OutOf {
  using type = T;
};
template <class T>
struct OutOf<true, T> {
  using type = float;
};

template <int Epilogue>
__device__ inline float activate(float x, float other) {
  if constexpr (Epilogue == mc::kGelu) {
    return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));
  } else if constexpr (Epilogue == mc::kGeluTanh) {
    const float inner = 0.7978845608028654f * (x + 0.044715f * x * x * x);
    return 0.5f * x * (1.0f + tanhf(inner));
  } else if constexpr (Epilogue == mc::kSilu) {
    return x / (1.0f + __expf(-x));
  } else if constexpr (Epilogue == mc::kSiluGate) {
    return x / (1.0f + __expf(-x)) * other;
  } else if constexpr (Epilogue == mc::kResidual) {
    return x + other;
  } else {
    return x;
  }
}

/// Whether the epilogue reads `other`.
template <int Epilogue>
inline constexpr bool kReadsOther = Epilogue == mc::kSiluGate || Epilogue == mc::kResidual;

/// Row `row`, columns `col` and `col + 1` (the second only below n) of the result: `x0` and
/// `x1` plus the bias, through the epilogue, stored to `out` (rows n apart) as Out.
template <class T, class Out, int Epilogue, bool HasBias>
__device__ inline void store_pair(Out* __restrict__ out, const T* __restrict__ bias,
                                  const T* __restrict__ other, long long ld_other, int m, int n,
                                  int row, int col, float x0, float x1) {
  if (row >= m || col >= n) return;
  const bool both = col + 1 < n;
  if constexpr (HasBias) {
    x0 += static_cast<float>(bias[col]);
    if (both) x1 += static_cast<float>(bias[col + 1]);
  }
  float o0 = 0.0f;
  float o1 = 0.0f;
  if constexpr (kReadsOther<Epilogue>) {
    const T* at = other + static_cast<long long>(row) * ld_other + col;
    o0 = static_cast<float>(at[0]);
    if (both) o1 = static_cast<float>(at[1]);
  }
  x0 = activate<Epilogue>(x0, o0);
  x1 = activate<Epilogue>(x1, o1);
  Out* at = out + static_cast<long long>(row) * n + col;
  if (both && n % 2 == 0) {  // the pair is aligned to its own size
    if constexpr (sizeof(Out) == 4) {
      *reinterpret_cast<float2*>(at) = make_float2(x0, x1);
    } else {
      *reinterpret_cast<unsigned*>(at) = pack2(x0, x1, Out{});
    }
  } else {
    at[0] = Out(x0);
    if (both) at[1] = Out(x1);
  }
}

}  // namespace kreg::matmul
