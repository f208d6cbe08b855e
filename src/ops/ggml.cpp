// ops::ggml_matmul: weights in llama.cpp's block formats, launched with kernels/ggml_matmul.cu.

#include <kreg/ops.hpp>

#include "ops/arguments.hpp"
#include "ops/kernel_call.hpp"

#include <kreg/contracts/ggml.cuh>

#include <limits>
#include <string>

namespace kreg::ops {
namespace {

namespace gc = contracts::ggml;
using Out = KernelCall::Output;

struct Format {
  const char* name;
  std::int64_t weights;  // a block's
  std::int64_t bytes;    // a block's
  std::int64_t align;    // where a row may start, in bytes
};

Format format_of(const std::string& op, GgmlFormat format) {
  switch (format) {
    case GgmlFormat::Q8_0: return {"Q8_0", 32, 34, 2};
    case GgmlFormat::Q4_K: return {"Q4_K", 256, 144, 16};
  }
  invalid(op, "unknown GGML format " + std::to_string(static_cast<int>(format)));
}

}  // namespace

std::int64_t ggml_row_bytes(GgmlFormat format, std::int64_t k) {
  const Format f = format_of("ggml_row_bytes", format);
  if (k <= 0 || k % f.weights != 0) {
    invalid("ggml_row_bytes", "k (" + std::to_string(k) + ") must be a positive multiple of " +
                                  std::to_string(f.weights) + " for " + f.name);
  }
  return k / f.weights * f.bytes;
}

Array ggml_matmul(const Array& x, const GgmlWeight& w) {
  const std::string op = "ggml_matmul";
  const Format f = format_of(op, w.format);
  const char* type = suffix(op, "x", x);
  if (x.dtype() == Dtype::Float32) invalid(op, "x is float32; float16 or bfloat16 are supported");
  if (!w.blocks.valid()) invalid(op, "the weight's blocks are an empty Array handle");
  if (w.blocks.dtype() != Dtype::UInt8 || w.blocks.ndim() != 2) {
    invalid(op, std::string("the weight's blocks must be 2-D uint8 ([n, bytes a row]), not ") +
                    to_string(w.blocks.dtype()) + " " + shape_text(w.blocks.shape()));
  }
  const std::int64_t n = w.blocks.shape()[0];
  const std::int64_t row_bytes = w.blocks.shape()[1];
  if (row_bytes == 0 || row_bytes % f.bytes != 0) {
    invalid(op, "a " + std::string(f.name) + " row is whole blocks of " + std::to_string(f.bytes) +
                    " bytes; the weight's rows have " + std::to_string(row_bytes));
  }
  const std::int64_t k = row_bytes / f.bytes * f.weights;
  if (x.ndim() < 2 || x.shape().back() != k) {
    invalid(op, "x " + shape_text(x.shape()) + " must be at least 2-D and end in k = " +
                    std::to_string(k) + ", the weight's (" + std::to_string(row_bytes) +
                    " bytes a row of " + f.name + ")");
  }
  if (!starts_on(w.blocks, f.align)) {
    invalid(op, "the weight's blocks must start on " + std::to_string(f.align) + " bytes for " +
                    f.name);
  }
  if (!starts_on(x, 8)) invalid(op, "x must start on 16 bytes");
  Shape out_shape = x.shape();
  out_shape.back() = n;
  std::int64_t m = 1;
  for (std::size_t i = 0; i + 1 < x.shape().size(); ++i) m *= x.shape()[i];
  constexpr auto kIntMax = std::numeric_limits<int>::max();
  // One row of x (a single token's decode) is read with a kernel of its own, lighter on
  // registers so that more of w is in flight.
  const bool wide = m > 1;
  const std::int64_t cols = std::int64_t{gc::kWarps} * (wide ? gc::kWideCols : 1);
  const std::int64_t rows = wide ? std::int64_t{gc::kWideRows} : 1;
  const std::int64_t col_blocks = (n + cols - 1) / cols;
  const std::int64_t row_blocks = (m + rows - 1) / rows;
  if (m > kIntMax || n > kIntMax || k > kIntMax || col_blocks > kIntMax || row_blocks > 65535) {
    invalid(op, "m, n and k must each be below 2^31, and m at most " +
                    std::to_string(65535 * gc::kWideRows));
  }
  Constants constants;
  if (w.format != GgmlFormat::Q8_0) constants.ints.emplace_back(gc::kFormat, 1);
  if (wide) constants.bools.emplace_back(gc::kWide, true);
  const bool empty = m == 0 || n == 0;
  auto call = std::make_shared<KernelCall>(
      std::string("ggml_matmul_") + type, constants,
      empty ? Dim3{0} : Dim3{static_cast<unsigned>(col_blocks), static_cast<unsigned>(row_blocks)},
      Dim3{32 * gc::kWarps});
  call->arguments<gc::GgmlMatmul<Element>>(
      x, w.blocks, Out{0}, static_cast<int>(m), static_cast<int>(n), static_cast<int>(k),
      static_cast<long long>(k), static_cast<long long>(row_bytes));
  return KernelCall::launch(call, {{out_shape, x.dtype()}})[0];
}

}  // namespace kreg::ops
