// out = x w^T (+ bias) for decode (x of at most 16 rows) against a weight matrix w [n, k] in
// MLX's affine format (kreg/contracts/quantized.cuh), on mma.sync: bound by reading wq, its
// scales and its biases once.
//
// A block of 16 warps (or 8 or 4, kWarps) takes 32 (or 16) columns of out (rows of w), its
// warps splitting k in steps of 128 (4 bits) or 64 (8 bits), each lane reading 16 bytes of wq
// from four (or two) rows a step: 32 or 16 codes of one group. The codes become x's type in registers, as
// scale * q + bias rounded once, and feed the products as A (16 rows of w a product), with x
// as B (8 of its rows, or two products for up to 16), so that a product covers 256 weights.
// A step's loads are issued a step ahead of its products. A dot product does not care in
// which order k is summed, so a lane gives each pair of codes the k slots it finds convenient
// and takes x's elements in the same order.
// - 4 bits: `(word >> 4p) & 0x000f000f` holds codes p and p + 4 of a word in its two halves;
//   OR-ed into the exponent of 1024 (half) or 128 (bfloat16) it is that number plus the code,
//   exactly, so one fma takes the number away and one applies the scale and the bias. x's
//   elements p and p + 4 are paired to match by a byte permute.
// - 8 bits: each byte is moved into the mantissa of 2^23 (exact in float), scaled and biased
//   in float and rounded once; the pairs are neighbours, as x's are.
// Constants and parameters: kreg/contracts/quantized.cuh.
// kreg:entry quantized_matmul_f16=quantized_matmul<kreg::half>
// kreg:entry quantized_matmul_bf16=quantized_matmul<kreg::bfloat16>
// kreg:specialization 300:i8
// kreg:specialization 301:i128
// kreg:specialization 301:i32
// kreg:specialization 302:i16
// kreg:specialization 201:b1
// kreg:specialization 303:i4
// kreg:specialization 201:b1|303:i4
#include <kreg/contracts/quantized.cuh>
#include <kreg/device/kernel.cuh>
#include <kreg/device/load.cuh>
#include <kreg/device/matmul_epilogue.cuh>
#include <kreg/device/mma.cuh>

KREG_CONSTANT_DEFAULT(int, bits, kreg::contracts::quantized::kBits, 4);
KREG_CONSTANT_DEFAULT(int, group, kreg::contracts::quantized::kGroup, 64);
KREG_CONSTANT_DEFAULT(int, block_cols, kreg::contracts::quantized::kCols, 32);
KREG_CONSTANT_DEFAULT(bool, has_bias, kreg::contracts::quantized::kLinearBias, false);
KREG_CONSTANT_DEFAULT(bool, wide_x, kreg::contracts::quantized::kWideX, false);
KREG_CONSTANT_DEFAULT(int, block_warps, kreg::contracts::quantized::kWarps, 16);

static_assert(bits == 4 || bits == 8, "quantized_matmul: bits is 4 or 8");
static_assert(group == 32 || group == 64 || group == 128,
              "quantized_matmul: a group is 32, 64 or 128");
static_assert(block_cols == 16 || block_cols == 32,
              "quantized_matmul: a block takes 16 or 32 columns");
static_assert(block_warps == 4 || block_warps == 8 || block_warps == 16,
              "quantized_matmul: a block has 4, 8 or 16 warps");

