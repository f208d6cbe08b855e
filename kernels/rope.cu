// Rotary position embedding over x of shape tokens x heads x head_dim (row-major), in float:
// each pair (x0, x1) of a head turns by the angle position * base^(-2i / head_dim), where i
// numbers the pair. The pairs are adjacent elements (2i, 2i + 1), or, in the NeoX layout, the
// two halves of the head (i, i + head_dim / 2). A token's position is positions[t], or
// offset + t without a positions array.
//   constant 200 (bool, default false): NeoX layout
//   constant 201 (bool, default false): read positions from the array
// kreg:entry rope_f32=rope<float>
// kreg:entry rope_f16=rope<kreg::half>
// kreg:entry rope_bf16=rope<kreg::bfloat16>
// kreg:specialization 200:b1
// kreg:specialization 201:b1
// kreg:specialization 200:b1|201:b1
#include <kreg/kernel.cuh>
#include <kreg/vec.cuh>

KREG_CONSTANT_DEFAULT(bool, neox, 200, false);
KREG_CONSTANT_DEFAULT(bool, has_positions, 201, false);

template <typename T>
__global__ void rope(const T* __restrict__ x, const int* __restrict__ positions,
                     T* __restrict__ out, unsigned heads, unsigned head_dim, long long offset,
                     float log2_base) {
  using namespace kreg;
  const unsigned t = blockIdx.x;
  const float position = has_positions ? static_cast<float>(positions[t])
                                       : static_cast<float>(offset + static_cast<long long>(t));
  const unsigned half = head_dim / 2;
  const unsigned long long row = static_cast<unsigned long long>(t) * heads * head_dim;
  for (unsigned p = threadIdx.x; p < heads * half; p += blockDim.x) {
    const unsigned h = p / half;
    const unsigned i = p % half;
    const float inv_freq =
        exp2f(-2.0f * static_cast<float>(i) / static_cast<float>(head_dim) * log2_base);
    float s;
    float c;
    sincosf(position * inv_freq, &s, &c);
    const unsigned long long at = row + static_cast<unsigned long long>(h) * head_dim;
    const unsigned a = neox ? i : 2 * i;
    const unsigned b = neox ? i + half : 2 * i + 1;
    const float x0 = to_float(x[at + a]);
    const float x1 = to_float(x[at + b]);
    out[at + a] = from_float<T>(x0 * c - x1 * s);
    out[at + b] = from_float<T>(x0 * s + x1 * c);
  }
}
