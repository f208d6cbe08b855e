// Conversions between float32 and the 16-bit floats, rounding to nearest even. Eight
// elements per thread with vector accesses when both pointers allow it.
// kreg:entry cast_f32_f16=cast<float, kreg::half>
// kreg:entry cast_f16_f32=cast<kreg::half, float>
// kreg:entry cast_f32_bf16=cast<float, kreg::bfloat16>
// kreg:entry cast_bf16_f32=cast<kreg::bfloat16, float>
#include <kreg/contracts/cast.cuh>
#include <kreg/device/kernel.cuh>
#include <kreg/device/vec.cuh>

template <typename From, typename To>
__global__ void cast(const From* __restrict__ in, To* __restrict__ out, unsigned long long n) {
  KREG_SIGNATURE((cast<From, To>), kreg::contracts::cast::Cast<From, To>);
  kreg::map<kreg::kVecWidth>(in, out, n, [](float x) { return x; });
}
