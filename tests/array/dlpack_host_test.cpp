// DLPack tensors on the host are copied into arrays; no GPU is involved.
#include <kreg/dlpack.hpp>

#include "test_support.hpp"

#include <dlpack/dlpack.h>

#include <numeric>

namespace kreg {
namespace {

// A host tensor over `values` with the given shape and strides, whose deleter counts calls.
struct HostTensor {
  DLManagedTensor managed{};
  std::vector<std::int64_t> shape;
  std::vector<std::int64_t> strides;
  std::vector<float> values;
  int* deleted = nullptr;
};

DLManagedTensor* make_host(std::vector<float> values, std::vector<std::int64_t> shape,
                           std::vector<std::int64_t> strides, int* deleted,
                           std::uint64_t byte_offset = 0) {
  auto* owner = new HostTensor;
  owner->values = std::move(values);
  owner->shape = std::move(shape);
  owner->strides = std::move(strides);
  owner->deleted = deleted;
  DLTensor& t = owner->managed.dl_tensor;
  t.data = owner->values.data();
  t.device = DLDevice{kDLCPU, 0};
  t.ndim = static_cast<int>(owner->shape.size());
  t.dtype = DLDataType{kDLFloat, 32, 1};
  t.shape = owner->shape.data();
  t.strides = owner->strides.empty() ? nullptr : owner->strides.data();
  t.byte_offset = byte_offset;
  owner->managed.manager_ctx = owner;
  owner->managed.deleter = [](DLManagedTensor* self) {
    auto* o = static_cast<HostTensor*>(self->manager_ctx);
    ++*o->deleted;
    delete o;
  };
  return &owner->managed;
}

TEST(DlpackHost, ContiguousTensorIsCopiedAndReleasedAtOnce) {
  std::vector<float> values(12);
  std::iota(values.begin(), values.end(), 1.0F);
  int deleted = 0;
  const Array a = from_dlpack(make_host(values, {3, 4}, {}, &deleted));
  EXPECT_EQ(deleted, 1);  // the copy needs the producer's memory no longer
  EXPECT_EQ(a.shape(), (Shape{3, 4}));
  EXPECT_TRUE(a.is_row_contiguous());
  EXPECT_EQ(a.to_vector<float>(), values);
}

TEST(DlpackHost, StridedTensorIsGatheredInRowMajorOrder) {
  // A 3 x 2 transposed view of a 2 x 3 buffer, starting one element in.
  const std::vector<float> buffer = {-1, 10, 11, 12, 20, 21, 22};
  int deleted = 0;
  const Array a = from_dlpack(make_host(buffer, {3, 2}, {1, 3}, &deleted, sizeof(float)));
  EXPECT_EQ(deleted, 1);
  EXPECT_EQ(a.to_vector<float>(), (std::vector<float>{10, 20, 11, 21, 12, 22}));
}

TEST(DlpackHost, ZeroDimensionalAndEmptyTensors) {
  int deleted = 0;
  const Array scalar = from_dlpack(make_host({7}, {}, {}, &deleted));
  EXPECT_EQ(scalar.ndim(), 0);
  EXPECT_EQ(scalar.to_vector<float>(), (std::vector<float>{7}));
  const Array empty = from_dlpack(make_host({}, {0, 5}, {}, &deleted));
  EXPECT_EQ(empty.size(), 0);
  EXPECT_EQ(deleted, 2);
}

TEST(DlpackHost, BadHostTensorIsLeftWithTheCaller) {
  int deleted = 0;
  DLManagedTensor* tensor = make_host({1, 2}, {2}, {}, &deleted);
  tensor->dl_tensor.dtype = DLDataType{kDLComplex, 128, 1};  // complex128
  test::expect_error(ErrorCode::InvalidArgument, [&] { from_dlpack(tensor); });
  EXPECT_EQ(deleted, 0);
  tensor->deleter(tensor);
  EXPECT_EQ(deleted, 1);
}

TEST(DlpackHost, EveryDtypeCrossesAsItsDlpackType) {
  EXPECT_EQ(dlpack_dtype(Dtype::Float32).code, kDLFloat);
  EXPECT_EQ(dlpack_dtype(Dtype::BFloat16).code, kDLBfloat);
  EXPECT_EQ(dlpack_dtype(Dtype::UInt16).code, kDLUInt);
  EXPECT_EQ(dlpack_dtype(Dtype::Complex64).bits, 64);
  for (int d = 0; d <= static_cast<int>(Dtype::Complex64); ++d) {
    const auto dtype = static_cast<Dtype>(d);
    const DlpackDtype type = dlpack_dtype(dtype);
    EXPECT_EQ(type.bits, 8 * size_of(dtype));
    EXPECT_EQ(type.lanes, 1);
    // from_dlpack reads the type back as the same dtype.
    int deleted = 0;
    DLManagedTensor* tensor = make_host({1, 2}, {1}, {}, &deleted);
    tensor->dl_tensor.dtype = DLDataType{type.code, type.bits, type.lanes};
    EXPECT_EQ(from_dlpack(tensor).dtype(), dtype) << to_string(dtype);
    EXPECT_EQ(deleted, 1);
  }
}

}  // namespace
}  // namespace kreg
