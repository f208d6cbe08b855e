// ops::matmul: dense products on tensor cores, launched with kernels/matmul.cu (the
// tensor-map kernel on sm_90, the tile kernel anywhere), kernels/matmul_stream.cu (decode of a
// few rows on sm_90), kernels/matmul_skinny.cu (decode elsewhere) and kernels/matmul_gemv.cu
// (decode of one row).

#include <kreg/ops.hpp>
#include <kreg/registry.hpp>
#include <kreg/stream.hpp>

#include "array/node.hpp"
#include "ops/arguments.hpp"
#include "ops/decode_blocks.hpp"
#include "ops/kernel_call.hpp"
#include "ops/wgmma_target.hpp"

#include <kreg/contracts/matmul.cuh>

#include <cmath>
#include <limits>
#include <string>

namespace kreg::ops {
namespace {

namespace c = contracts::matmul;
using Out = KernelCall::Output;

// How the kernel reads an operand: along its rows (the last index contiguous) or its columns,
// with the stride of the other index, in elements.
struct Operand {
  bool by_columns = false;  // element (i, j) at i + j * stride; else at i * stride + j
  std::int64_t stride = 0;
  bool as_is = false;    // read in place; else a row-major copy
  bool aligned = false;  // element (0, 0) and each line start on 16 bytes
};

// A 2-D operand [rows, cols] read in place when one of its strides is 1, else as a row-major
// copy. A line of one element is contiguous either way: rows win.
Operand layout_of(const Array& x, std::int64_t rows, std::int64_t cols) {
  const array::ArrayNode& node = *array::ArrayAccess::node(x);
  Operand o;
  if (x.ndim() == 2) {
    const std::int64_t s0 = node.strides[0];
    const std::int64_t s1 = node.strides[1];
    if (s1 == 1 || cols == 1) {
      o = {false, rows == 1 ? cols : s0, true, false};
    } else if (s0 == 1 || rows == 1) {
      o = {true, cols == 1 ? rows : s1, true, false};
    }
  }
  // A row-major copy starts a buffer of its own; a row-major array is read where it is.
  const std::int64_t offset = o.as_is || x.is_row_contiguous() ? node.offset : 0;
  if (!o.as_is) o = {false, cols, false, false};
  if (o.stride < (o.by_columns ? rows : cols)) o.stride = o.by_columns ? rows : cols;
  // Buffers kreg allocates start on 256 bytes.
  o.aligned = o.stride % 8 == 0 && offset % 8 == 0;
  return o;
}

int epilogue_of(Epilogue e) {
  switch (e) {
    case Epilogue::None: return c::kNone;
    case Epilogue::Gelu: return c::kGelu;
    case Epilogue::GeluTanh: return c::kGeluTanh;
    case Epilogue::Silu: return c::kSilu;
    case Epilogue::SiluGate: return c::kSiluGate;
    case Epilogue::Residual: return c::kResidual;
  }
  return -1;
}

}  // namespace

Array matmul(const Array& a, const Array& b, const MatmulOptions& options) {
  const std::string op = "matmul";
  const char* type = suffix(op, "a", a);
  suffix(op, "b", b);
  if (a.dtype() == Dtype::Float32) invalid(op, "a is float32; float16 or bfloat16 are supported");
  if (b.dtype() != a.dtype()) {
    invalid(op, std::string("b is ") + to_string(b.dtype()) + " but a is " + to_string(a.dtype()));
  }
  if (a.ndim() < 2)
    invalid(op, "a must be at least 2-D ([..., m, k]), not " + shape_text(a.shape()));
  if (b.ndim() != 2) invalid(op, "b must be 2-D ([k, n]), not " + shape_text(b.shape()));
  const std::int64_t k = a.shape().back();
  const std::int64_t n = b.shape()[1];
  if (b.shape()[0] != k) {
    invalid(op, "a " + shape_text(a.shape()) + " and b " + shape_text(b.shape()) +
                    " do not chain: a's last dimension must be b's first");
  }
  Shape out_shape = a.shape();
  out_shape.back() = n;
  std::int64_t m_rows = 1;  // a's rows, its leading dimensions together
  for (std::size_t i = 0; i + 1 < a.shape().size(); ++i) m_rows *= a.shape()[i];
  constexpr auto kIntMax = std::numeric_limits<int>::max();
  if (m_rows > kIntMax || n > kIntMax || k > kIntMax) {
    invalid(op, "m, n and k must each be at most 2^31-1");
  }
  const Dtype out_dtype = options.out_dtype.value_or(a.dtype());
  if (out_dtype != a.dtype() && out_dtype != Dtype::Float32) {
    invalid(op, std::string("out_dtype must be a's dtype or float32, not ") + to_string(out_dtype));
  }
  if (options.bias.has_value()) {
    if (!options.bias->valid() || options.bias->dtype() != a.dtype() ||
        options.bias->shape() != Shape{n}) {
      invalid(op, "bias must be " + std::to_string(n) + " elements of a's dtype");
    }
  }
  const int epilogue = epilogue_of(options.epilogue);
  if (epilogue < 0) invalid(op, "unknown epilogue");
  const bool reads_other = epilogue == c::kSiluGate || epilogue == c::kResidual;
  if (reads_other != options.other.has_value()) {
    invalid(op, reads_other ? "this epilogue needs other (the result's shape, in a's dtype)"
                            : "other is given but the epilogue does not read it");
  }
  if (reads_other && (!options.other->valid() || options.other->dtype() != a.dtype() ||
                      options.other->shape() != out_shape)) {
    invalid(op, "other must be " + shape_text(out_shape) + " in a's dtype");
  }
  const Stream stream = current_stream();  // refuses under a CPU scope
  if (m_rows == 0 || n == 0) {
    return KernelCall::launch(std::make_shared<KernelCall>(std::string("matmul_tile_") + type,
                                                           Constants{}, Dim3{0}, Dim3{1}),
                              {{out_shape, out_dtype}})[0];
  }

  const auto mi = static_cast<int>(m_rows);
  const auto ni = static_cast<int>(n);
  const auto ki = static_cast<int>(k);
  const Operand la = layout_of(a, m_rows, k);
  const Operand lb = layout_of(b, k, n);
  const bool b_by_k = lb.by_columns;  // element (p, j) at p + j * stride: [n, k] storage
  Constants constants;
  if (options.bias.has_value()) constants.bools.emplace_back(c::kBias, true);
  if (out_dtype == Dtype::Float32) constants.bools.emplace_back(c::kFloatOut, true);
  if (epilogue != c::kNone) constants.ints.emplace_back(c::kEpilogue, epilogue);
  const long long ld_other = n;
  const Array* bias = options.bias.has_value() ? &*options.bias : nullptr;
  const Array* other = options.other.has_value() ? &*options.other : nullptr;
  auto pointer = [](const Array& x, const Operand& o) {
    return o.as_is ? KernelCall::as_is(x) : KernelCall::Pointer(x);
  };
  const std::vector<std::pair<Shape, Dtype>> outputs = {{out_shape, out_dtype}};

  const auto u = [](std::int64_t v) { return static_cast<std::uint64_t>(v); };
  const bool decode = mi <= static_cast<int>(c::kSkinnyRows) && b_by_k && !la.by_columns &&
                      la.aligned && lb.aligned && k % 8 == 0 && k > 0;
  // Decode of a few rows on sm_90: the weight streamed through the copy engine, k cut into
  // ranges where its columns alone leave multiprocessors idle.
  if (decode && mi >= 2 && targets_wgmma(device_registry(stream.device()))) {
    const int ranges = stream_ranges(n, k);
    const auto col_blocks = static_cast<unsigned>((n + c::kStreamCols - 1) / c::kStreamCols);
    const std::string entry = std::string("matmul_stream_") + type;
    const Constants fixed = constants;  // the sum's: it has no ring
    constants = choose(device_registry(stream.device()),
                       {entry,
                        constants,
                        {knob(c::kStreamStages, 8, 8, {4, 6})},
                        "m" + std::to_string(bucket_size(m_rows)) + "_n" + std::to_string(n) +
                            "_k" + std::to_string(k)});
    const int stages = int_constant(constants, c::kStreamStages, 8);
    auto call = std::make_shared<KernelCall>(entry, constants,
                                             Dim3{col_blocks, static_cast<unsigned>(ranges)},
                                             Dim3{c::kStreamThreads});
    call->shared_bytes(stages == 4   ? c::kStreamSharedBytes<4>
                       : stages == 6 ? c::kStreamSharedBytes<6>
                                     : c::kStreamSharedBytes<8>);
    const KernelCall::TensorMapOf a_map{&a,           !la.as_is, u(k),          u(m_rows),
                                        u(la.stride), 64,        c::kSkinnyRows};
    const KernelCall::TensorMapOf b_map{&b,           !lb.as_is, u(k),          u(n),
                                        u(lb.stride), 64,        c::kStreamCols};
    if (ranges == 1) {
      call->arguments<c::MatmulStream<Element>>(a_map, b_map, bias, other, Out{0}, nullptr, mi, ni,
                                                ki, ld_other);
      return KernelCall::launch(call, outputs)[0];
    }
    call->arguments<c::MatmulStream<Element>>(a_map, b_map, nullptr, nullptr, nullptr, Out{1}, mi,
                                              ni, ki, ld_other);
    const std::int64_t pairs = m_rows * ((n + 1) / 2);
    auto sum = std::make_shared<KernelCall>(
        std::string("matmul_split_sum_") + type, fixed,
        Dim3{static_cast<unsigned>((pairs + c::kSplitSumThreads - 1) / c::kSplitSumThreads)},
        Dim3{c::kSplitSumThreads});
    sum->arguments<c::MatmulSplitSum<Element>>(Out{1}, bias, other, Out{0}, mi, ni, ranges,
                                               ld_other);
    call->then(sum);
    return KernelCall::launch(
        call, {{out_shape, out_dtype}, {Shape{ranges, m_rows, n}, Dtype::Float32}})[0];
  }

  // Decode: few rows of a against b read once along k; one row (a single sequence) with whole
  // runs of B's rows a load.
  if (decode) {
    // The two decode kernels share their parameters; they differ in entry and blocks.
    std::string entry;
    Dim3 grid;
    Dim3 block;
    if (mi == 1) {
      entry = std::string("matmul_gemv_") + type;
      constants = choose(device_registry(stream.device()),
                         {entry,
                          constants,
                          {knob(c::kGemvWarps, 8, 8, {4, 16, 2})},
                          "m1_n" + std::to_string(n) + "_k" + std::to_string(k)});
      grid = Dim3{static_cast<unsigned>((n + c::kGemvCols - 1) / c::kGemvCols)};
      block = Dim3{32 * static_cast<unsigned>(int_constant(constants, c::kGemvWarps, 8))};
    } else {
      entry = std::string("matmul_skinny_") + type;
      const DecodeBlocks blocks =
          choose_decode_blocks(device_registry(stream.device()), decode_blocks(n), entry, constants,
                               c::kSkinnyCols, c::kSkinnyWarps, m_rows, n, k);
      grid = Dim3{blocks.count};
      block = Dim3{32U * blocks.warps};
    }
    auto call = std::make_shared<KernelCall>(entry, constants, grid, block);
    call->arguments<c::MatmulSkinny<Element>>(pointer(a, la), pointer(b, lb), bias, other, Out{0},
                                              mi, ni, ki, static_cast<long long>(la.stride),
                                              static_cast<long long>(lb.stride), ld_other);
    return KernelCall::launch(call, outputs)[0];
  }

  if (targets_wgmma(device_registry(stream.device())) && la.aligned && lb.aligned && k > 0) {
    // 256 columns a tile, unless that leaves most of the H200's 132 multiprocessors idle.
    const std::int64_t row_tiles = (m_rows + c::kTileM - 1) / c::kTileM;
    const int rule_n = n > 128 && row_tiles * ((n + 255) / 256) >= 132 ? 256 : 128;
    if (la.by_columns) constants.bools.emplace_back(c::kAMajorM, true);
    if (!b_by_k) constants.bools.emplace_back(c::kBMajorN, true);
    const std::string entry = std::string("matmul_tma_") + type;
    constants = choose(device_registry(stream.device()),
                       {entry,
                        constants,
                        {knob(c::kTileN, 256, rule_n, {256, 128})},
                        "m" + std::to_string(bucket_size(m_rows)) + "_n" + std::to_string(n) +
                            "_k" + std::to_string(k)});
    const int tile_n = int_constant(constants, c::kTileN, 256);
    const std::int64_t col_tiles = (n + tile_n - 1) / tile_n;
    if (row_tiles > kIntMax || col_tiles > 65535) invalid(op, "the product is too large");
    auto call = std::make_shared<KernelCall>(
        entry, constants, Dim3{static_cast<unsigned>(row_tiles), static_cast<unsigned>(col_tiles)},
        Dim3{c::kTmaThreads});
    call->shared_bytes(tile_n == 256 ? c::kTmaSharedBytes<256> : c::kTmaSharedBytes<128>);
    // Boxes of 64 along k (K-major) or of 64 x 64 (MN-major, one per 64 rows or columns).
    const KernelCall::TensorMapOf a_map =
        la.by_columns
            ? KernelCall::TensorMapOf{&a, !la.as_is, u(m_rows), u(k), u(la.stride), 64, 64}
            : KernelCall::TensorMapOf{&a, !la.as_is, u(k), u(m_rows), u(la.stride), 64, c::kTileM};
    const KernelCall::TensorMapOf b_map =
        b_by_k ? KernelCall::TensorMapOf{&b,
                                         !lb.as_is,
                                         u(k),
                                         u(n),
                                         u(lb.stride),
                                         64,
                                         static_cast<unsigned>(tile_n)}
               : KernelCall::TensorMapOf{&b, !lb.as_is, u(n), u(k), u(lb.stride), 64, 64};
    call->arguments<c::MatmulTma<Element>>(a_map, b_map, bias, other, Out{0}, mi, ni, ki, ld_other);
    return KernelCall::launch(call, outputs)[0];
  }

  // Any strides: element (i, p) of a at i * a_row + p * a_col, (p, j) of b at p * b_row + j *
  // b_col.
  const long long a_row = la.by_columns ? 1 : la.stride;
  const long long a_col = la.by_columns ? la.stride : 1;
  const long long b_row = lb.by_columns ? 1 : lb.stride;
  const long long b_col = lb.by_columns ? lb.stride : 1;
  const std::int64_t row_tiles = (m_rows + c::kTileRows - 1) / c::kTileRows;
  const std::int64_t col_tiles = (n + c::kTileCols - 1) / c::kTileCols;
  if (row_tiles > kIntMax || col_tiles > 65535) invalid(op, "the product is too large");
  auto call = std::make_shared<KernelCall>(
      std::string("matmul_tile_") + type, constants,
      Dim3{static_cast<unsigned>(row_tiles), static_cast<unsigned>(col_tiles)},
      Dim3{c::kTileThreads});
  call->arguments<c::MatmulTile<Element>>(pointer(a, la), pointer(b, lb), bias, other, Out{0}, mi,
                                          ni, ki, a_row, a_col, b_row, b_col, ld_other);
  return KernelCall::launch(call, outputs)[0];
}

}  // namespace kreg::ops
