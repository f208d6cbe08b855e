#pragma once
// How the decode kernels (matmul_skinny, quantized_matmul) cut n columns into blocks: each
// block takes 16 or 32 columns of out and splits k among its warps, and the weight is read
// once, so what matters is keeping every multiprocessor busy to the end.

#include "ops/tuned_choice.hpp"

#include <cmath>
#include <cstdint>
#include <string>

namespace kreg::ops {

struct DecodeBlocks {
  int cols = 32;   // columns of out a block
  int warps = 16;  // warps a block
  unsigned count = 0;
};

inline DecodeBlocks decode_blocks(std::int64_t n) {
  constexpr double kSms = 132.0;  // the H200's multiprocessors
  // Blocks of 16 warps run one a multiprocessor: 16 columns a block where 32 would leave the
  // last wave of blocks much emptier (4096 x 14336: 3.4 waves of 32, 6.8 of 16).
  const auto filled = [&](std::int64_t blocks) {
    const double waves = static_cast<double>(blocks) / kSms;
    return waves / std::ceil(waves);
  };
  DecodeBlocks b;
  b.cols = filled((n + 15) / 16) > filled((n + 31) / 32) + 0.05 ? 16 : 32;
  const std::int64_t count = (n + b.cols - 1) / b.cols;
  b.count = static_cast<unsigned>(count);
  // Blocks of 4 warps run four a multiprocessor, each warp taking a longer run of k, so one
  // block's loads cover another's start and reduction: faster once there are enough of them
  // to give every multiprocessor its 16 warps (measured at n = 14336, 448 blocks: 1.1-1.2x),
  // slower where 16-warp blocks are all the parallelism there is (n = 4096, 128 blocks: 0.5x).
  if (static_cast<double>(count) * 4 >= 0.8 * kSms * 16) b.warps = 4;
  return b;
}

// How many ranges of k the streaming kernel (matmul_stream, blocks of 64 columns, two a
// multiprocessor) cuts an n x k weight into: enough for two blocks a multiprocessor, each
// range at least 4 tiles of 64 along k. One range where the columns alone give a wave.
inline int stream_ranges(std::int64_t n, std::int64_t k) {
  constexpr std::int64_t kSlots = 2 * 132;  // two blocks on each of the H200's multiprocessors
  const std::int64_t col_blocks = (n + 63) / 64;
  const std::int64_t k_tiles = (k + 63) / 64;
  const std::int64_t most = k_tiles / 4 > 1 ? k_tiles / 4 : 1;
  const std::int64_t want = kSlots / col_blocks > 1 ? kSlots / col_blocks : 1;
  return static_cast<int>(want < most ? want : most);
}

// The quantized kernel's blocks: as the dense kernel's, but 32 columns whenever the blocks
// have 4 warps, as the dense kernel's 16 would leave its code reads too short (tuning both ways
// at n = 14336 on an H200: 1.26x faster with one row of x, 1.35x with 16 rows;
// docs/performance.md, "Tuning the built-in ops").
inline DecodeBlocks quantized_decode_blocks(std::int64_t n) {
  DecodeBlocks b = decode_blocks(n);
  if (b.warps == 4) {
    b.cols = 32;
    b.count = static_cast<unsigned>((n + 31) / 32);
  }
  return b;
}

// The blocks `kernel` (a decode kernel whose int constants `cols_index` and `warps_index`
// default to 32 columns and 16 warps) launches with for an m x n x k product: `rule`, or a
// tuned winner for the bucket (tuned_choice.hpp). Adds the chosen constants to `constants`.
inline DecodeBlocks choose_decode_blocks(Registry& registry, const DecodeBlocks& rule,
                                         std::string kernel, Constants& constants, int cols_index,
                                         int warps_index, std::int64_t m, std::int64_t n,
                                         std::int64_t k) {
  Choice choice{
      std::move(kernel),
      constants,
      {knob(cols_index, 32, rule.cols, {32, 16}), knob(warps_index, 16, rule.warps, {16, 8, 4})},
      "m" + std::to_string(bucket_size(m)) + "_n" + std::to_string(n) + "_k" + std::to_string(k)};
  constants = choose(registry, choice);
  DecodeBlocks b;
  b.cols = int_constant(constants, cols_index, 32);
  b.warps = int_constant(constants, warps_index, 16);
  b.count = static_cast<unsigned>((n + b.cols - 1) / b.cols);
  return b;
}

}  // namespace kreg::ops
