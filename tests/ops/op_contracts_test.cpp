// The contracts between the ops and the built-in kernels, checked without a GPU: the kernels'
// constants are declared at the contracts' indices, and a kernel whose parameters drift from
// its contract does not compile.
#include "ops/contract_sources.hpp"
#include "test_support.hpp"

#include <kreg/contracts/decode_attention.cuh>
#include <kreg/contracts/kv_append.cuh>
#include <kreg/contracts/layer_norm.cuh>
#include <kreg/contracts/matmul.cuh>
#include <kreg/contracts/moe.cuh>
#include <kreg/contracts/quantized.cuh>
#include <kreg/contracts/rms_norm.cuh>
#include <kreg/contracts/rope.cuh>

namespace kreg {
namespace {

using test::contains;
using test::edited;
using test::expect_error;

// The name a built-in source declares at `index`, or "" if none.
std::string constant_at(Registry& reg, const std::string& source, int index) {
  for (const ConstantInfo& c : reg.source_info(source).constants) {
    if (c.index == index) return c.name;
  }
  return {};
}

// Written apart from the kernels, so that a kernel which declared one of its constants at
// another constant's index (both bool: the compile would not notice) fails here by name.
TEST(OpContracts, BuiltinConstantsSitAtTheirContractIndices) {
  Registry reg(test::sm90_options());
  EXPECT_EQ(constant_at(reg, "rms_norm", contracts::rms_norm::kHasWeight), "has_weight");
  EXPECT_EQ(constant_at(reg, "rms_norm", contracts::rms_norm::kAddResidual), "add_residual");
  EXPECT_EQ(constant_at(reg, "layer_norm", contracts::layer_norm::kHasWeight), "has_weight");
  EXPECT_EQ(constant_at(reg, "layer_norm", contracts::layer_norm::kHasBias), "has_bias");
  EXPECT_EQ(constant_at(reg, "rope", contracts::rope::kNeox), "neox");
  EXPECT_EQ(constant_at(reg, "rope", contracts::rope::kHasPositions), "has_positions");
  namespace attention = contracts::decode_attention;
  EXPECT_EQ(constant_at(reg, "decode_attention", attention::kHeadDim), "head_dim");
  EXPECT_EQ(constant_at(reg, "decode_attention", attention::kGroup), "group_size");
  EXPECT_EQ(constant_at(reg, "decode_attention", attention::kSoftCap), "soft_capped");
  EXPECT_EQ(constant_at(reg, "decode_attention", attention::kWindow), "windowed");
  EXPECT_EQ(constant_at(reg, "kv_append", contracts::kv_append::kRope), "rotated");
  EXPECT_EQ(constant_at(reg, "kv_append", contracts::kv_append::kNeox), "neox");
  EXPECT_EQ(constant_at(reg, "kv_append", contracts::kv_append::kWideSlots), "wide_slots");
  namespace mm = contracts::matmul;
  for (const char* source : {"matmul", "matmul_skinny", "matmul_gemv", "matmul_stream"}) {
    EXPECT_EQ(constant_at(reg, source, mm::kBias), "has_bias") << source;
    EXPECT_EQ(constant_at(reg, source, mm::kFloatOut), "float_out") << source;
    EXPECT_EQ(constant_at(reg, source, mm::kEpilogue), "epilogue") << source;
  }
  EXPECT_EQ(constant_at(reg, "matmul", mm::kAMajorM), "a_major_m");
  EXPECT_EQ(constant_at(reg, "matmul", mm::kBMajorN), "b_major_n");
  EXPECT_EQ(constant_at(reg, "matmul", mm::kTileN), "tile_n");
  EXPECT_EQ(constant_at(reg, "matmul_skinny", mm::kSkinnyCols), "skinny_cols");
  EXPECT_EQ(constant_at(reg, "matmul_gemv", mm::kGemvWarps), "gemv_warps");
  EXPECT_EQ(constant_at(reg, "matmul_stream", mm::kStreamStages), "stream_stages");
  namespace qc = contracts::quantized;
  for (const char* source : {"quantize", "quantized_matmul"}) {
    EXPECT_EQ(constant_at(reg, source, qc::kBits), "bits") << source;
    EXPECT_EQ(constant_at(reg, source, qc::kGroup), "group") << source;
  }
  EXPECT_EQ(constant_at(reg, "quantized_matmul", qc::kCols), "block_cols");
  EXPECT_EQ(constant_at(reg, "quantized_matmul", qc::kLinearBias), "has_bias");
  EXPECT_EQ(constant_at(reg, "quantized_matmul", qc::kWideX), "wide_x");
  namespace moe = contracts::moe;
  EXPECT_EQ(constant_at(reg, "moe_matmul", moe::kGated), "gated");
  EXPECT_EQ(constant_at(reg, "moe_matmul", moe::kTileRows), "tile_rows");
  EXPECT_EQ(constant_at(reg, "moe_matmul", moe::kCols), "block_cols");
}

TEST(OpContracts, AnIndexNamedByAHeaderIsThatHeadersValue) {
  Registry reg(test::sm90_options());
  reg.register_source("named", R"(
#include <kreg/contracts/rms_norm.cuh>
#include <kreg/device/kernel.cuh>
KREG_CONSTANT(bool, flag, ::kreg::contracts::rms_norm::kAddResidual);
extern "C" __global__ void named(int* out) { *out = flag; }
)");
  const SourceInfo info = reg.source_info("named");
  ASSERT_EQ(info.constants.size(), 1U);
  EXPECT_EQ(info.constants[0].index, contracts::rms_norm::kAddResidual);
  EXPECT_NO_THROW(
      reg.compile("named", Constants{.bools = {{contracts::rms_norm::kAddResidual, true}}}));
}

TEST(OpContracts, AnIndexNamedByNoHeaderIsRefusedByName) {
  Registry reg(test::sm90_options());
  const std::string m = expect_error(ErrorCode::InvalidArgument, [&] {
    reg.register_source("unnamed", R"(
#include <kreg/device/kernel.cuh>
KREG_CONSTANT_DEFAULT(bool, flag, kreg::contracts::rms_norm::kNoSuchIndex, false);
extern "C" __global__ void unnamed(int* out) { *out = flag; }
)");
  });
  EXPECT_TRUE(contains(m, "kreg::contracts::rms_norm::kNoSuchIndex")) << m;
  EXPECT_TRUE(contains(m, "unnamed")) << m;
}

TEST(OpContracts, BuiltinsCompileAgainstTheirContracts) {
  Registry reg(test::sm90_options());
  for (const char* entry :
       {"rms_norm_bf16",    "layer_norm_f16",       "softmax_f32",        "rope_f32",
        "add_f16",          "scale_bf16",           "cast_f32_bf16",      "gelu_f32",
        "swiglu_f16",       "embedding_f16_i64",    "gemv_bf16",          "row_max_f16",
        "argmax_f32",       "transpose_2",          "kv_append_bf16",     "matmul_tma_bf16",
        "matmul_tile_f16",  "matmul_skinny_bf16",   "matmul_gemv_f16",    "quantize_f32",
        "dequantize_bf16",  "quantized_matmul_f16", "moe_route_f32",      "moe_dispatch",
        "moe_combine_bf16", "moe_matmul_f16",       "matmul_stream_bf16", "matmul_split_sum_f16"}) {
    EXPECT_NO_THROW(reg.compile(entry)) << entry;
  }
}

// A parameter of another type, even one of the same size, is a compile error that names the
// kernel and its contract.
TEST(OpContracts, AKernelWhoseParametersDriftDoesNotCompile) {
  Registry reg(test::sm90_options());
  const std::string original = test::builtin_source("rms_norm.cu");
  reg.register_source("rms_norm",
                      edited(original, "unsigned cols, float eps)", "int cols, float eps)"));
  std::string m = expect_error(ErrorCode::CompileError, [&] { reg.compile("rms_norm_f32"); });
  EXPECT_TRUE(contains(m,
                       "the parameters of rms_norm<T> differ from "
                       "kreg::contracts::rms_norm::RmsNorm<T>"))
      << m;
  EXPECT_TRUE(contains(m, "rms_norm_f32")) << m;

  reg.register_source("rms_norm", edited(original, "unsigned cols, float eps)",
                                         "unsigned cols, float eps, int extra)"));
  m = expect_error(ErrorCode::CompileError, [&] { reg.compile("rms_norm_f32"); });
  EXPECT_TRUE(contains(m, "differ from kreg::contracts::rms_norm::RmsNorm<T>")) << m;
}

// A kernel that declares a constant at an index of its own, not its contract's, is refused:
// at registration if it lists specializations by the contract's index, and otherwise for
// the constant set the op asks for.
TEST(OpContracts, AConstantAtAnotherIndexIsRefusedForTheOpsRequest) {
  Registry reg(test::sm90_options());
  const std::string moved =
      edited(test::builtin_source("rms_norm.cu"), "kreg::contracts::rms_norm::kHasWeight", "205");
  std::string m =
      expect_error(ErrorCode::InvalidArgument, [&] { reg.register_source("rms_norm", moved); });
  EXPECT_TRUE(contains(m, "constant index 200 is not declared")) << m;

  reg.register_source("rms_norm", test::without_specializations(moved));
  const Constants without_weight{.bools = {{contracts::rms_norm::kHasWeight, false}}};
  m = expect_error(ErrorCode::InvalidArgument,
                   [&] { reg.compile("rms_norm_f32", without_weight); });
  EXPECT_TRUE(contains(m, "constant index 200 is not declared")) << m;
  EXPECT_TRUE(contains(m, "rms_norm_f32")) << m;
}

}  // namespace
}  // namespace kreg
