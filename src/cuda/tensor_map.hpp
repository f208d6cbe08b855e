#pragma once
// Tensor maps for the copy engine (TMA): what a kernel's `cp.async.bulk.tensor` needs to know
// about a 2-D (or 3-D) tensor in global memory.

#include <cstddef>
#include <cstdint>

namespace kreg::cuda {

struct TensorMap2d {
  std::uint64_t address = 0;    // element (0, 0); 16-byte aligned
  unsigned element_bytes = 2;   // 2 (float16 or bfloat16) or 4 (float32)
  bool bfloat16 = false;        // of 2-byte elements: bfloat16 rather than float16
  std::uint64_t inner = 0;      // elements along the contiguous dimension
  std::uint64_t outer = 0;      // rows
  std::uint64_t row_bytes = 0;  // from one row to the next; a multiple of 16
  unsigned box_inner = 0;       // elements of a box along the contiguous dimension
  unsigned box_outer = 0;       // rows of a box
  // 0 for a 2-D map; else a 3-D one of `depth` slices of `outer` rows, `slice_bytes` apart
  // (a multiple of 16), whose boxes are one slice deep: a box stops at its slice's last row.
  std::uint64_t depth = 0;
  std::uint64_t slice_bytes = 0;
};

// Encodes `map` (2-D or 3-D) with the 128-byte swizzle (box_inner * element_bytes must be 128 or
// less) into the 128 bytes at `out`, 64-byte aligned. Throws LaunchError with the driver's reason
// when it refuses.
void encode_tensor_map(const TensorMap2d& map, void* out);

}  // namespace kreg::cuda
