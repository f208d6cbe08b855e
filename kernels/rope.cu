// Rotary position embedding over x of shape tokens x heads x head_dim (row-major), in float:
// each pair (x0, x1) of a head turns by the angle position * base^(-2i / head_dim), where i
// numbers the pair. The pairs are adjacent elements (2i, 2i + 1), or, in the NeoX layout, the
// two halves of the head (i, i + head_dim / 2). A token's position is positions[t], or
// offset + t without a positions array. One block per token: the block first takes the
// token's cosines and sines once (they do not depend on the head), then turns every head,
// eight elements per access where the layout and alignment allow.
// Constants and parameters: kreg/contracts/rope.cuh.
// kreg:entry rope_f32=rope<float>
// kreg:entry rope_f16=rope<kreg::half>
// kreg:entry rope_bf16=rope<kreg::bfloat16>
// kreg:specialization 200:b1
// kreg:specialization 201:b1
// kreg:specialization 200:b1|201:b1
#include <kreg/contracts/rope.cuh>
#include <kreg/device/kernel.cuh>
#include <kreg/device/rotary.cuh>

KREG_CONSTANT_DEFAULT(bool, neox, kreg::contracts::rope::kNeox, false);
KREG_CONSTANT_DEFAULT(bool, has_positions, kreg::contracts::rope::kHasPositions, false);

template <typename T>
__global__ void rope(const T* __restrict__ x, const int* __restrict__ positions,
                     T* __restrict__ out, unsigned heads, unsigned head_dim, long long offset,
                     float log2_base) {
  KREG_SIGNATURE(rope<T>, kreg::contracts::rope::Rope<T>);
  using namespace kreg;
  __shared__ float cosines[kRotaryTable];
  __shared__ float sines[kRotaryTable];
  const unsigned t = blockIdx.x;
  const float position = has_positions ? static_cast<float>(positions[t])
                                       : static_cast<float>(offset + static_cast<long long>(t));
  const unsigned long long row = static_cast<unsigned long long>(t) * heads * head_dim;
  rotate_token<neox>(x + row, out + row, heads, head_dim, position, log2_base, cosines, sines);
}
