// The ops' argument checks, each an InvalidArgument at the call. Needs no GPU: ops are lazy.
#include "array/node.hpp"
#include "test_support.hpp"

#include <cmath>
#include <limits>

namespace kreg {
namespace {

using test::contains;
using test::expect_error;

Array f32(Shape shape) {
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  return Array::from_data(std::vector<float>(static_cast<std::size_t>(n), 1.0F), std::move(shape));
}

TEST(OpsChecks, ElementwiseShapesAndDtypes) {
  const Array a = f32({4, 8});
  EXPECT_NO_THROW(ops::add(a, f32({4, 8})));
  EXPECT_NO_THROW(ops::mul(a, f32({8})));  // a row, broadcast
  std::string m = expect_error(ErrorCode::InvalidArgument, [&] { ops::sub(a, f32({4})); });
  EXPECT_TRUE(contains(m, "[4]")) << m;
  expect_error(ErrorCode::InvalidArgument, [&] { ops::div(a, f32({1, 8})); });
  expect_error(ErrorCode::InvalidArgument, [&] { ops::add(a, f32({4, 8, 1})); });
  const Array ints = Array::from_data<int>({1, 2}, {2});
  m = expect_error(ErrorCode::InvalidArgument, [&] { ops::add(ints, ints); });
  EXPECT_TRUE(contains(m, "int32")) << m;
  const Array h = Array::from_data<half>(std::vector<half>(32, half(1.0F)), {4, 8});
  m = expect_error(ErrorCode::InvalidArgument, [&] { ops::add(a, h); });
  EXPECT_TRUE(contains(m, "float16")) << m;
  expect_error(ErrorCode::InvalidArgument, [&] { ops::add(Array(), a); });
  expect_error(ErrorCode::InvalidArgument, [&] { ops::scale(ints, 2.0F); });
  EXPECT_EQ(ops::add(a, a).shape(), a.shape());
  EXPECT_FALSE(ops::add(a, a).is_evaluated());
}

TEST(OpsChecks, Casts) {
  const Array a = f32({3});
  EXPECT_EQ(ops::cast(a, Dtype::BFloat16).dtype(), Dtype::BFloat16);
  EXPECT_EQ(array::ArrayAccess::node(ops::cast(a, Dtype::Float32)),
            array::ArrayAccess::node(a));  // same dtype: the array itself
  const Array h = ops::cast(a, Dtype::Float16);
  EXPECT_EQ(ops::cast(h, Dtype::Float32).dtype(), Dtype::Float32);
  expect_error(ErrorCode::InvalidArgument, [&] { ops::cast(h, Dtype::BFloat16); });
  expect_error(ErrorCode::InvalidArgument, [&] { ops::cast(a, Dtype::Int32); });
  expect_error(ErrorCode::InvalidArgument, [&] { ops::cast(a, Dtype::Float64); });
}

TEST(OpsChecks, RmsNorm) {
  const Array x = f32({4, 16});
  EXPECT_NO_THROW(ops::rms_norm(x, f32({16}), 1e-6F));
  EXPECT_NO_THROW(ops::rms_norm(x, std::nullopt, 1e-6F));
  std::string m =
      expect_error(ErrorCode::InvalidArgument, [&] { ops::rms_norm(x, f32({15}), 1e-6F); });
  EXPECT_TRUE(contains(m, "weight")) << m;
  expect_error(ErrorCode::InvalidArgument, [&] { ops::rms_norm(x, f32({1, 16}), 1e-6F); });
  expect_error(ErrorCode::InvalidArgument, [&] { ops::rms_norm(x, f32({16}), -1.0F); });
  expect_error(ErrorCode::InvalidArgument, [&] { ops::rms_norm(x, f32({16}), std::nanf("")); });
  expect_error(ErrorCode::InvalidArgument, [&] { ops::rms_norm(f32({}), std::nullopt, 1e-6F); });
  expect_error(ErrorCode::InvalidArgument, [&] {
    ops::rms_norm(f32({4, 0}), std::nullopt, 1e-6F);
  });
  m = expect_error(ErrorCode::InvalidArgument, [&] {
    ops::add_rms_norm(x, f32({4, 8}), std::nullopt, 1e-6F);
  });
  EXPECT_TRUE(contains(m, "residual")) << m;
  auto [normed, h] = ops::add_rms_norm(x, f32({4, 16}), f32({16}), 1e-6F);
  EXPECT_EQ(normed.shape(), x.shape());
  EXPECT_EQ(h.shape(), x.shape());
}

TEST(OpsChecks, CpuScopeRefuses) {
  const Array a = f32({4});
  DeviceScope cpu(Device::cpu());
  expect_error(ErrorCode::InvalidArgument, [&] { ops::add(a, a); });
}

}  // namespace
}  // namespace kreg

