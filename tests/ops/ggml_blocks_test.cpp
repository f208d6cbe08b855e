// llama.cpp's block formats as <kreg/device/ggml.cuh> decodes them (the kernel's helpers, run
// on the host), against a decoder written the way llama.cpp's dequantize_row walks a block:
// Q4_K's 6-bit scales and mins byte by byte, its codes 64 weights at a time (the low nibbles
// of 32 bytes, then their high nibbles), Q8_0 as d * q. Needs no GPU.
#include <kreg/device/ggml.cuh>

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

namespace kreg {
namespace {

// The scale and min of sub-block j, from the 12 bytes as llama.cpp documents them.
ggml::ScaleMin scale_min_by_bytes(const std::uint8_t* q, int j) {
  if (j < 4) return {q[j] & 63, q[j + 4] & 63};
  return {(q[j + 4] & 0x0f) | ((q[j - 4] >> 6) << 4), (q[j + 4] >> 4) | ((q[j] >> 6) << 4)};
}

// The 256 weights of a Q4_K block in order, walking it as llama.cpp's dequantize_row does.
std::vector<float> q4_k_block(const std::uint8_t* block) {
  std::uint16_t d_bits = 0;
  std::uint16_t dmin_bits = 0;
  std::memcpy(&d_bits, block, 2);
  std::memcpy(&dmin_bits, block + 2, 2);
  const float d = static_cast<float>(half::from_bits(d_bits));
  const float dmin = static_cast<float>(half::from_bits(dmin_bits));
  const std::uint8_t* scales = block + 4;
  const std::uint8_t* q = block + 16;
  std::vector<float> out;
  for (int chunk = 0, is = 0; chunk < 4; ++chunk, is += 2, q += 32) {
    const ggml::ScaleMin a = scale_min_by_bytes(scales, is);
    const ggml::ScaleMin b = scale_min_by_bytes(scales, is + 1);
    const float d1 = d * static_cast<float>(a.scale);
    const float m1 = dmin * static_cast<float>(a.min);
    const float d2 = d * static_cast<float>(b.scale);
    const float m2 = dmin * static_cast<float>(b.min);
    for (int l = 0; l < 32; ++l) out.push_back(d1 * static_cast<float>(q[l] & 0x0f) - m1);
    for (int l = 0; l < 32; ++l) out.push_back(d2 * static_cast<float>(q[l] >> 4) - m2);
  }
  return out;
}

unsigned word(const std::uint8_t* p) {
  unsigned w = 0;
  std::memcpy(&w, p, 4);
  return w;
}

TEST(GgmlBlocks, Q4KScalesAndMinsFromTheirWords) {
  std::mt19937 rng(5);
  std::uint8_t s[12];
  for (int trial = 0; trial < 2000; ++trial) {
    for (std::uint8_t& b : s) b = static_cast<std::uint8_t>(rng());
    for (int j = 0; j < 8; ++j) {
      const ggml::ScaleMin got = ggml::q4_k_scale_min(word(s), word(s + 4), word(s + 8), j);
      const ggml::ScaleMin want = scale_min_by_bytes(s, j);
      ASSERT_EQ(got.scale, want.scale) << "sub-block " << j;
      ASSERT_EQ(got.min, want.min) << "sub-block " << j;
      ASSERT_LT(got.scale, 64);
      ASSERT_LT(got.min, 64);
    }
  }
  // By hand: sub-block 5 takes the low nibble of byte 9 and the top bits of byte 1 (scale),
  // the high nibble of byte 9 and the top bits of byte 5 (min).
  std::memset(s, 0, sizeof(s));
  s[1] = 0x80;  // scale's top bits 10
  s[5] = 0x40;  // min's top bits 01
  s[9] = 0x73;  // low 4 bits: scale 3, min 7
  const ggml::ScaleMin five = ggml::q4_k_scale_min(word(s), word(s + 4), word(s + 8), 5);
  EXPECT_EQ(five.scale, 0x23);
  EXPECT_EQ(five.min, 0x17);
  const ggml::ScaleMin one = ggml::q4_k_scale_min(word(s), word(s + 4), word(s + 8), 1);
  EXPECT_EQ(one.scale, 0);  // byte 1's low 6 bits
  EXPECT_EQ(one.min, 0);
}

// Sub-block j's weight l is the block's weight 32 j + l: the order the kernel reads x in.
TEST(GgmlBlocks, Q4KSubBlockJWeightLIsWeight32JPlusL) {
  std::mt19937 rng(6);
  std::vector<std::uint8_t> block(ggml::kQ4_KBytes);
  for (int trial = 0; trial < 200; ++trial) {
    for (std::uint8_t& b : block) b = static_cast<std::uint8_t>(rng());
    // Finite d and dmin: exponent bits below the top.
    block[1] &= 0x3b;
    block[3] &= 0x3b;
    const std::vector<float> walked = q4_k_block(block.data());
    std::uint16_t d_bits = 0;
    std::uint16_t dmin_bits = 0;
    std::memcpy(&d_bits, block.data(), 2);
    std::memcpy(&dmin_bits, block.data() + 2, 2);
    const float d = ggml::half_bits_to_float(d_bits);
    const float dmin = ggml::half_bits_to_float(dmin_bits);
    const std::uint8_t* s = block.data() + ggml::kQ4_KScalesAt;
    for (int j = 0; j < 8; ++j) {
      const ggml::ScaleMin sm = ggml::q4_k_scale_min(word(s), word(s + 4), word(s + 8), j);
      for (int l = 0; l < 32; ++l) {
        const int q = ggml::q4_k_code(block.data() + ggml::kQ4_KCodesAt, j, l);
        const float w = d * static_cast<float>(sm.scale) * static_cast<float>(q) -
                        dmin * static_cast<float>(sm.min);
        ASSERT_EQ(w, walked[static_cast<std::size_t>(32 * j + l)]) << j << ", " << l;
      }
    }
  }
}

TEST(GgmlBlocks, HalfBitsAndBlockSizes) {
  EXPECT_EQ(ggml::half_bits_to_float(0x3c00), 1.0F);
  EXPECT_EQ(ggml::half_bits_to_float(0xc000), -2.0F);
  EXPECT_EQ(ggml::half_bits_to_float(0x0001), 0x1p-24F);
  EXPECT_EQ(ggml::kQ8_0Bytes, 2 + ggml::kQ8_0Weights);
  EXPECT_EQ(ggml::kQ4_KBytes, 2 + 2 + 12 + ggml::kQ4_KWeights / 2);
}

}  // namespace
}  // namespace kreg
