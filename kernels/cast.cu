// Conversions between float32 and the 16-bit floats, rounding to nearest even. Eight
// elements per thread with vector accesses when both pointers allow it.
// kreg:entry cast_f32_f16=cast<float, kreg::half>
// kreg:entry cast_f16_f32=cast<kreg::half, float>
// kreg:entry cast_f32_bf16=cast<float, kreg::bfloat16>
// kreg:entry cast_bf16_f32=cast<kreg::bfloat16, float>
#include <kreg/vec.cuh>

template <typename From, typename To>
__global__ void cast(const From* __restrict__ in, To* __restrict__ out, unsigned long long n) {
  using namespace kreg;
  for_each_vector(
      n, vec_aligned(in) && vec_aligned(out),
      [&](unsigned long long i) {
        const vec8<From> x = load8(in + i);
        float r[kVecWidth];
#pragma unroll
        for (int k = 0; k < kVecWidth; ++k) r[k] = to_float(x.v[k]);
        store8(out + i, pack8<To>(r));
      },
      [&](unsigned long long e) { out[e] = from_float<To>(to_float(in[e])); });
}