namespace kreg {
namespace {

TEST(OpsChecks, RowOpsEmbeddingAndGemv) {
  const Array x = f32({4, 16});
  EXPECT_NO_THROW(ops::softmax(x, 0.5F, f32({4, 16})));
  EXPECT_NO_THROW(ops::softmax(x, 0.5F, f32({16})));
  expect_error(ErrorCode::InvalidArgument, [&] { ops::softmax(x, 0.5F, f32({4})); });
  expect_error(ErrorCode::InvalidArgument,
               [&] { ops::softmax(x, std::numeric_limits<float>::infinity()); });
  expect_error(ErrorCode::InvalidArgument, [&] { ops::swiglu(x, f32({4, 8})); });
  EXPECT_EQ(ops::row_sum(x).shape(), (Shape{4}));
  EXPECT_EQ(ops::row_max(x).dtype(), Dtype::Float32);
  EXPECT_EQ(ops::argmax(x).dtype(), Dtype::Int64);
  EXPECT_EQ(ops::argmax(f32({2, 3, 5})).shape(), (Shape{2, 3}));
  const Array ids = Array::from_data<std::int32_t>({1, 2, 3, 0, 1, 2}, {2, 3});
  EXPECT_EQ(ops::embedding(x, ids).shape(), (Shape{2, 3, 16}));
  expect_error(ErrorCode::InvalidArgument, [&] { ops::embedding(x, f32({3})); });
  expect_error(ErrorCode::InvalidArgument, [&] { ops::embedding(f32({16}), ids); });
  EXPECT_EQ(ops::gemv(x, f32({16})).shape(), (Shape{4}));
  std::string m = expect_error(ErrorCode::InvalidArgument, [&] { ops::gemv(x, f32({15})); });
  EXPECT_TRUE(contains(m, "16")) << m;
  expect_error(ErrorCode::InvalidArgument, [&] { ops::gemv(f32({16}), f32({16})); });
}

}  // namespace
}  // namespace kreg

namespace kreg {
namespace {

TEST(OpsChecks, LayerNormTransposeAndRope) {
  const Array x = f32({4, 16});
  EXPECT_NO_THROW(ops::layer_norm(x, f32({16}), f32({16}), 1e-5F));
  EXPECT_NO_THROW(ops::layer_norm(x, std::nullopt, std::nullopt, 1e-5F));
  expect_error(ErrorCode::InvalidArgument, [&] { ops::layer_norm(x, f32({16}), f32({8}), 1e-5F); });
  expect_error(ErrorCode::InvalidArgument,
               [&] { ops::layer_norm(x, std::nullopt, std::nullopt, -1.0F); });
  EXPECT_EQ(ops::transpose(x).shape(), (Shape{16, 4}));
  expect_error(ErrorCode::InvalidArgument, [&] { ops::transpose(f32({2, 3, 4})); });
  EXPECT_EQ(ops::permute021(f32({2, 3, 4})).shape(), (Shape{2, 4, 3}));
  expect_error(ErrorCode::InvalidArgument, [&] { ops::permute021(x); });
  const Array q = f32({5, 2, 8});
  EXPECT_NO_THROW(ops::rope(q, 0));
  EXPECT_NO_THROW(
      ops::rope(q, Array::from_data<std::int32_t>({0, 1, 2, 3, 4}, {5}), 10000.0F, true));
  expect_error(ErrorCode::InvalidArgument, [&] { ops::rope(f32({5, 2, 7}), 0); });
  expect_error(ErrorCode::InvalidArgument, [&] { ops::rope(x, 0); });
  expect_error(ErrorCode::InvalidArgument, [&] {
    ops::rope(q, Array::from_data<std::int32_t>({0, 1}, {2}));
  });
  expect_error(ErrorCode::InvalidArgument, [&] { ops::rope(q, f32({5})); });
  expect_error(ErrorCode::InvalidArgument, [&] { ops::rope(q, 0, -1.0F); });
}

}  // namespace
}  // namespace kreg

