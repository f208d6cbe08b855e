#pragma once
/// \file
/// Metal's 16-bit float vectors, `half2/3/4` and `bfloat2/3/4` (see custom_vector.cuh), kept
/// apart so that kernels with float vectors only need not compile the 16-bit types.

#include <kreg/device/custom_float16.cuh>
#include <kreg/device/custom_vector.cuh>

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)

namespace kreg_metal {
KREG_METAL_VECTOR_NAMES(half, ::kreg::half)
KREG_METAL_VECTOR_NAMES(bfloat, ::kreg::bfloat16)
}  // namespace kreg_metal

#endif  // __CUDACC__ || __CUDACC_RTC__
