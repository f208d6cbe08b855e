// ops::quantize, ops::dequantize and ops::quantized_matmul: MLX's affine format, launched with
// kernels/quantize.cu and kernels/quantized_matmul.cu.

#include <kreg/ops.hpp>
#include <kreg/stream.hpp>

#include "ops/arguments.hpp"
#include "ops/decode_blocks.hpp"
#include "ops/kernel_call.hpp"

#include <kreg/contracts/quantized.cuh>

#include <cmath>
#include <limits>
#include <string>

namespace kreg::ops {
namespace {

namespace qc = contracts::quantized;
using Out = KernelCall::Output;

constexpr unsigned kBlock = 256;

void check_format(const std::string& op, int group_size, int bits) {
  if (bits != 4 && bits != 8) invalid(op, "bits must be 4 or 8, not " + std::to_string(bits));
  if (group_size != 32 && group_size != 64 && group_size != 128) {
    invalid(op, "group_size must be 32, 64 or 128, not " + std::to_string(group_size));
  }
}

Constants format_constants(int group_size, int bits) {
  Constants constants;
  if (bits != 4) constants.ints.emplace_back(qc::kBits, bits);
  if (group_size != 64) constants.ints.emplace_back(qc::kGroup, group_size);
  return constants;
}

unsigned blocks_for(std::int64_t threads) {
  const std::int64_t blocks = (threads + kBlock - 1) / kBlock;
  if (blocks > std::numeric_limits<int>::max()) invalid("quantize", "the matrix is too large");
  return static_cast<unsigned>(blocks);
}

// The weight's k, after checking that its three arrays agree with each other.
std::int64_t checked_k(const std::string& op, const QuantizedWeight& w) {
  check_format(op, w.group_size, w.bits);
  if (!w.weight.valid() || !w.scales.valid() || !w.biases.valid()) {
    invalid(op, "the weight, scales and biases must all be given");
  }
  if (w.weight.dtype() != Dtype::UInt32 || w.weight.ndim() != 2) {
    invalid(op, "the weight must be 2-D uint32 ([n, k * bits / 32]), not " +
                    std::string(to_string(w.weight.dtype())) + " " + shape_text(w.weight.shape()));
  }
  suffix(op, "the scales", w.scales);
  if (w.biases.dtype() != w.scales.dtype()) invalid(op, "the scales and biases differ in dtype");
  const std::int64_t n = w.weight.shape()[0];
  const std::int64_t k = w.weight.shape()[1] * (32 / w.bits);
  const Shape groups = {n, k / w.group_size};
  if (w.scales.shape() != groups || w.biases.shape() != groups) {
    invalid(op, "a weight of " + shape_text(w.weight.shape()) + " (k = " + std::to_string(k) +
                    ", groups of " + std::to_string(w.group_size) + ") has scales and biases of " +
                    shape_text(groups) + ", not " + shape_text(w.scales.shape()) + " and " +
                    shape_text(w.biases.shape()));
  }
  return k;
}

}  // namespace

QuantizedWeight quantize(const Array& w, int group_size, int bits) {
  const std::string op = "quantize";
  const char* type = suffix(op, "w", w);
  check_format(op, group_size, bits);
  if (w.ndim() != 2) invalid(op, "w must be 2-D ([n, k]), not " + shape_text(w.shape()));
  const std::int64_t n = w.shape()[0];
  const std::int64_t k = w.shape()[1];
  if (k % group_size != 0) {
    invalid(op, "k (" + std::to_string(k) + ") must be a multiple of group_size (" +
                    std::to_string(group_size) + ")");
  }
  const std::int64_t groups = n * (k / group_size);
  auto call = std::make_shared<KernelCall>(std::string("quantize_") + type,
                                           format_constants(group_size, bits),
                                           Dim3{blocks_for(groups)}, Dim3{kBlock});
  call->arguments<qc::Quantize<Element>>(w, Out{0}, Out{1}, Out{2}, static_cast<long long>(groups));
  const Shape group_shape = {n, k / group_size};
  std::vector<Array> out = KernelCall::launch(call, {{Shape{n, k * bits / 32}, Dtype::UInt32},
                                                     {group_shape, w.dtype()},
                                                     {group_shape, w.dtype()}});
  return QuantizedWeight{out[0], out[1], out[2], group_size, bits};
}

Array dequantize(const QuantizedWeight& w) {
  const std::string op = "dequantize";
  const std::int64_t k = checked_k(op, w);
  const char* type = suffix(op, "the scales", w.scales);
  const std::int64_t n = w.weight.shape()[0];
  const std::int64_t words = w.weight.size();
  auto call = std::make_shared<KernelCall>(std::string("dequantize_") + type,
                                           format_constants(w.group_size, w.bits),
                                           Dim3{blocks_for(words)}, Dim3{kBlock});
  call->arguments<qc::Dequantize<Element>>(w.weight, w.scales, w.biases, Out{0},
                                           static_cast<long long>(words));
  return KernelCall::launch(call, {{Shape{n, k}, w.scales.dtype()}})[0];
}

Array quantized_matmul(const Array& x, const QuantizedWeight& w, const std::optional<Array>& bias) {
  const std::string op = "quantized_matmul";
  const std::int64_t k = checked_k(op, w);
  const char* type = suffix(op, "x", x);
  if (x.dtype() == Dtype::Float32) invalid(op, "x is float32; float16 or bfloat16 are supported");
  if (w.scales.dtype() != x.dtype()) {
    invalid(op, std::string("x is ") + to_string(x.dtype()) + " but the weight's scales are " +
                    to_string(w.scales.dtype()));
  }
  if (x.ndim() < 2 || x.shape().back() != k) {
    invalid(op, "x " + shape_text(x.shape()) +
                    " must be at least 2-D and end in k = " + std::to_string(k) + ", the weight's");
  }
  const std::int64_t n = w.weight.shape()[0];
  if (bias.has_value() &&
      (!bias->valid() || bias->dtype() != x.dtype() || bias->shape() != Shape{n})) {
    invalid(op, "bias must be " + std::to_string(n) + " elements of x's dtype");
  }
  Shape out_shape = x.shape();
  out_shape.back() = n;
  std::int64_t m = 1;
  for (std::size_t i = 0; i + 1 < x.shape().size(); ++i) m *= x.shape()[i];
  constexpr auto kIntMax = std::numeric_limits<int>::max();
  if (m > kIntMax || n > kIntMax || k > kIntMax) invalid(op, "m, n and k must each be below 2^31");

  // Many rows are compute-bound: the decoded matrix costs a pass over memory next to them.
  // The decode kernel indexes the groups with ints, and reads a row of x and a group of w
  // even for the lanes that have none: empty products take matmul's path too.
  const bool groups_fit = n * (k / w.group_size) <= kIntMax;
  const bool empty = m == 0 || n == 0 || k == 0;
  if (empty || m > static_cast<std::int64_t>(qc::kRows) || !starts_on(x, 8) ||
      !starts_on(w.weight, 4) || !groups_fit) {
    const Array dense = dequantize(w);
    MatmulOptions options;
    options.bias = bias;
    return matmul(x, dense.transpose(), options);
  }

  Constants constants = format_constants(w.group_size, w.bits);
  if (bias.has_value()) constants.bools.emplace_back(qc::kLinearBias, true);
  if (m > 8) constants.bools.emplace_back(qc::kWideX, true);
  const std::string entry = std::string("quantized_matmul_") + type;
  const DecodeBlocks blocks =
      choose_decode_blocks(device_registry(current_stream().device()), quantized_decode_blocks(n),
                           entry, constants, qc::kCols, qc::kWarps, m, n, k);
  auto call =
      std::make_shared<KernelCall>(entry, constants, Dim3{blocks.count}, Dim3{32U * blocks.warps});
  const Array* bias_arg = bias.has_value() ? &*bias : nullptr;
  call->arguments<qc::QuantizedMatmul<Element>>(x, w.weight, w.scales, w.biases, bias_arg, Out{0},
                                                static_cast<int>(m), static_cast<int>(n),
                                                static_cast<int>(k), static_cast<long long>(k));
  return KernelCall::launch(call, {{out_shape, x.dtype()}})[0];
}

}  // namespace kreg::ops