namespace kreg {
namespace {

Array bf16(Shape shape) {
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  return Array::from_data(std::vector<bfloat16>(static_cast<std::size_t>(n), bfloat16(1.0F)),
                          std::move(shape));
}

Array i32(Shape shape) {
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  return Array::from_data(std::vector<std::int32_t>(static_cast<std::size_t>(n), 0),
                          std::move(shape));
}

TEST(OpsChecks, DecodeAttention) {
  const Array q = bf16({2, 8, 64});
  const Array cache = bf16({3, 16, 2, 64});
  const Array table = i32({2, 3});
  const Array lens = i32({2});
  const Array out = ops::decode_attention(q, cache, cache, table, lens);
  EXPECT_EQ(out.shape(), (Shape{2, 8, 64}));
  EXPECT_EQ(out.dtype(), Dtype::BFloat16);
  const auto refused = [](const std::function<void()>& call, const std::string& says) {
    const std::string m = expect_error(ErrorCode::InvalidArgument, call);
    EXPECT_TRUE(contains(m, "ops::decode_attention")) << m;
    EXPECT_TRUE(contains(m, says)) << m;
  };
  refused([&] { ops::decode_attention(f32({2, 8, 64}), cache, cache, table, lens); }, "float32");
  refused(
      [&] {
        ops::decode_attention(bf16({2, 8, 96}), bf16({3, 16, 2, 96}), bf16({3, 16, 2, 96}), table,
                              lens);
      },
      "96");
  refused([&] { ops::decode_attention(bf16({16, 64}), cache, cache, table, lens); }, "3-D");
  refused([&] { ops::decode_attention(q, bf16({3, 16, 2, 32}), cache, table, lens); }, "k_cache");
  refused([&] { ops::decode_attention(q, cache, bf16({4, 16, 2, 64}), table, lens); }, "differ");
  refused([&] { ops::decode_attention(bf16({2, 7, 64}), cache, cache, table, lens); }, "multiple");
  refused(
      [&] {
        ops::decode_attention(bf16({2, 34, 64}), bf16({3, 16, 2, 64}), cache, table, lens);
      },
      "16 times");
  refused([&] { ops::decode_attention(q, cache, cache, f32({2, 3}), lens); }, "block_table");
  refused([&] { ops::decode_attention(q, cache, cache, i32({3, 3}), lens); }, "block_table");
  refused([&] { ops::decode_attention(q, cache, cache, table, i32({3})); }, "seq_lens");
  ops::DecodeAttentionOptions options;
  options.soft_cap = -1.0F;
  refused([&] { ops::decode_attention(q, cache, cache, table, lens, options); }, "soft_cap");
  options = {};
  options.scale = std::numeric_limits<float>::quiet_NaN();
  refused([&] { ops::decode_attention(q, cache, cache, table, lens, options); }, "scale");
  for (const int splits : {-1, 257}) {
    options = {};
    options.splits = splits;
    refused([&] { ops::decode_attention(q, cache, cache, table, lens, options); }, "splits");
  }
  options = {};
  options.splits = 256;
  EXPECT_EQ(ops::decode_attention(q, cache, cache, table, lens, options).shape(),
            (Shape{2, 8, 64}));
}

TEST(OpsChecks, Attention) {
  const Array q = bf16({1, 8, 4, 64});
  const Array k = bf16({1, 8, 2, 64});
  Array out = ops::attention(q, k, k);
  EXPECT_EQ(out.shape(), (Shape{1, 8, 4, 64}));
  EXPECT_EQ(out.dtype(), Dtype::BFloat16);
  const Array cu = i32({2});
  out = ops::attention(bf16({8, 4, 64}), bf16({9, 2, 64}), bf16({9, 2, 64}), cu, cu);
  EXPECT_EQ(out.shape(), (Shape{8, 4, 64}));
  const auto refused = [](const std::function<void()>& call, const std::string& says) {
    const std::string m = expect_error(ErrorCode::InvalidArgument, call);
    EXPECT_TRUE(contains(m, "ops::attention")) << m;
    EXPECT_TRUE(contains(m, says)) << m;
  };
  refused([&] { ops::attention(f32({1, 8, 4, 64}), k, k); }, "float32");
  refused([&] { ops::attention(q, bf16({1, 8, 3, 64}), bf16({1, 8, 3, 64})); }, "multiple");
  refused(
      [&] {
        ops::attention(bf16({1, 8, 4, 96}), bf16({1, 8, 2, 96}), bf16({1, 8, 2, 96}));
      },
      "head_dim is 96");
  refused([&] { ops::attention(q, k, bf16({1, 9, 2, 64})); }, "differ in shape");
  refused([&] { ops::attention(q, bf16({1, 8, 2, 128}), bf16({1, 8, 2, 128})); }, "head_dim");
  refused([&] { ops::attention(q, bf16({2, 8, 2, 64}), bf16({2, 8, 2, 64})); }, "batch");
  refused([&] { ops::attention(bf16({8, 4, 64}), k, k); }, "4-D");
  ops::AttentionOptions options;
  options.mask = bf16({1, 1, 8, 9});
  refused([&] { ops::attention(q, k, k, options); }, "mask [1, 1, 8, 9] must be");
  options.mask = bf16({2, 1, 8, 8});
  refused([&] { ops::attention(q, k, k, options); }, "batch or 1");
  options.mask = f32({8, 8});
  refused([&] { ops::attention(q, k, k, options); }, "mask is float32");
  options = {};
  options.soft_cap = -1.0F;
  refused([&] { ops::attention(q, k, k, options); }, "soft_cap");
  options = {};
  options.scale = std::numeric_limits<float>::infinity();
  refused([&] { ops::attention(q, k, k, options); }, "scale");
  const Array q3 = bf16({8, 4, 64});
  const Array k3 = bf16({8, 2, 64});
  refused([&] { ops::attention(q3, k3, k3, cu, i32({3})); }, "differ in shape");
  refused([&] { ops::attention(q3, k3, k3, f32({2}), cu); }, "cu_seqlens_q must be int32");
  refused([&] { ops::attention(q3, k3, k3, cu, i32({2, 1})); }, "cu_seqlens_k must be int32");
}

TEST(OpsChecks, KvAppend) {
  const Array cache = bf16({4, 16, 2, 64});
  const Array rows = bf16({3, 2, 64});
  const Array slots = i32({3});
  const auto refused = [](const std::function<void()>& call, const std::string& says) {
    const std::string m = expect_error(ErrorCode::InvalidArgument, call);
    EXPECT_TRUE(contains(m, "ops::kv_append")) << m;
    EXPECT_TRUE(contains(m, says)) << m;
  };
  refused([&] { ops::kv_append(f32({4, 16, 2, 64}), cache, rows, rows, slots); }, "float32");
  refused([&] { ops::kv_append(bf16({4, 16, 128}), cache, rows, rows, slots); }, "4-D");
  refused(
      [&] {
        ops::kv_append(cache, bf16({4, 8, 2, 64}), rows, rows, slots);
      },
      "v_cache must have k_cache's dtype and shape");
  refused(
      [&] {
        ops::kv_append(cache, cache.transpose({1, 0, 2, 3}), rows, rows, slots);
      },
      "v_cache must have");
  const Array wide = bf16({16, 4, 2, 64}).transpose({1, 0, 2, 3});  // [4, 16, 2, 64], strided
  refused([&] { ops::kv_append(wide, wide, rows, rows, slots); }, "row-major");
  refused(
      [&] {
        ops::kv_append(cache, cache, bf16({3, 1, 64}), rows, slots);
      },
      "k must be [tokens, 2, 64]");
  refused([&] { ops::kv_append(cache, cache, rows, bf16({2, 2, 64}), i32({2})); }, "tokens");
  refused(
      [&] {
        ops::kv_append(cache, cache, rows, f32({3, 2, 64}), slots);
      },
      "v must have the caches' dtype");
  refused([&] { ops::kv_append(cache, cache, rows, rows, i32({4})); }, "slots must be");
  refused([&] { ops::kv_append(cache, cache, rows, rows, f32({3})); }, "slots must be");
  ops::KvAppendOptions options;
  options.rope_positions = i32({2});
  refused([&] { ops::kv_append(cache, cache, rows, rows, slots, options); }, "rope_positions");
  options.rope_positions = i32({3});
  options.rope_base = 0.0F;
  refused([&] { ops::kv_append(cache, cache, rows, rows, slots, options); }, "rope_base");
  options.rope_base = 10000.0F;
  refused(
      [&] {
        ops::kv_append(bf16({4, 16, 2, 5}), bf16({4, 16, 2, 5}), bf16({3, 2, 5}), bf16({3, 2, 5}),
                       slots, options);
      },
      "even");
}

TEST(OpsChecks, Matmul) {
  const Array a = bf16({4, 8});
  const Array b = bf16({8, 6});
  const auto refused = [](const std::function<void()>& call, const std::string& says) {
    const std::string m = expect_error(ErrorCode::InvalidArgument, call);
    EXPECT_TRUE(contains(m, "ops::matmul")) << m;
    EXPECT_TRUE(contains(m, says)) << m;
  };
  refused([&] { ops::matmul(f32({4, 8}), f32({8, 6})); }, "float32");
  refused([&] { ops::matmul(a, f32({8, 6})); }, "b is float32 but a is bfloat16");
  refused([&] { ops::matmul(bf16({8}), b); }, "at least 2-D");
  refused([&] { ops::matmul(a, bf16({2, 8, 6})); }, "2-D");
  refused([&] { ops::matmul(a, bf16({6, 8})); }, "do not chain");
  ops::MatmulOptions options;
  options.bias = bf16({8});
  refused([&] { ops::matmul(a, b, options); }, "bias must be 6 elements");
  options.bias.reset();
  options.epilogue = ops::Epilogue::Residual;
  refused([&] { ops::matmul(a, b, options); }, "needs other");
  options.other = bf16({4, 5});
  refused([&] { ops::matmul(a, b, options); }, "other must be [4, 6]");
  options.epilogue = ops::Epilogue::Gelu;
  options.other = bf16({4, 6});
  refused([&] { ops::matmul(a, b, options); }, "does not read it");
  options.other.reset();
  options.out_dtype = Dtype::Float16;
  refused([&] { ops::matmul(a, b, options); }, "out_dtype");
}

TEST(OpsChecks, Quantized) {
  const auto refused = [](const std::function<void()>& call, const std::string& op,
                          const std::string& says) {
    const std::string m = expect_error(ErrorCode::InvalidArgument, call);
    EXPECT_TRUE(contains(m, "ops::" + op)) << m;
    EXPECT_TRUE(contains(m, says)) << m;
  };
  refused([] { ops::quantize(bf16({4, 64}), 64, 3); }, "quantize", "bits must be 4 or 8");
  refused([] { ops::quantize(bf16({4, 64}), 16, 4); }, "quantize", "group_size must be 32");
  refused([] { ops::quantize(bf16({4, 96}), 64, 4); }, "quantize", "multiple of group_size");
  refused([] { ops::quantize(bf16({4, 2, 64}), 64, 4); }, "quantize", "2-D");
  const auto words = [](const Shape& shape) {
    std::int64_t n = 1;
    for (std::int64_t d : shape) n *= d;
    return Array::from_data(std::vector<std::uint32_t>(static_cast<std::size_t>(n)), shape);
  };
  // k = 128 in 4 bits: 16 words a row, 2 groups of 64.
  const ops::QuantizedWeight w{words({6, 16}), bf16({6, 2}), bf16({6, 2}), 64, 4};
  refused(
      [&] {
        ops::dequantize({bf16({6, 16}), w.scales, w.biases, 64, 4});
      },
      "dequantize", "2-D uint32");
  refused(
      [&] {
        ops::dequantize({w.weight, bf16({6, 4}), w.biases, 64, 4});
      },
      "dequantize", "scales and biases of [6, 2]");
  refused(
      [&] {
        ops::dequantize({w.weight, w.scales, f32({6, 2}), 64, 4});
      },
      "dequantize", "differ in dtype");
  refused([&] { ops::quantized_matmul(bf16({2, 64}), w); }, "quantized_matmul", "end in k = 128");
  refused([&] { ops::quantized_matmul(bf16({128}), w); }, "quantized_matmul", "at least 2-D");
  refused([&] { ops::quantized_matmul(f32({2, 128}), w); }, "quantized_matmul", "float32");
  refused(
      [&] {
        ops::quantized_matmul(Array::from_data(std::vector<half>(256), {2, 128}), w);
      },
      "quantized_matmul", "x is float16 but the weight's scales are bfloat16");
  refused(
      [&] {
        ops::quantized_matmul(bf16({2, 128}), w, bf16({5}));
      },
      "quantized_matmul", "bias must be 6 elements");
}

TEST(OpsChecks, Ggml) {
  const auto refused = [](const std::function<void()>& call, const std::string& says) {
    const std::string m = expect_error(ErrorCode::InvalidArgument, call);
    EXPECT_TRUE(contains(m, "ops::ggml")) << m;
    EXPECT_TRUE(contains(m, says)) << m;
  };
  const auto bytes = [](const Shape& shape) {
    std::int64_t n = 1;
    for (std::int64_t d : shape) n *= d;
    return Array::from_data(std::vector<std::uint8_t>(static_cast<std::size_t>(n)), shape);
  };
  using ops::GgmlFormat;
  EXPECT_EQ(ops::ggml_row_bytes(GgmlFormat::Q8_0, 4096), 4096 / 32 * 34);
  EXPECT_EQ(ops::ggml_row_bytes(GgmlFormat::Q4_K, 4096), 4096 / 256 * 144);
  refused([] { ops::ggml_row_bytes(GgmlFormat::Q4_K, 128); }, "positive multiple of 256");
  refused([] { ops::ggml_row_bytes(GgmlFormat::Q8_0, 0); }, "positive multiple of 32");
  refused([] { ops::ggml_row_bytes(static_cast<GgmlFormat>(7), 256); },
          "ggml_row_bytes: unknown GGML format");
  // 6 rows of k = 512: 16 Q8_0 blocks or 2 Q4_K blocks a row.
  const ops::GgmlWeight q8{bytes({6, std::int64_t{16} * 34}), GgmlFormat::Q8_0};
  const ops::GgmlWeight q4{bytes({6, std::int64_t{2} * 144}), GgmlFormat::Q4_K};
  EXPECT_EQ(ops::ggml_matmul(bf16({3, 512}), q8).shape(), (Shape{3, 6}));
  EXPECT_EQ(ops::ggml_matmul(bf16({2, 5, 512}), q4).shape(), (Shape{2, 5, 6}));
  EXPECT_EQ(ops::ggml_matmul(bf16({0, 512}), q4).shape(), (Shape{0, 6}));
  refused([&] { ops::ggml_matmul(bf16({3, 256}), q8); }, "end in k = 512");
  refused([&] { ops::ggml_matmul(bf16({512}), q8); }, "at least 2-D");
  refused([&] { ops::ggml_matmul(f32({3, 512}), q8); }, "float32");
  refused(
      [&] {
        ops::ggml_matmul(bf16({3, 512}), {bytes({6, std::int64_t{16} * 34 + 1}), GgmlFormat::Q8_0});
      },
      "whole blocks of 34 bytes");
  refused(
      [&] {
        ops::ggml_matmul(bf16({3, 512}), {bytes({6, 100}), GgmlFormat::Q4_K});
      },
      "whole blocks of 144 bytes");
  refused(
      [&] {
        ops::ggml_matmul(bf16({3, 512}), {bytes({6, 0}), GgmlFormat::Q4_K});
      },
      "whole blocks");
  refused(
      [&] {
        ops::ggml_matmul(bf16({3, 512}), {bytes({std::int64_t{6} * 288}), GgmlFormat::Q4_K});
      },
      "2-D uint8");
  refused(
      [&] {
        ops::ggml_matmul(bf16({3, 512}), {bf16({6, 288}), GgmlFormat::Q4_K});
      },
      "2-D uint8");
  refused([&] { ops::ggml_matmul(bf16({3, 512}), {Array(), GgmlFormat::Q4_K}); }, "empty");
  // A view that starts 8 bytes into its buffer: Q4_K's rows are read 16 bytes at a time.
  constexpr std::int64_t kAll = std::int64_t{6} * 288;
  const Array shifted = bytes({8 + kAll}).slice(0, 8, 8 + kAll).reshape({6, 288});
  ASSERT_TRUE(shifted.is_row_contiguous());
  refused(
      [&] {
        ops::ggml_matmul(bf16({3, 512}), {shifted, GgmlFormat::Q4_K});
      },
      "start on 16 bytes");
  refused(
      [&] {
        ops::ggml_matmul(bf16({3, 512}), {q8.blocks, static_cast<GgmlFormat>(7)});
      },
      "unknown GGML format");
}

TEST(OpsChecks, Moe) {
  const auto refused = [](const std::function<void()>& call, const std::string& op,
                          const std::string& says) {
    const std::string m = expect_error(ErrorCode::InvalidArgument, call);
    EXPECT_TRUE(contains(m, "ops::" + op)) << m;
    EXPECT_TRUE(contains(m, says)) << m;
  };
  const auto ints = [](const Shape& shape) {
    std::int64_t n = 1;
    for (std::int64_t d : shape) n *= d;
    return Array::from_data(std::vector<int>(static_cast<std::size_t>(n)), shape);
  };
  refused([] { ops::moe_route(f32({4, 8, 1}), 2); }, "moe_route", "2-D");
  refused([] { ops::moe_route(f32({4, 8}), 0); }, "moe_route", "top_k must be 1 to 8");
  refused([] { ops::moe_route(f32({4, 8}), 9); }, "moe_route", "top_k must be 1 to 8");
  refused([] { ops::moe_route(f32({4, 3}), 4); }, "moe_route", "at most the experts (3)");
  refused([] { ops::moe_route(f32({4, 1025}), 2); }, "moe_route", "1 to 1024 experts");
  refused([&] { ops::moe_route(ints({4, 8}), 2); }, "moe_route", "int32");
  EXPECT_EQ(ops::moe_route(bf16({5, 8}), 3).ids.shape(), (Shape{5, 3}));

  const ops::MoeExperts experts{bf16({4, 24, 16}), bf16({4, 24, 16}), bf16({4, 16, 24})};
  const Array x = bf16({5, 16});
  const Array weights = f32({5, 2});
  const Array ids = ints({5, 2});
  EXPECT_EQ(ops::moe_experts(x, weights, ids, experts).shape(), (Shape{5, 16}));
  EXPECT_EQ(ops::moe(x, bf16({5, 4}), experts, {2, true}).shape(), (Shape{5, 16}));
  refused([&] { ops::moe_experts(f32({5, 16}), weights, ids, experts); }, "moe_experts", "float32");
  refused(
      [&] {
        ops::moe_experts(bf16({5, 8}), weights, ids, experts);
      },
      "moe_experts", "gate must be [4, 24, 8] bfloat16");
  refused(
      [&] {
        ops::moe_experts(x, f32({4, 2}), ints({4, 2}), experts);
      },
      "moe_experts", "with x's 5 tokens");
  refused(
      [&] {
        ops::moe_experts(x, weights, f32({5, 2}), experts);
      },
      "moe_experts", "float32 and int32");
  refused(
      [&] {
        ops::moe_experts(x, f32({5, 9}), ints({5, 9}), experts);
      },
      "moe_experts", "top_k must be 1 to 8");
  refused(
      [&] {
        ops::moe_experts(x, weights, ids, {experts.gate, experts.up, bf16({4, 24, 16})});
      },
      "moe_experts", "down must be [4, 16, 24]");
  refused(
      [&] {
        ops::moe_experts(x, weights, ids,
                         {bf16({4, 20, 16}), bf16({4, 20, 16}), bf16({4, 16, 20})});
      },
      "moe_experts", "multiples of 8");
  refused([&] { ops::moe(x, bf16({4, 4}), experts); }, "moe", "agree in tokens");
  refused([&] { ops::moe(x, bf16({5, 6}), experts); }, "moe", "router_logits has 6 experts");
}

}  // namespace
}  // namespace kreg
