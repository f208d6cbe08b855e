#pragma once
/// \file
/// Preamble for custom kernels whose bodies were written for Metal (MLX's `metal_kernel`): the
/// Metal names such bodies use, mapped onto CUDA. It includes nothing from the toolkit, so
/// that sources still compile with NVRTC's `-minimal`. Generated kernels include only the
/// parts their body uses; this header is all of them, for hand-written sources.

#include <kreg/custom_atomic.cuh>
#include <kreg/custom_barrier.cuh>
#include <kreg/custom_float16.cuh>
#include <kreg/custom_simd.cuh>
#include <kreg/custom_types.cuh>
