#pragma once
// What kernels/embedding.cu and the op that launches it agree on (see activation.cuh).

namespace kreg::contracts::embedding {

template <class T, class I>
using Embedding = void(const T* table, const I* ids, T* out, unsigned cols,
                       unsigned long long vocab);

}  // namespace kreg::contracts::embedding
