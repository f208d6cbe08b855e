#pragma once
/// \file
/// llama.cpp's (GGML's) block formats for weights, as GGUF files store them, and how a
/// weight is decoded from each, for host and device code. A row of k weights is a run of
/// blocks, the first block holding its first weights.
///
/// - Q8_0, 32 weights in 34 bytes: `d` (float16), then 32 int8 codes; weight l is d * q[l].
/// - Q4_K, 256 weights in 144 bytes: `d` and `dmin` (float16), 12 bytes of 6-bit scales and
///   mins for the block's eight sub-blocks of 32 weights, then 128 bytes of 4-bit codes. The
///   codes of sub-blocks 2c and 2c + 1 share bytes 32c to 32c + 31: the low nibbles are 2c's,
///   the high ones 2c + 1's. Weight l of sub-block j is d * scale_j * q - dmin * min_j.
///   Scales and mins 0 to 3 are the low 6 bits of bytes 0-3 and 4-7; 4 to 7 take their low 4
///   bits from bytes 8-11 (scale in the low nibble, min in the high one) and their top 2 bits
///   from the top bits of bytes 0-3 (scales) and 4-7 (mins).

#include <kreg/device/half.cuh>

namespace kreg::ggml {

inline constexpr int kQ8_0Weights = 32;
inline constexpr int kQ8_0Bytes = 34;
inline constexpr int kQ4_KWeights = 256;
inline constexpr int kQ4_KBytes = 144;
inline constexpr int kQ4_KScalesAt = 4;  // the 12 scale bytes, after d and dmin
inline constexpr int kQ4_KCodesAt = 16;  // the 128 code bytes

struct ScaleMin {
  int scale;
  int min;
};

/// Sub-block j's (0 to 7) 6-bit scale and min, from a Q4_K block's 12 scale bytes read as
/// three little-endian words.
KREG_HOST_DEVICE inline ScaleMin q4_k_scale_min(unsigned w0, unsigned w1, unsigned w2, int j) {
  const auto byte = [&](int i) -> int {
    const unsigned word = i < 4 ? w0 : i < 8 ? w1 : w2;
    return static_cast<int>((word >> (8 * (i % 4))) & 0xffu);
  };
  if (j < 4) return {byte(j) & 63, byte(j + 4) & 63};
  return {(byte(j + 4) & 0xf) | ((byte(j - 4) >> 6) << 4),
          (byte(j + 4) >> 4) | ((byte(j) >> 6) << 4)};
}

/// Code l (0 to 31) of sub-block j of a Q4_K block whose 128 code bytes start at `codes`.
KREG_HOST_DEVICE inline int q4_k_code(const unsigned char* codes, int j, int l) {
  return (codes[32 * (j / 2) + l] >> (4 * (j % 2))) & 0xf;
}

/// A float16 value from its bits, as a float.
KREG_HOST_DEVICE inline float half_bits_to_float(unsigned short bits) {
  return static_cast<float>(half::from_bits(bits));
}

}  // namespace kreg::ggml
