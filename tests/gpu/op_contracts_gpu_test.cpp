// An op launches its kernel only if the kernel takes the parameters of the op's contract: a
// source registered in the built-in's place with other parameters (and no KREG_SIGNATURE
// check of its own), or with a constant at another index, is a kreg::Error naming the kernel,
// never a launch that reads its arguments wrong.
#include "ops/contract_sources.hpp"
#include "test_support.hpp"

#include <regex>

namespace kreg {
namespace {

using test::contains;
using test::edited;
using test::expect_error;

class OpContractsGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    KREG_REQUIRE_GPU();
    original_ = test::builtin_source("rms_norm.cu");
  }
  // The ops' registry is shared by the whole test program: the built-in goes back.
  void TearDown() override {
    if (!original_.empty()) custom_kernel_registry(0).register_source("rms_norm", original_);
  }

  // Registers `text` as the ops' rms_norm source, without its signature check, as a source
  // written elsewhere would be.
  void replace_rms_norm(const std::string& text) {
    const std::regex check(R"(\n *KREG_SIGNATURE\([^\n]*\n)");
    const std::string unchecked = std::regex_replace(text, check, "\n");
    ASSERT_EQ(unchecked.find("KREG_SIGNATURE"), std::string::npos);
    custom_kernel_registry(0).register_source("rms_norm", unchecked);
  }

  static Array rows() { return Array::from_data(std::vector<float>(64, 1.0F), {2, 32}); }
  static Array weight() { return Array::from_data(std::vector<float>(32, 2.0F), {32}); }

  std::string original_;
};

TEST_F(OpContractsGpu, TheBuiltinRunsUnderItsContract) {
  const std::vector<float> out = ops::rms_norm(rows(), weight(), 0.0F).to_vector<float>();
  ASSERT_EQ(out.size(), 64U);
  EXPECT_FLOAT_EQ(out[0], 2.0F);
}

TEST_F(OpContractsGpu, AKernelWithAnExtraParameterIsRefused) {
  replace_rms_norm(edited(original_, "unsigned cols, float eps)",
                          "unsigned cols, float eps, unsigned long long extra)"));
  const std::string m = expect_error(ErrorCode::InvalidArgument, [&] {
    ops::rms_norm(rows(), weight(), 1e-6F).to_vector<float>();
  });
  EXPECT_TRUE(contains(m, "'rms_norm_f32'")) << m;
  EXPECT_TRUE(contains(m, "takes 8 parameters but 7 arguments were given")) << m;
}

TEST_F(OpContractsGpu, AKernelWithAWiderParameterIsRefused) {
  replace_rms_norm(edited(original_, "unsigned cols, float eps)", "unsigned cols, double eps)"));
  const std::string m = expect_error(ErrorCode::InvalidArgument, [&] {
    ops::rms_norm(rows(), weight(), 1e-6F).to_vector<float>();
  });
  EXPECT_TRUE(contains(m, "'rms_norm_f32'")) << m;
  EXPECT_TRUE(contains(m, "parameter 6 is 8 bytes but the argument is 4 bytes")) << m;
}

TEST_F(OpContractsGpu, AConstantAtAnotherIndexIsRefused) {
  replace_rms_norm(test::without_specializations(
      edited(original_, "kreg::contracts::rms_norm::kHasWeight", "205")));
  const std::string m = expect_error(ErrorCode::InvalidArgument, [&] {
    ops::rms_norm(rows(), std::nullopt, 1e-6F).to_vector<float>();
  });
  EXPECT_TRUE(contains(m, "constant index 200 is not declared")) << m;
  EXPECT_TRUE(contains(m, "rms_norm_f32")) << m;
}

}  // namespace
}  // namespace kreg