namespace qmv {

namespace qc = kreg::contracts::quantized;

constexpr int kWarps = block_warps;
constexpr int kThreads = 32 * kWarps;
constexpr int kBlocksPerSm = 16 / kWarps;     // 16 warps a multiprocessor at up to 128 registers
constexpr int kRowsPerLane = block_cols / 8;  // rows of w a lane reads, 8 apart
constexpr int kTiles16 = block_cols / 16;     // 16-row A tiles of the products
constexpr int kXTiles = wide_x ? 2 : 1;       // 8-row B tiles: x's rows
constexpr int kPerLane = 128 / bits;          // codes in a lane's 16 bytes a row
constexpr int kChunk = 4 * kPerLane;          // of k, a warp's step
constexpr int kXLoads = kPerLane / 8;         // 16 bytes of x (a row) each, a step
constexpr int kPitch = block_cols + 1;

// The 32-bit pairs of the element type's constants.
template <class T>
struct Pairs;
template <>
struct Pairs<kreg::half> {
  static constexpr unsigned kOne = 0x3c003c00u;
  static constexpr unsigned kMagic = 0x64006400u;  // 1024
  static constexpr unsigned kMinusMagic = 0xe400e400u;
};
template <>
struct Pairs<kreg::bfloat16> {
  static constexpr unsigned kOne = 0x3f803f80u;
  static constexpr unsigned kMagic = 0x43004300u;  // 128
  static constexpr unsigned kMinusMagic = 0xc300c300u;
};

__device__ inline unsigned fma2(unsigned a, unsigned b, unsigned c, kreg::half /*type*/) {
  unsigned d;
  asm("fma.rn.f16x2 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
  return d;
}

__device__ inline unsigned fma2(unsigned a, unsigned b, unsigned c, kreg::bfloat16 /*type*/) {
  unsigned d;
  asm("fma.rn.bf16x2 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
  return d;
}

__device__ inline unsigned permute(unsigned lo, unsigned hi, unsigned selector) {
  unsigned r;
  asm("prmt.b32 %0, %1, %2, %3;" : "=r"(r) : "r"(lo), "r"(hi), "r"(selector));
  return r;
}

// (a & mask) | bits in one instruction.
__device__ inline unsigned and_or(unsigned a, unsigned mask, unsigned bits_in) {
  unsigned r;
  asm("lop3.b32 %0, %1, %2, %3, 0xea;" : "=r"(r) : "r"(a), "r"(mask), "r"(bits_in));
  return r;
}

// Codes p and p + 4 of a 4-bit word as a pair of T, scale * q + bias.
template <class T>
__device__ inline unsigned decode4(unsigned word, int p, unsigned scale2, unsigned bias2) {
  const unsigned biased = and_or(word >> (4 * p), 0x000f000fu, Pairs<T>::kMagic);
  const unsigned code = fma2(biased, Pairs<T>::kOne, Pairs<T>::kMinusMagic, T{});
  return fma2(code, scale2, bias2, T{});
}

// Byte `b` of a word as a float, exactly.
__device__ inline float byte_as_float(unsigned word, unsigned b) {
  // Bytes 0-3 come from `word`, 4-7 from 2^23's bits: [word.b, 0, 0, 0x4b].
  const unsigned bits_out = permute(word, 0x4b000000u, 0x7440u | b);
  return __uint_as_float(bits_out) - 8388608.0f;
}

__device__ inline unsigned word_of(const uint4& w, int i) {
  return i == 0 ? w.x : i == 1 ? w.y : i == 2 ? w.z : w.w;
}

template <class T>
__device__ inline unsigned bits_of(const T& v) {
  return *reinterpret_cast<const unsigned short*>(&v);
}

// The low half of a pair as a float.
template <class T>
__device__ inline float low_as_float(unsigned pair) {
  const auto half_bits = static_cast<unsigned short>(pair & 0xffffu);
  return static_cast<float>(*reinterpret_cast<const T*>(&half_bits));
}

}  // namespace qmv

template <typename T>
__global__ void __launch_bounds__(qmv::kThreads, qmv::kBlocksPerSm)
    quantized_matmul(const T* __restrict__ x, const unsigned* __restrict__ wq,
                     const T* __restrict__ scales, const T* __restrict__ biases,
                     const T* __restrict__ bias, T* __restrict__ out, int m, int n, int k,
                     long long x_row) {
  KREG_SIGNATURE(quantized_matmul<T>, kreg::contracts::quantized::QuantizedMatmul<T>);
  using namespace kreg;
  using namespace qmv;
  __shared__ float sums[kWarps][qc::kRows][kPitch];
  const int warp = static_cast<int>(threadIdx.x / 32);
  const int lane = static_cast<int>(threadIdx.x % 32);
  const int g = lane / 4;
  const int t = lane % 4;
  const int n0 = static_cast<int>(blockIdx.x) * block_cols;
  const long long words_per_row = static_cast<long long>(k) * bits / 32;
  const int groups_per_row = k / group;
  // This lane's rows of w: n0 + g + 8j, so rows j = 2u and 2u + 1 are the A rows g and g + 8
  // of the block's 16-row tile u; rows past n read row 0, and their results are never
  // stored. (The op keeps n * k / group below 2^31, so a row's first group fits an int.)
  const unsigned* wrow[kRowsPerLane];
  int group_row[kRowsPerLane];
#pragma unroll
  for (int j = 0; j < kRowsPerLane; ++j) {
    const int col = n0 + g + 8 * j;
    const int r = col < n ? col : 0;
    wrow[j] = wq + static_cast<long long>(r) * words_per_row;
    group_row[j] = r * groups_per_row;
  }
  // Its rows of x (the B columns): g, and g + 8 when m > 8; rows past m read row 0, and
  // their results are never stored either.
  const T* xrow[kXTiles];
#pragma unroll
  for (int v = 0; v < kXTiles; ++v) {
    xrow[v] = x + static_cast<long long>(g + 8 * v < m ? g + 8 * v : 0) * x_row;
  }
  const uint4 zero = make_uint4(0, 0, 0, 0);

  // A step's codes, scales, biases and x, fetched a step ahead of its products so that each
  // warp keeps two steps in flight (x is read by one warp of a block: it is rarely in L1).
  // Past k the codes and x are zero.
  constexpr bool kPrefetchX = kXTiles == 1;  // two tiles ahead would not fit in registers
  struct Fetched {
    uint4 w[kRowsPerLane];
    unsigned scale2[kRowsPerLane];
    unsigned bias2[kRowsPerLane];
    uint4 x[kXTiles][kXLoads];
  };
  const auto load_x = [&](uint4(&xs)[kXTiles][kXLoads], int at) {
    const bool inside = at < k;  // k is a multiple of the group: all of a lane's or none
#pragma unroll
    for (int v = 0; v < kXTiles; ++v) {
#pragma unroll
      for (int i = 0; i < kXLoads; ++i) {
        xs[v][i] = inside ? load_shared_by_blocks(xrow[v] + at + 8 * i) : zero;
      }
    }
  };
  const auto fetch = [&](Fetched& f, int at) {
    const bool inside = at < k;
    const int at_group = min(at / group, groups_per_row - 1);  // any finite scale past k
#pragma unroll
    for (int j = 0; j < kRowsPerLane; ++j) {
      f.w[j] = inside ? load_stream(wrow[j] + at / (32 / bits)) : zero;
      const unsigned s = bits_of(scales[group_row[j] + at_group]);
      const unsigned b = bits_of(biases[group_row[j] + at_group]);
      f.scale2[j] = s | (s << 16);
      f.bias2[j] = b | (b << 16);
    }
    if constexpr (kPrefetchX) load_x(f.x, at);
  };
  constexpr int kStride = kWarps * kChunk;

  float acc[kTiles16][kXTiles][4] = {};
  Fetched cur;
  fetch(cur, warp * kChunk + t * kPerLane);
  for (int kc = warp * kChunk; kc < k; kc += kStride) {
    const int at = kc + t * kPerLane;  // this lane's first k
    Fetched next;
    if (kc + kStride < k) fetch(next, at + kStride);
    uint4 x_now[kXTiles][kXLoads];
    if constexpr (!kPrefetchX) load_x(x_now, at);
    const uint4(*xs)[kXLoads] = kPrefetchX ? cur.x : x_now;
    const uint4* w = cur.w;
    const unsigned* scale2 = cur.scale2;
    const unsigned* bias2 = cur.bias2;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      if constexpr (bits == 4) {
        // Word i holds this lane's k at + 8i .. + 8i + 7: two steps of 16, codes p and p + 4
        // paired, x's elements p and p + 4 paired to match.
        unsigned xp[kXTiles][4];
#pragma unroll
        for (int v = 0; v < kXTiles; ++v) {
          const uint4 r = xs[v][i];
          xp[v][0] = permute(r.x, r.z, 0x5410u);
          xp[v][1] = permute(r.x, r.z, 0x7632u);
          xp[v][2] = permute(r.y, r.w, 0x5410u);
          xp[v][3] = permute(r.y, r.w, 0x7632u);
        }
#pragma unroll
        for (int u = 0; u < kTiles16; ++u) {
          const unsigned lo = word_of(w[2 * u], i);
          const unsigned hi = word_of(w[2 * u + 1], i);
#pragma unroll
          for (int s = 0; s < 2; ++s) {
            const unsigned af[4] = {decode4<T>(lo, 2 * s, scale2[2 * u], bias2[2 * u]),
                                    decode4<T>(hi, 2 * s, scale2[2 * u + 1], bias2[2 * u + 1]),
                                    decode4<T>(lo, 2 * s + 1, scale2[2 * u], bias2[2 * u]),
                                    decode4<T>(hi, 2 * s + 1, scale2[2 * u + 1], bias2[2 * u + 1])};
#pragma unroll
            for (int v = 0; v < kXTiles; ++v) {
              mma_16816(acc[u][v], af, xp[v][2 * s], xp[v][2 * s + 1], T{});
            }
          }
        }
      } else {
        // Word i holds k at + 4i .. + 4i + 3: one step of 16, neighbours paired on both sides.
#pragma unroll
        for (int u = 0; u < kTiles16; ++u) {
          unsigned af[4];
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            const unsigned word = word_of(w[2 * u + h], i);
            const float sf = low_as_float<T>(scale2[2 * u + h]);
            const float bf = low_as_float<T>(bias2[2 * u + h]);
            af[h] = pack2(fmaf(sf, byte_as_float(word, 0), bf),
                          fmaf(sf, byte_as_float(word, 1), bf), T{});
            af[h + 2] = pack2(fmaf(sf, byte_as_float(word, 2), bf),
                              fmaf(sf, byte_as_float(word, 3), bf), T{});
          }
#pragma unroll
          for (int v = 0; v < kXTiles; ++v) {
            const uint4 r = xs[v][i / 2];
            const unsigned b0 = i % 2 == 0 ? r.x : r.z;
            const unsigned b1 = i % 2 == 0 ? r.y : r.w;
            mma_16816(acc[u][v], af, b0, b1, T{});
          }
        }
      }
    }
    cur = next;
  }
  // acc[u][v] holds rows 16u + g and 16u + g + 8 of the block's columns, for x's rows
  // 8v + 2t and 8v + 2t + 1.
#pragma unroll
  for (int u = 0; u < kTiles16; ++u) {
#pragma unroll
    for (int v = 0; v < kXTiles; ++v) {
      sums[warp][8 * v + 2 * t][16 * u + g] = acc[u][v][0];
      sums[warp][8 * v + 2 * t + 1][16 * u + g] = acc[u][v][1];
      sums[warp][8 * v + 2 * t][16 * u + g + 8] = acc[u][v][2];
      sums[warp][8 * v + 2 * t + 1][16 * u + g + 8] = acc[u][v][3];
    }
  }
  __syncthreads();
  // A thread finishes two neighbouring columns of one row of x at a time.
  for (int p = static_cast<int>(threadIdx.x); p < kXTiles * 8 * block_cols / 2; p += kThreads) {
    const int row = p / (block_cols / 2);
    const int col = 2 * (p % (block_cols / 2));
    float x0 = 0.0f;
    float x1 = 0.0f;
#pragma unroll
    for (int v = 0; v < kWarps; ++v) {
      x0 += sums[v][row][col];
      x1 += sums[v][row][col + 1];
    }
    matmul::store_pair<T, T, 0, has_bias>(out, bias, nullptr, 0, m, n, row, n0 + col, x0, x1);
  }
}
