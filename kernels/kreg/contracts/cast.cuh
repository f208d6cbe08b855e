#pragma once
// What kernels/cast.cu and the op that launches it agree on (see activation.cuh).

namespace kreg::contracts::cast {

template <class From, class To>
using Cast = void(const From* in, To* out, unsigned long long n);

}  // namespace kreg::contracts::cast
