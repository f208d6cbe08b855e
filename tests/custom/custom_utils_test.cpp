// MLX's indexing helpers (kreg/device/custom_utils.cuh) in custom-kernel bodies: elem_to_loc
// and its fixed forms over the generated shape and strides of a strided input, and ceildiv,
// compile through CustomKernel with NVRTC for sm_90; the part comes only with its names.
// Needs no GPU.
#include "test_support.hpp"

#include <string>
#include <vector>

namespace kreg {
namespace {

using test::contains;
using test::custom_compile_error;

// A 6 x 5 view with strides {1, 6}: not row-contiguous.
Array transposed() {
  return Array::from_data(std::vector<float>(30, 1.0f), {5, 6}).transpose();
}

std::string compile_error(const std::string& body) {
  CustomKernelOptions options;
  options.ensure_row_contiguous = false;
  const CustomKernel kernel("utils", {"a"}, {"out"}, body, options);
  return custom_compile_error(kernel, {transposed()}, {OutputSpec{{6, 5}, Dtype::Float32}});
}

TEST(MetalUtils, ElemToLocOverTheGeneratedShapeAndStrides) {
  ASSERT_FALSE(transposed().is_row_contiguous());
  EXPECT_EQ(compile_error("uint i = thread_position_in_grid.x;\n"
                          "out[i] = a[elem_to_loc(i, a_shape, a_strides, a_ndim)];"),
            "");
  // A 64-bit index, and the grid-position form.
  EXPECT_EQ(compile_error("uint i = thread_position_in_grid.x;\n"
                          "int64_t at = elem_to_loc<int64_t>(i, a_shape, a_strides, a_ndim);\n"
                          "out[i] = a[at] + a[elem_to_loc(thread_position_in_grid, a_shape, "
                          "a_strides, a_ndim)];"),
            "");
}

TEST(MetalUtils, FixedDimensionFormsAndCeildiv) {
  EXPECT_EQ(compile_error("uint3 p = thread_position_in_grid;\n"
                          "out[p.y * 5 + p.x] = a[elem_to_loc_2(p, a_strides)] +\n"
                          "    a[elem_to_loc_1(p.x, a_strides[1])] +\n"
                          "    a[elem_to_loc_3(uint3{p.x, p.y, 0}, a_strides)] +\n"
                          "    a[elem_to_loc_2(uint2{p.x, p.y}, a_strides)] + ceildiv(p.x, 4) +\n"
                          "    ceildiv(int64_t(7), 2);"),
            "");
}

TEST(MetalUtils, ThePartComesOnlyWithItsNames) {
  const auto source = [](const std::string& body) {
    CustomKernelOptions options;
    options.ensure_row_contiguous = false;
    const CustomKernel kernel("utils", {"a"}, {"out"}, body, options);
    return kernel.generated_source({transposed()}, {OutputSpec{{6, 5}, Dtype::Float32}});
  };
  const std::string include = "#include <kreg/device/custom_utils.cuh>";
  EXPECT_FALSE(contains(source("out[0] = a[0];"), include));
  EXPECT_FALSE(contains(source("int my_ceildiv = 1; out[0] = a[my_ceildiv];"), include));
  EXPECT_TRUE(
      contains(source("out[0] = a[elem_to_loc(0u, a_shape, a_strides, a_ndim)];"), include));
  EXPECT_TRUE(contains(source("out[0] = a[elem_to_loc_2(uint2{0, 0}, a_strides)];"), include));
  EXPECT_TRUE(contains(source("out[0] = ceildiv(3, 2);"), include));
  EXPECT_FALSE(contains(source("out[0] = ceildiv(3, 2);"), "custom_math"));
}

}  // namespace
}  // namespace kreg
