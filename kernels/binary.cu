// out = a op b for float32, float16 and bfloat16, computed in float. b has a's shape, or is a
// row vector of `period` elements repeated along a (period 0: same shape). Sixteen bytes per
// thread and access when the pointers allow it, one element at a time otherwise.
// kreg:entry add_f32=binary<float, 0>
// kreg:entry add_f16=binary<kreg::half, 0>
// kreg:entry add_bf16=binary<kreg::bfloat16, 0>
// kreg:entry sub_f32=binary<float, 1>
// kreg:entry sub_f16=binary<kreg::half, 1>
// kreg:entry sub_bf16=binary<kreg::bfloat16, 1>
// kreg:entry mul_f32=binary<float, 2>
// kreg:entry mul_f16=binary<kreg::half, 2>
// kreg:entry mul_bf16=binary<kreg::bfloat16, 2>
// kreg:entry div_f32=binary<float, 3>
// kreg:entry div_f16=binary<kreg::half, 3>
// kreg:entry div_bf16=binary<kreg::bfloat16, 3>
// kreg:entry scale_f32=scale<float>
// kreg:entry scale_f16=scale<kreg::half>
// kreg:entry scale_bf16=scale<kreg::bfloat16>
#include <kreg/contracts/binary.cuh>
#include <kreg/device/kernel.cuh>
#include <kreg/device/vec.cuh>

template <int Op>
__device__ inline float apply_op(float x, float y) {
  if (Op == 0) return x + y;
  if (Op == 1) return x - y;
  if (Op == 2) return x * y;
  return x / y;
}

template <typename T, int Op>
__global__ void binary(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ out,
                       unsigned long long n, unsigned long long period) {
  KREG_SIGNATURE((binary<T, Op>), kreg::contracts::binary::Binary<T>);
  kreg::map2(a, b, out, n, period, [](float x, float y) { return apply_op<Op>(x, y); });
}

template <typename T>
__global__ void scale(const T* __restrict__ a, float s, T* __restrict__ out, unsigned long long n) {
  KREG_SIGNATURE(scale<T>, kreg::contracts::binary::Scale<T>);
  kreg::map<kreg::kWide<T>>(a, out, n, [s](float x) { return x * s; });
}
