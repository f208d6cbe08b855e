// Constant specialization: every error, found before or by the compiler.
#include "test_support.hpp"

namespace kreg {
namespace {

using test::contains;
using test::expect_error;

const char* kSource = R"(#include <kreg/kernel.cuh>
KREG_CONSTANT(bool, use_bias, 200);
KREG_CONSTANT_DEFAULT(int, width, 300, 8);
extern "C" __global__ void spec(int* out) { out[0] = width + (use_bias ? 1 : 0); }
)";

class ConstantsTest : public ::testing::Test {
 protected:
  ConstantsTest() : reg(test::sm90_options()) { reg.register_source("spec", kSource); }
  Registry reg;
};

TEST_F(ConstantsTest, MissingRequiredConstantNamesIt) {
  std::string message = expect_error(ErrorCode::CompileError, [&] { reg.compile("spec"); });
  EXPECT_TRUE(contains(message, "'use_bias'")) << message;
  EXPECT_TRUE(contains(message, "200")) << message;
  message = expect_error(ErrorCode::CompileError, [&] {
    reg.compile("spec", {.ints = {{300, 4}}});
  });
  EXPECT_TRUE(contains(message, "'use_bias'")) << message;
}

TEST_F(ConstantsTest, WrongTypeNamesTheConstant) {
  std::string message = expect_error(ErrorCode::CompileError, [&] {
    reg.compile("spec", {.ints = {{200, 1}}});
  });
  EXPECT_TRUE(contains(message, "'use_bias'")) << message;
  EXPECT_TRUE(contains(message, "bool")) << message;
  message = expect_error(ErrorCode::CompileError, [&] {
    reg.compile("spec", {.bools = {{200, true}, {300, true}}});
  });
  EXPECT_TRUE(contains(message, "'width'")) << message;
}

TEST_F(ConstantsTest, UndeclaredIndexIsInvalidArgument) {
  std::string message = expect_error(ErrorCode::InvalidArgument, [&] {
    reg.compile("spec", {.bools = {{200, true}, {201, false}}});
  });
  EXPECT_TRUE(contains(message, "201")) << message;
  EXPECT_TRUE(contains(message, "'spec'")) << message;
}

TEST_F(ConstantsTest, RepeatedIndexIsInvalidArgument) {
  std::string message = expect_error(ErrorCode::InvalidArgument, [&] {
    reg.compile("spec", {.bools = {{200, true}, {200, false}}});
  });
  EXPECT_TRUE(contains(message, "200")) << message;
  expect_error(ErrorCode::InvalidArgument, [&] {
    reg.compile("spec", {.bools = {{200, true}}, .ints = {{200, 3}}});
  });
}

TEST_F(ConstantsTest, ValidSetsCompileAndKeysAreCanonical) {
  const Binary& a = reg.compile("spec", {.bools = {{200, true}}, .ints = {{300, 16}}});
  Constants same;
  same.ints.emplace_back(300, 16);
  same.bools.emplace_back(200, true);
  const Binary& b = reg.compile("spec", same);
  EXPECT_EQ(&a, &b);
  EXPECT_EQ(a.key(), "spec|200:b1|300:i16@sm_90");
  const Binary& defaulted = reg.compile("spec", {.bools = {{200, false}}});
  EXPECT_EQ(defaulted.key(), "spec|200:b0@sm_90");
  EXPECT_EQ(reg.stats().compiles, 2u);
  EXPECT_EQ(reg.stats().failures, 0u);
}

TEST_F(ConstantsTest, RegistryStaysUsableAfterErrors) {
  expect_error(ErrorCode::CompileError, [&] { reg.compile("spec"); });
  expect_error(ErrorCode::InvalidArgument, [&] { reg.compile("spec", {.ints = {{7, 1}}}); });
  expect_error(ErrorCode::KernelNotFound, [&] { reg.compile("nope"); });
  expect_error(ErrorCode::InvalidArgument, [&] { reg.compile(""); });
  EXPECT_GT(reg.compile("spec", {.bools = {{200, true}}}).size(), 0u);
}

TEST(ConstantsDevice, DeviceSideChecksCatchWhatTheHostCannotSee) {
  // The declaration sits in a macro, which the host does not read, so only the
  // static_asserts in <kreg/kernel.cuh> can report the missing constant.
  Registry reg(test::sm90_options());
  reg.register_source("hidden", R"(#include <kreg/kernel.cuh>
#define DECLARE_HIDDEN KREG_CONSTANT(int, hidden_value, 5)
DECLARE_HIDDEN;
extern "C" __global__ void hidden(int* p) { p[0] = hidden_value; }
)");
  std::string message = expect_error(ErrorCode::CompileError, [&] { reg.compile("hidden"); });
  EXPECT_TRUE(contains(message, "required constant 'hidden_value' (index 5) was not given"))
      << message;
}

TEST(ConstantsDevice, ConstantValuesReachTheKernel) {
  // A static_assert on the value proves the specialization, without a GPU.
  Registry reg(test::sm90_options());
  reg.register_source("check", R"(#include <kreg/kernel.cuh>
KREG_CONSTANT(int, expected, 1);
KREG_CONSTANT_DEFAULT(bool, flag, 2, true);
static_assert(expected == 42, "value did not arrive");
static_assert(!flag, "bool value did not arrive");
extern "C" __global__ void check() {}
)");
  EXPECT_GT(reg.compile("check", {.bools = {{2, false}}, .ints = {{1, 42}}}).size(), 0u);
  std::string message = expect_error(ErrorCode::CompileError, [&] {
    reg.compile("check", {.bools = {{2, false}}, .ints = {{1, 41}}});
  });
  EXPECT_TRUE(contains(message, "value did not arrive")) << message;
}

}  // namespace
}  // namespace kreg
