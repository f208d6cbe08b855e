// Arrays on the host side: construction, checks, views, and reading values that have not
// left the host. Needs no GPU.
#include "test_support.hpp"

#include "array/dtype_info.hpp"

#include <cmath>
#include <complex>
#include <limits>
#include <numeric>

namespace kreg {
namespace {

using test::expect_error;

TEST(Array, FromDataKeepsShapeStridesAndValues) {
  std::vector<float> values(24);
  std::iota(values.begin(), values.end(), 0.0F);
  const Array a = Array::from_data(values, {2, 3, 4});
  EXPECT_EQ(a.shape(), (Shape{2, 3, 4}));
  EXPECT_EQ(a.strides(), (Shape{12, 4, 1}));
  EXPECT_EQ(a.dtype(), Dtype::Float32);
  EXPECT_EQ(a.size(), 24);
  EXPECT_EQ(a.ndim(), 3);
  EXPECT_EQ(a.nbytes(), 96U);
  EXPECT_TRUE(a.is_row_contiguous());
  EXPECT_FALSE(a.is_evaluated());
  EXPECT_EQ(a.to_vector<float>(), values);
}

TEST(Array, ZeroDimensionalAndEmpty) {
  const Array scalar = Array::from_data<double>({2.5}, {});
  EXPECT_EQ(scalar.ndim(), 0);
  EXPECT_EQ(scalar.size(), 1);
  EXPECT_EQ(scalar.to_vector<double>(), std::vector<double>{2.5});
  const Array none = Array::from_data<int>({}, {0, 3});
  EXPECT_EQ(none.size(), 0);
  EXPECT_TRUE(none.to_vector<int>().empty());
}

TEST(Array, EveryDtypeRoundTripsThroughTheHost) {
  EXPECT_EQ(Array::from_data<bool>({true, false, true}, {3}).to_vector<bool>(),
            (std::vector<bool>{true, false, true}));
  EXPECT_EQ(Array::from_data<std::int8_t>({-1, 2}, {2}).dtype(), Dtype::Int8);
  EXPECT_EQ(Array::from_data<std::uint16_t>({1, 2}, {2}).dtype(), Dtype::UInt16);
  EXPECT_EQ(Array::from_data<std::int64_t>({1, 2}, {2}).dtype(), Dtype::Int64);
  EXPECT_EQ(Array::from_data<std::uint64_t>({1, 2}, {2}).dtype(), Dtype::UInt64);
  const auto h = Array::from_data<half>({half(1.5F), half(-2.0F)}, {2}).to_vector<half>();
  EXPECT_EQ(float(h[0]), 1.5F);
  EXPECT_EQ(float(h[1]), -2.0F);
  const auto b = Array::from_data<bfloat16>({bfloat16(3.0F)}, {1}).to_vector<bfloat16>();
  EXPECT_EQ(float(b[0]), 3.0F);
  const auto z = Array::from_data<std::complex<float>>({{1.0F, -2.0F}}, {1});
  EXPECT_EQ(z.dtype(), Dtype::Complex64);
  EXPECT_EQ(z.to_vector<std::complex<float>>()[0], std::complex<float>(1.0F, -2.0F));
  EXPECT_EQ(size_of(Dtype::Complex64), 8U);
  EXPECT_STREQ(to_string(Dtype::Complex64), "complex64");
  for (int d = 0; d <= static_cast<int>(Dtype::Complex64); ++d) {
    EXPECT_GT(size_of(static_cast<Dtype>(d)), 0U);
    EXPECT_STRNE(to_string(static_cast<Dtype>(d)), "unknown");
  }
}

template <class T>
void expect_described(const char* name, const char* cuda) {
  const array::DtypeInfo& info = array::dtype_info(detail::dtype_of<T>::value);
  EXPECT_STREQ(info.name, name);
  EXPECT_EQ(info.size, sizeof(T)) << name;
  EXPECT_STREQ(info.cuda, cuda);
}

// One row a dtype, in Dtype's order: the table's row for a host type is that type's.
TEST(Dtype, TheTableDescribesEachDtypeByItsHostType) {
  expect_described<bool>("bool", "bool");
  expect_described<std::int8_t>("int8", "int8_t");
  expect_described<std::int16_t>("int16", "int16_t");
  expect_described<std::int32_t>("int32", "int32_t");
  expect_described<std::int64_t>("int64", "int64_t");
  expect_described<std::uint8_t>("uint8", "uint8_t");
  expect_described<std::uint16_t>("uint16", "uint16_t");
  expect_described<std::uint32_t>("uint32", "uint32_t");
  expect_described<std::uint64_t>("uint64", "uint64_t");
  expect_described<half>("float16", "kreg::half");
  expect_described<bfloat16>("bfloat16", "kreg::bfloat16");
  expect_described<float>("float32", "float");
  expect_described<double>("float64", "double");
  expect_described<std::complex<float>>("complex64", "complex64_t");
  EXPECT_STREQ(to_string(static_cast<Dtype>(99)), "unknown");
  EXPECT_EQ(size_of(static_cast<Dtype>(99)), 0U);
}

template <class T>
T written(double value, Dtype dtype) {
  T out{};
  write_element(value, dtype, &out);
  return out;
}

TEST(Dtype, WriteElementRoundsTruncatesAndSaturates) {
  EXPECT_EQ(written<std::int8_t>(-2.7, Dtype::Int8), -2);
  EXPECT_EQ(written<std::int8_t>(300.0, Dtype::Int8), 127);
  EXPECT_EQ(written<std::int8_t>(-1e9, Dtype::Int8), -128);
  EXPECT_EQ(written<std::uint8_t>(-5.0, Dtype::UInt8), 0);
  EXPECT_EQ(written<std::uint16_t>(70000.0, Dtype::UInt16), 65535);
  EXPECT_EQ(written<std::int32_t>(std::nan(""), Dtype::Int32), 0);
  EXPECT_EQ(written<std::int64_t>(-1e30, Dtype::Int64), std::numeric_limits<std::int64_t>::min());
  EXPECT_EQ(written<std::uint32_t>(4e9, Dtype::UInt32), 4000000000U);
  EXPECT_EQ(written<std::uint8_t>(0.25, Dtype::Bool), 1);
  EXPECT_EQ(written<std::uint8_t>(0.0, Dtype::Bool), 0);
  EXPECT_EQ(written<float>(0.1, Dtype::Float32), 0.1F);
  EXPECT_EQ(written<double>(0.1, Dtype::Float64), 0.1);
  EXPECT_EQ(float(written<half>(1.0 / 3, Dtype::Float16)), float(half(1.0F / 3)));
  EXPECT_EQ(float(written<bfloat16>(-3.5, Dtype::BFloat16)), -3.5F);
  EXPECT_EQ((written<std::complex<float>>(2.5, Dtype::Complex64)), std::complex<float>(2.5F, 0));
}

TEST(Array, BadConstruction) {
  expect_error(ErrorCode::InvalidArgument, [] { Array::from_data<float>({1, 2, 3}, {2, 2}); });
  expect_error(ErrorCode::InvalidArgument, [] { Array::from_data<float>({}, {-1}); });
  expect_error(ErrorCode::InvalidArgument, [] {
    Array::empty({1, 1, 1, 1, 1, 1, 1, 1, 1}, Dtype::Float32);
  });
  expect_error(ErrorCode::InvalidArgument, [] { Array().shape(); });
  expect_error(ErrorCode::InvalidArgument, [] { eval({Array()}); });
}

TEST(Array, ToVectorChecksTheDtype) {
  const Array a = Array::from_data<float>({1, 2}, {2});
  const std::string m =
      test::expect_error(ErrorCode::InvalidArgument, [&] { a.to_vector<double>(); });
  EXPECT_TRUE(test::contains(m, "float32")) << m;
  EXPECT_TRUE(test::contains(m, "float64")) << m;
  expect_error(ErrorCode::InvalidArgument, [&] { a.to_vector<int>(); });
}

TEST(Array, TransposeIsAStridedView) {
  // 2 x 3: [[0 1 2] [3 4 5]]
  const Array a = Array::from_data<int>({0, 1, 2, 3, 4, 5}, {2, 3});
  const Array t = a.transpose();
  EXPECT_EQ(t.shape(), (Shape{3, 2}));
  EXPECT_EQ(t.strides(), (Shape{1, 3}));
  EXPECT_FALSE(t.is_row_contiguous());
  EXPECT_EQ(t.to_vector<int>(), (std::vector<int>{0, 3, 1, 4, 2, 5}));
  EXPECT_EQ(t.transpose().to_vector<int>(), a.to_vector<int>());
  const Array p = Array::from_data<int>(std::vector<int>(24, 0), {2, 3, 4}).transpose({1, 2, 0});
  EXPECT_EQ(p.shape(), (Shape{3, 4, 2}));
  expect_error(ErrorCode::InvalidArgument, [&] { a.transpose({0, 0}); });
  expect_error(ErrorCode::InvalidArgument, [&] { a.transpose({0}); });
}

TEST(Array, SliceSelectsWithStartStopAndStep) {
  std::vector<int> values(20);
  std::iota(values.begin(), values.end(), 0);
  const Array a = Array::from_data(values, {4, 5});
  const Array s = a.slice(1, 1, 5, 2);  // columns 1 and 3
  EXPECT_EQ(s.shape(), (Shape{4, 2}));
  EXPECT_EQ(s.to_vector<int>(), (std::vector<int>{1, 3, 6, 8, 11, 13, 16, 18}));
  const Array rows = a.slice(0, -2, 100);  // the last two rows
  EXPECT_EQ(rows.to_vector<int>(), (std::vector<int>{10, 11, 12, 13, 14, 15, 16, 17, 18, 19}));
  EXPECT_TRUE(rows.is_row_contiguous());
  // A view of a view.
  EXPECT_EQ(s.transpose().slice(0, 1, 2).to_vector<int>(), (std::vector<int>{3, 8, 13, 18}));
  EXPECT_EQ(a.slice(1, 3, 1).size(), 0);
  expect_error(ErrorCode::InvalidArgument, [&] { a.slice(2, 0, 1); });
  expect_error(ErrorCode::InvalidArgument, [&] { a.slice(0, 0, 1, 0); });
}

TEST(Array, ReshapeOfARowContiguousArrayIsAView) {
  std::vector<int> values(24);
  std::iota(values.begin(), values.end(), 0);
  const Array a = Array::from_data(values, {4, 6});
  const Array r = a.reshape({2, 3, 4});
  EXPECT_EQ(r.shape(), (Shape{2, 3, 4}));
  EXPECT_EQ(r.strides(), (Shape{12, 4, 1}));
  EXPECT_EQ(r.to_vector<int>(), values);
  // The last two rows, a view with an offset, as 12 elements.
  EXPECT_EQ(a.slice(0, 2, 4).reshape({12}).to_vector<int>(),
            std::vector<int>(values.begin() + 12, values.end()));
  EXPECT_EQ(Array::from_data<int>({7}, {1}).reshape({}).ndim(), 0);
  std::string m = expect_error(ErrorCode::InvalidArgument, [&] { a.reshape({5, 5}); });
  EXPECT_NE(m.find("24 elements cannot take a shape of 25"), std::string::npos) << m;
  expect_error(ErrorCode::InvalidArgument, [&] { a.reshape({-4, -6}); });
}

TEST(Array, EvaluationNeedsAGpu) {
  if (test::gpu_unavailable_reason().empty()) GTEST_SKIP() << "this machine has a GPU";
  const Array a = Array::from_data<float>({1, 2}, {2});
  expect_error(ErrorCode::NoDevice, [&] { a.eval(); });
  EXPECT_FALSE(a.is_evaluated());
  expect_error(ErrorCode::NoDevice, [] { Array::empty({4}, Dtype::Float32).to_vector<float>(); });
}

}  // namespace
}  // namespace kreg
