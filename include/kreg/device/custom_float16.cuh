#pragma once
/// \file
/// Metal's names for the 16-bit floats, over kreg's lean types. Metal's `half` is left out on
/// purpose: a global `half` would clash with cuda_fp16.h in sources that include it. Use
/// `float16_t`, or `kreg::half`.

#include <kreg/device/half.cuh>

typedef kreg::half float16_t;
typedef kreg::bfloat16 bfloat16_t;
