#include "cuda/tensor_map.hpp"

#include "cuda/driver_api.hpp"

#include <string>

namespace kreg::cuda {

void encode_tensor_map(const TensorMap2d& map, void* out) {
  const DriverApi& api = driver();
  const CUtensorMapDataType type = map.element_bytes == 4 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT32
                                   : map.bfloat16         ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
                                                          : CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  const cuuint32_t rank = map.depth > 0 ? 3 : 2;
  const cuuint64_t dims[3] = {map.inner, map.outer, map.depth};
  const cuuint64_t strides[2] = {map.row_bytes, map.slice_bytes};
  const cuuint32_t box[3] = {map.box_inner, map.box_outer, 1};
  const cuuint32_t steps[3] = {1, 1, 1};
  // NOLINTNEXTLINE(performance-no-int-to-ptr): the driver takes the address as a pointer
  void* address = reinterpret_cast<void*>(map.address);
  check(api.cuTensorMapEncodeTiled(static_cast<CUtensorMap*>(out), type, rank, address, dims,
                                   strides, box, steps, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                   CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                                   CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
        ErrorCode::LaunchError,
        "encoding a tensor map of " + (map.depth > 0 ? std::to_string(map.depth) + " x " : "") +
            std::to_string(map.outer) + " x " + std::to_string(map.inner) + " elements (rows " +
            std::to_string(map.row_bytes) + " bytes apart, boxes of " +
            std::to_string(map.box_outer) + " x " + std::to_string(map.box_inner) + ")");
}

}  // namespace kreg::cuda
