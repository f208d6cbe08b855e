// The launch side of the op contracts. Ops always reach the built-in kernels (by their
// kreg:: names), whose signatures KREG_SIGNATURE checks when they compile; the launch also
// checks the contract's parameter sizes against the loaded kernel. These tests give that
// check kernels whose parameters drifted from the contract, with their KREG_SIGNATURE line
// removed as a source written elsewhere would have none, and expect a kreg::Error naming the
// kernel, never a launch that reads its arguments wrong.
#include <kreg/contracts/rms_norm.cuh>

#include "ops/contract_sources.hpp"
#include "ops/kernel_call.hpp"
#include "test_support.hpp"

#include <regex>

namespace kreg {
namespace {

using test::contains;
using test::edited;
using test::expect_error;
using RmsNormContract = ops::Contract<contracts::rms_norm::RmsNorm<ops::Element>>;

class OpContractsGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    KREG_REQUIRE_GPU();
    original_ = test::builtin_source("rms_norm.cu");
  }

  // `text` registered as a user's source in a registry of its own, without the signature
  // check.
  Registry& unchecked(const std::string& text) {
    const std::regex check(R"(\n *KREG_SIGNATURE\([^\n]*\n)");
    const std::string source = std::regex_replace(text, check, "\n");
    EXPECT_EQ(source.find("KREG_SIGNATURE"), std::string::npos);
    registry_.register_source("drifted_rms_norm", source);
    return registry_;
  }

  // Launches `kernel` with the op's arguments (null pointers and no columns: nothing is
  // touched if the check lets it through) and the contract's sizes, as the op path does.
  static void launch_as_the_op(const Kernel& kernel) {
    const void* pointers[5] = {};
    unsigned cols = 0;
    float eps = 1e-6F;
    void* args[] = {&pointers[0], &pointers[1], &pointers[2], &pointers[3],
                    &pointers[4], &cols,        &eps};
    static_assert(std::size(args) == RmsNormContract::count);
    kernel.launch_checked(Dim3{1}, Dim3{32}, 0, StreamRef{}, args, RmsNormContract::sizes,
                          RmsNormContract::count);
    Stream::default_stream(0).synchronize();
  }

  Registry registry_;
  std::string original_;
};

TEST_F(OpContractsGpu, TheBuiltinRunsUnderItsContract) {
  const Array x = Array::from_data(std::vector<float>(64, 1.0F), {2, 32});
  const Array weight = Array::from_data(std::vector<float>(32, 2.0F), {32});
  const std::vector<float> out = ops::rms_norm(x, weight, 0.0F).to_vector<float>();
  ASSERT_EQ(out.size(), 64U);
  EXPECT_FLOAT_EQ(out[0], 2.0F);
  // And the launch check passes the built-in itself.
  EXPECT_NO_THROW(launch_as_the_op(registry_.get("kreg::rms_norm_f32")));
}

TEST_F(OpContractsGpu, AKernelWithAnExtraParameterIsRefused) {
  Registry& reg = unchecked(edited(original_, "unsigned cols, float eps)",
                                   "unsigned cols, float eps, unsigned long long extra)"));
  const std::string m =
      expect_error(ErrorCode::InvalidArgument, [&] { launch_as_the_op(reg.get("rms_norm_f32")); });
  EXPECT_TRUE(contains(m, "'rms_norm_f32'")) << m;
  EXPECT_TRUE(contains(m, "takes 8 parameters but 7 arguments were given")) << m;
}

TEST_F(OpContractsGpu, AKernelWithAWiderParameterIsRefused) {
  Registry& reg =
      unchecked(edited(original_, "unsigned cols, float eps)", "unsigned cols, double eps)"));
  const std::string m =
      expect_error(ErrorCode::InvalidArgument, [&] { launch_as_the_op(reg.get("rms_norm_f32")); });
  EXPECT_TRUE(contains(m, "'rms_norm_f32'")) << m;
  EXPECT_TRUE(contains(m, "parameter 6 is 8 bytes but the argument is 4 bytes")) << m;
}

TEST_F(OpContractsGpu, AConstantAtAnotherIndexIsRefused) {
  Registry& reg = unchecked(test::without_specializations(
      edited(original_, "kreg::contracts::rms_norm::kHasWeight", "205")));
  Constants constants;
  constants.bools.emplace_back(contracts::rms_norm::kHasWeight, false);
  const std::string m = expect_error(ErrorCode::InvalidArgument,
                                     [&] { launch_as_the_op(reg.get("rms_norm_f32", constants)); });
  EXPECT_TRUE(contains(m, "constant index 200 is not declared")) << m;
  EXPECT_TRUE(contains(m, "rms_norm_f32")) << m;
}

}  // namespace
}  // namespace kreg
