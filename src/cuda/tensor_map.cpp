#include "cuda/tensor_map.hpp"

#include "cuda/driver_api.hpp"

#include <string>

namespace kreg::cuda {

void encode_tensor_map(const TensorMap2d& map, void* out) {
  const DriverApi& api = driver();
  const CUtensorMapDataType type = map.element_bytes == 4 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT32
                                   : map.bfloat16         ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
                                                          : CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  const cuuint64_t dims[2] = {map.inner, map.outer};
  const cuuint64_t strides[1] = {map.row_bytes};
  const cuuint32_t box[2] = {map.box_inner, map.box_outer};
  const cuuint32_t steps[2] = {1, 1};
  // NOLINTNEXTLINE(performance-no-int-to-ptr): the driver takes the address as a pointer
  void* address = reinterpret_cast<void*>(map.address);
  check(api.cuTensorMapEncodeTiled(static_cast<CUtensorMap*>(out), type, 2, address, dims, strides,
                                   box, steps, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                   CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                                   CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
        ErrorCode::LaunchError,
        "encoding a tensor map of " + std::to_string(map.outer) + " x " +
            std::to_string(map.inner) + " elements (rows " + std::to_string(map.row_bytes) +
            " bytes apart, boxes of " + std::to_string(map.box_outer) + " x " +
            std::to_string(map.box_inner) + ")");
}

}  // namespace kreg::cuda
