// DLPack exchange: zero-copy both ways, deleters honoured exactly once.
#include <kreg/dlpack.hpp>

#include "gpu/device_buffer.hpp"
#include "test_support.hpp"

#include <dlpack/dlpack.h>

#include <random>

namespace kreg {
namespace {

using test::random_vector;

class DlpackGpu : public ::testing::Test {
 protected:
  void SetUp() override { KREG_REQUIRE_GPU(); }
  std::mt19937 rng_{7};
};

// A tensor over memory this test allocated, with a deleter that counts its calls.
struct ForeignTensor {
  DLManagedTensor managed{};
  std::vector<std::int64_t> shape;
  float* data = nullptr;
  int* deleted = nullptr;
};

DLManagedTensor* make_foreign(const std::vector<float>& values, std::vector<std::int64_t> shape,
                              int* deleted) {
  auto* owner = new ForeignTensor;
  owner->shape = std::move(shape);
  owner->deleted = deleted;
  test::cuda_check(
      cudaMalloc(reinterpret_cast<void**>(&owner->data), values.size() * sizeof(float)),
      "cudaMalloc");
  test::cuda_check(
      cudaMemcpy(owner->data, values.data(), values.size() * sizeof(float), cudaMemcpyHostToDevice),
      "cudaMemcpy");
  DLTensor& t = owner->managed.dl_tensor;
  t.data = owner->data;
  t.device = DLDevice{kDLCUDA, 0};
  t.ndim = static_cast<int>(owner->shape.size());
  t.dtype = DLDataType{kDLFloat, 32, 1};
  t.shape = owner->shape.data();
  t.strides = nullptr;
  t.byte_offset = 0;
  owner->managed.manager_ctx = owner;
  owner->managed.deleter = [](DLManagedTensor* self) {
    auto* o = static_cast<ForeignTensor*>(self->manager_ctx);
    ++*o->deleted;
    cudaFree(o->data);
    delete o;
  };
  return &owner->managed;
}

TEST_F(DlpackGpu, ImportsForeignMemoryWithoutCopyAndCallsTheDeleterOnce) {
  const int n = 10000;
  const auto values = random_vector<float>(n, rng_);
  int deleted = 0;
  DLManagedTensor* tensor = make_foreign(values, {100, 100}, &deleted);
  void* const address = tensor->dl_tensor.data;
  {
    const Array a = from_dlpack(tensor);
    EXPECT_TRUE(a.is_evaluated());
    EXPECT_EQ(a.shape(), (Shape{100, 100}));
    EXPECT_EQ(a.data(), address);
    CustomKernel kernel("negate_dl", {"a"}, {"out"},
                        "uint i = thread_position_in_grid.x; out[i] = -a[i];");
    auto out =
        kernel.apply({a.transpose()}, {OutputSpec{{100, 100}, Dtype::Float32}}, Dim3{n}, Dim3{256});
    const auto got = out[0].to_vector<float>();
    for (int i = 0; i < 100; ++i) {
      for (int j = 0; j < 100; ++j) ASSERT_EQ(got[i * 100 + j], -values[j * 100 + i]);
    }
    EXPECT_EQ(deleted, 0);
  }
  EXPECT_EQ(deleted, 1);
}

TEST_F(DlpackGpu, ImmediateReleaseHandsTheTensorBackWhenTheLastUseGoes) {
  const int n = 4096;
  const auto values = random_vector<float>(n, rng_);
  int deleted = 0;
  DLManagedTensor* tensor = make_foreign(values, {n}, &deleted);
  Array doubled;
  {
    const Array a = from_dlpack(tensor, DlpackRelease::Immediately);
    CustomKernel kernel("double_dl", {"a"}, {"out"},
                        "uint i = thread_position_in_grid.x; out[i] = 2 * a[i];");
    doubled = kernel.apply({a}, {OutputSpec{{n}, Dtype::Float32}}, Dim3{n}, Dim3{256})[0];
    doubled.eval();
    EXPECT_EQ(deleted, 0);  // the pending work's input is still in use
  }
  // The deleter ran when the input went, without waiting; stream order keeps the result.
  EXPECT_EQ(deleted, 1);
  const auto got = doubled.to_vector<float>();
  for (int i = 0; i < n; ++i) ASSERT_EQ(got[i], 2 * values[i]);
}

TEST_F(DlpackGpu, RoundTripSharesMemory) {
  const int n = 4096;
  const auto values = random_vector<float>(n, rng_);
  Array a = Array::from_data(values, {64, 64});
  DLManagedTensor* exported = to_dlpack(a);
  EXPECT_EQ(exported->dl_tensor.data, a.data());
  EXPECT_EQ(exported->dl_tensor.ndim, 2);
  EXPECT_EQ(exported->dl_tensor.dtype.code, kDLFloat);
  EXPECT_EQ(exported->dl_tensor.device.device_type, kDLCUDA);
  const Array back = from_dlpack(exported);
  EXPECT_EQ(back.data(), a.data());
  a = Array();  // the imported array keeps the memory alive on its own
  EXPECT_EQ(back.to_vector<float>(), values);

  // A view keeps its strides.
  const Array t = back.transpose();
  DLManagedTensor* view = to_dlpack(t);
  EXPECT_EQ(view->dl_tensor.strides[0], 1);
  EXPECT_EQ(view->dl_tensor.strides[1], 64);
  const Array again = from_dlpack(view);
  const auto got = again.to_vector<float>();
  for (int i = 0; i < 64; ++i) {
    for (int j = 0; j < 64; ++j) ASSERT_EQ(got[i * 64 + j], values[j * 64 + i]);
  }
}

TEST_F(DlpackGpu, RejectsWhatItCannotUseAndLeavesItWithTheCaller) {
  int deleted = 0;
  DLManagedTensor* tensor = make_foreign({1, 2, 3}, {3}, &deleted);
  tensor->dl_tensor.device.device_type = kDLOpenCL;
  test::expect_error(ErrorCode::InvalidArgument, [&] { from_dlpack(tensor); });
  tensor->dl_tensor.device.device_type = kDLCUDA;
  tensor->dl_tensor.dtype.lanes = 4;
  test::expect_error(ErrorCode::InvalidArgument, [&] { from_dlpack(tensor); });
  tensor->dl_tensor.dtype = DLDataType{kDLComplex, 128, 1};  // complex128
  test::expect_error(ErrorCode::InvalidArgument, [&] { from_dlpack(tensor); });
  tensor->dl_tensor.dtype = DLDataType{kDLFloat, 32, 1};
  tensor->dl_tensor.device.device_id = 1000;
  test::expect_error(ErrorCode::InvalidArgument, [&] { from_dlpack(tensor); });
  tensor->dl_tensor.device.device_id = 0;
  EXPECT_EQ(deleted, 0);
  tensor->deleter(tensor);
  EXPECT_EQ(deleted, 1);
  test::expect_error(ErrorCode::InvalidArgument, [] { from_dlpack(nullptr); });
}

}  // namespace
}  // namespace kreg
