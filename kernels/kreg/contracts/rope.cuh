#pragma once
// What kernels/rope.cu and the ops that launch it agree on (see activation.cuh).

namespace kreg::contracts::rope {

// bool, default false: the NeoX layout (pairs across the two halves of a head).
inline constexpr int kNeox = 200;
// bool, default false: read positions from the array instead of offset + token.
inline constexpr int kHasPositions = 201;

template <class T>
using Rope = void(const T* x, const int* positions, T* out, unsigned heads, unsigned head_dim,
                  long long offset, float log2_base);

}  // namespace kreg::contracts::rope
