#pragma once
/// \file
/// Preamble for custom kernels whose bodies were written for Metal (MLX's `metal_kernel`): the
/// Metal names such bodies use, mapped onto CUDA. It includes nothing from the toolkit, so
/// that sources still compile with NVRTC's `-minimal`. Generated kernels include only the
/// parts their body uses; this header is all of them, for hand-written sources, but Metal's
/// vector types (custom_vector.cuh), whose Metal names only code inside namespace
/// `kreg_metal` sees.

#include <kreg/device/custom_atomic.cuh>
#include <kreg/device/custom_barrier.cuh>
#include <kreg/device/custom_constants.cuh>
#include <kreg/device/custom_float16.cuh>
#include <kreg/device/custom_math.cuh>
#include <kreg/device/custom_math_float16.cuh>
#include <kreg/device/custom_simd.cuh>
#include <kreg/device/custom_ternary.cuh>
#include <kreg/device/custom_types.cuh>
#include <kreg/device/custom_utils.cuh>
