// Everything CustomKernel checks before any GPU work, each an InvalidArgument naming what
// is wrong; and that nothing compiles before eval. Needs no GPU.
#include "test_support.hpp"

namespace kreg {
namespace {

using test::contains;
using test::expect_error;

const char* const kDouble = "uint i = thread_position_in_grid.x; out[i] = 2 * a[i];";

std::vector<Array> four() {
  return {Array::from_data<float>({1, 2, 3, 4}, {4})};
}
std::vector<OutputSpec> four_out() {
  return {OutputSpec{{4}, Dtype::Float32}};
}

TEST(CustomKernelChecks, NoOutputNames) {
  const std::string m =
      expect_error(ErrorCode::InvalidArgument, [] { CustomKernel("k", {"a"}, {}, kDouble); });
  EXPECT_TRUE(contains(m, "at least one output")) << m;
}

TEST(CustomKernelChecks, BodiesAndHeadersCannotCarryKregDirectives) {
  const std::string body = std::string(kDouble) + "\n  // kreg:options --time=/tmp/kreg_x.csv\n";
  std::string m =
      expect_error(ErrorCode::InvalidArgument, [&] { CustomKernel("k", {"a"}, {"out"}, body); });
  EXPECT_TRUE(contains(m, "body holds the kreg directive '// kreg:options --time=/tmp/kreg_x.csv'"))
      << m;
  CustomKernelOptions options;
  options.header = "// kreg:arch-specific\n";
  m = expect_error(ErrorCode::InvalidArgument,
                   [&] { CustomKernel("k", {"a"}, {"out"}, kDouble, options); });
  EXPECT_TRUE(contains(m, "header holds the kreg directive")) << m;
  // Prose after "kreg:" and a directive-like comment after code are not directives.
  EXPECT_NO_THROW(CustomKernel("k", {"a"}, {"out"}, std::string(kDouble) + "\n// kreg: why\n"));
  EXPECT_NO_THROW(
      CustomKernel("k", {"a"}, {"out"}, std::string(kDouble) + " // kreg:options -G\n"));
}

TEST(CustomKernelChecks, NamesMustBeIdentifiers) {
  for (const char* bad : {"1a", "a-b", "", "a b", "ä"}) {
    const std::string m = expect_error(ErrorCode::InvalidArgument,
                                       [&] { CustomKernel("k", {bad}, {"out"}, kDouble); });
    EXPECT_TRUE(contains(m, "not a C++ identifier")) << m;
  }
  expect_error(ErrorCode::InvalidArgument,
               [] { CustomKernel("my-kernel", {"a"}, {"out"}, kDouble); });
  expect_error(ErrorCode::InvalidArgument, [] { CustomKernel("k", {"a"}, {"float"}, kDouble); });
  expect_error(ErrorCode::InvalidArgument, [] { CustomKernel("k", {"__x"}, {"out"}, kDouble); });
  expect_error(ErrorCode::InvalidArgument,
               [] { CustomKernel("k", {"kreg_grid"}, {"out"}, kDouble); });
  expect_error(ErrorCode::InvalidArgument, [] { CustomKernel("k", {"uint"}, {"out"}, kDouble); });
}

TEST(CustomKernelChecks, NamesMustNotRepeat) {
  const std::string m = expect_error(ErrorCode::InvalidArgument, [] {
    CustomKernel("k", {"a", "a"}, {"out"}, kDouble);
  });
  EXPECT_TRUE(contains(m, "'a'")) << m;
  expect_error(ErrorCode::InvalidArgument, [] { CustomKernel("k", {"a"}, {"a"}, kDouble); });
  expect_error(ErrorCode::InvalidArgument, [] { CustomKernel("k", {"a"}, {"o", "o"}, kDouble); });
}

TEST(CustomKernelChecks, NamesMustNotClashWithGeneratedNames) {
  std::string m = expect_error(ErrorCode::InvalidArgument, [] {
    CustomKernel("k", {"a", "a_shape"}, {"out"}, kDouble);
  });
  EXPECT_TRUE(contains(m, "a_shape")) << m;
  expect_error(ErrorCode::InvalidArgument,
               [] { CustomKernel("k", {"a"}, {"a_strides"}, kDouble); });
  expect_error(ErrorCode::InvalidArgument, [] { CustomKernel("k", {"a"}, {"a_ndim"}, kDouble); });
  m = expect_error(ErrorCode::InvalidArgument,
                   [] { CustomKernel("k", {"thread_position_in_grid"}, {"out"}, kDouble); });
  EXPECT_TRUE(contains(m, "attribute")) << m;
}

TEST(CustomKernelChecks, TemplateArgumentNamesAreChecked) {
  CustomKernel kernel("k", {"a"}, {"out"}, kDouble);
  ApplyOptions options;
  options.template_args = {{"a", 1}};
  expect_error(ErrorCode::InvalidArgument,
               [&] { kernel.apply(four(), four_out(), {4}, {4}, options); });
  options.template_args = {{"N", 1}, {"N", 2}};
  expect_error(ErrorCode::InvalidArgument,
               [&] { kernel.apply(four(), four_out(), {4}, {4}, options); });
  options.template_args = {{"2x", 1}};
  expect_error(ErrorCode::InvalidArgument,
               [&] { kernel.apply(four(), four_out(), {4}, {4}, options); });
  options.template_args = {{"a_shape", true}};
  expect_error(ErrorCode::InvalidArgument,
               [&] { kernel.apply(four(), four_out(), {4}, {4}, options); });
}

TEST(CustomKernelChecks, CountsMustMatchConstruction) {
  CustomKernel kernel("k", {"a"}, {"out"}, kDouble);
  std::string m =
      expect_error(ErrorCode::InvalidArgument, [&] { kernel.apply({}, four_out(), {4}, {4}); });
  EXPECT_TRUE(contains(m, "0 inputs")) << m;
  m = expect_error(ErrorCode::InvalidArgument, [&] {
    kernel.apply(four(), {OutputSpec{{4}, Dtype::Float32}, OutputSpec{{4}, Dtype::Float32}}, {4},
                 {4});
  });
  EXPECT_TRUE(contains(m, "2 outputs")) << m;
  expect_error(ErrorCode::InvalidArgument, [&] { kernel.apply({Array()}, four_out(), {4}, {4}); });
}

TEST(CustomKernelChecks, ThreadgroupOverTheDeviceLimit) {
  CustomKernel kernel("k", {"a"}, {"out"}, kDouble);
  for (Dim3 group : {Dim3{1025}, Dim3{32, 33}, Dim3{1, 1, 65}, Dim3{2048, 1, 1}}) {
    const std::string m = expect_error(ErrorCode::InvalidArgument,
                                       [&] { kernel.apply(four(), four_out(), {4}, group); });
    EXPECT_TRUE(contains(m, "threadgroup")) << m;
  }
  expect_error(ErrorCode::InvalidArgument, [&] { kernel.apply(four(), four_out(), {4}, {0}); });
}

TEST(CustomKernelChecks, ZeroGrid) {
  CustomKernel kernel("k", {"a"}, {"out"}, kDouble);
  for (Dim3 grid : {Dim3{0}, Dim3{4, 0}, Dim3{4, 1, 0}}) {
    const std::string m = expect_error(ErrorCode::InvalidArgument,
                                       [&] { kernel.apply(four(), four_out(), grid, {4}); });
    EXPECT_TRUE(contains(m, "grid")) << m;
  }
}

TEST(CustomKernelChecks, GridWithTooManyThreadgroups) {
  CustomKernel kernel("k", {"a"}, {"out"}, kDouble);
  expect_error(ErrorCode::InvalidArgument, [&] {
    kernel.apply(four(), four_out(), {1, 70000, 1}, {1});
  });
}

TEST(CustomKernelChecks, OutputShapes) {
  CustomKernel kernel("k", {"a"}, {"out"}, kDouble);
  std::string m = expect_error(ErrorCode::InvalidArgument, [&] {
    kernel.apply(four(), {OutputSpec{{4, -1}, Dtype::Float32}}, {4}, {4});
  });
  EXPECT_TRUE(contains(m, "negative")) << m;
  EXPECT_TRUE(contains(m, "'out'")) << m;
  m = expect_error(ErrorCode::InvalidArgument, [&] {
    kernel.apply(four(), {OutputSpec{{1, 1, 1, 1, 1, 1, 1, 1, 1}, Dtype::Float32}}, {4}, {4});
  });
  EXPECT_TRUE(contains(m, "9 dimensions")) << m;
  // Eight are fine.
  EXPECT_NO_THROW(
      kernel.apply(four(), {OutputSpec{{1, 1, 1, 1, 1, 1, 1, 4}, Dtype::Float32}}, {4}, {4}));
}

TEST(CustomKernelChecks, AtomicOutputsNeedAtomicDtypes) {
  CustomKernelOptions options;
  options.atomic_outputs = true;
  CustomKernel kernel("k", {"a"}, {"out"}, "atomicAdd(&out[0], 1);", options);
  for (Dtype d : {Dtype::Float16, Dtype::BFloat16, Dtype::Bool, Dtype::Int8, Dtype::UInt16}) {
    const std::string m = expect_error(ErrorCode::InvalidArgument, [&] {
      kernel.apply(four(), {OutputSpec{{4}, d}}, {4}, {4});
    });
    EXPECT_TRUE(contains(m, "atomic")) << m;
  }
  for (Dtype d :
       {Dtype::Int32, Dtype::UInt32, Dtype::Int64, Dtype::UInt64, Dtype::Float32, Dtype::Float64}) {
    EXPECT_NO_THROW(kernel.apply(four(), {OutputSpec{{4}, d}}, {4}, {4})) << to_string(d);
  }
}

TEST(CustomKernelChecks, CpuScopeRefuses) {
  CustomKernel kernel("k", {"a"}, {"out"}, kDouble);
  auto inputs = four();
  DeviceScope cpu(Device::cpu());
  const std::string m =
      expect_error(ErrorCode::InvalidArgument, [&] { kernel.apply(inputs, four_out(), {4}, {4}); });
  EXPECT_TRUE(contains(m, "GPU")) << m;
}

TEST(CustomKernelChecks, ScopesNestAndRestore) {
  EXPECT_EQ(current_device(), Device::gpu(0));
  {
    DeviceScope cpu(Device::cpu());
    EXPECT_EQ(current_device(), Device::cpu());
    expect_error(ErrorCode::InvalidArgument, [] { current_stream(); });
    {
      DeviceScope gpu(Device::gpu(0));
      EXPECT_EQ(current_device(), Device::gpu(0));
      EXPECT_NO_THROW(current_stream());
    }
    EXPECT_EQ(current_device(), Device::cpu());
  }
  EXPECT_EQ(current_device(), Device::gpu(0));
  expect_error(ErrorCode::InvalidArgument, [] { DeviceScope negative(Device::gpu(-1)); });
}

TEST(CustomKernelChecks, NothingCompilesBeforeEval) {
  // A body that cannot compile: apply accepts it; only eval may report it.
  CustomKernel kernel("broken", {"a"}, {"out"}, "this is not C++;");
  std::vector<Array> out;
  EXPECT_NO_THROW(out = kernel.apply(four(), four_out(), {4}, {4}));
  ASSERT_EQ(out.size(), 1U);
  EXPECT_FALSE(out[0].is_evaluated());
  EXPECT_EQ(out[0].shape(), (Shape{4}));
  EXPECT_EQ(device_registry().stats().compiles, 0U);
  EXPECT_EQ(device_registry().stats().failures, 0U);
}

TEST(CustomKernelChecks, OneNameDifferentBodiesGetDifferentKeys) {
  CustomKernel one("same", {"a"}, {"out"}, kDouble);
  CustomKernel two("same", {"a"}, {"out"},
                   "uint i = thread_position_in_grid.x; out[i] = 3 * a[i];");
  const std::string k1 = one.cache_key(four(), four_out());
  const std::string k2 = two.cache_key(four(), four_out());
  EXPECT_NE(k1, k2);
  EXPECT_TRUE(k1.starts_with("custom_same_")) << k1;
  // Same body: same key, from another object too.
  EXPECT_EQ(CustomKernel("same", {"a"}, {"out"}, kDouble).cache_key(four(), four_out()), k1);
  // Input kind and dtype are part of it.
  EXPECT_NE(one.cache_key({Array::from_data<float>(std::vector<float>(100), {100})}, four_out()),
            k1);
  EXPECT_NE(one.cache_key({Array::from_data<double>({1, 2, 3, 4}, {4})}, four_out()), k1);
  EXPECT_NE(one.cache_key({Array::from_data<float>({1}, {})}, four_out()), k1);
  // So are template arguments.
  ApplyOptions options;
  options.template_args = {{"N", 3}};
  EXPECT_NE(one.cache_key(four(), four_out(), options), k1);
}

TEST(CustomKernelChecks, VerbosePrintsTheSourceAtApply) {
  CustomKernel kernel("loud", {"a"}, {"out"}, kDouble);
  ApplyOptions options;
  options.verbose = true;
  ::testing::internal::CaptureStdout();
  kernel.apply(four(), four_out(), {4}, {4}, options);
  const std::string printed = ::testing::internal::GetCapturedStdout();
  EXPECT_TRUE(contains(printed, "__global__ void kreg_custom_loud(")) << printed;
  EXPECT_TRUE(contains(printed, kDouble)) << printed;
}

// The former name stays until callers have moved: it is the very same registry.
TEST(CustomKernel, TheDeprecatedRegistryNameIsTheDeviceRegistry) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  EXPECT_EQ(&custom_kernel_registry(0), &device_registry(0));
#pragma GCC diagnostic pop
  EXPECT_THROW(device_registry(-1), Error);
  EXPECT_THROW(device_registry(64), Error);
}

}  // namespace
}  // namespace kreg
