// Attention for prefill (flash attention, forward): every query token of each sequence
// against that sequence's keys, on tensor cores: wgmma on sm_90a, mma.sync m16n8k16 elsewhere
// (sm_80 and newer) and at head dim 64.
//
//   q, out  [total_q, q_heads, head_dim]    k, v  [total_k, kv_heads, head_dim]
//
// A block takes 64 queries of one head (128 with kWarps 8), a warp 16 of them (a warpgroup
// 64). It walks the keys the rows can see in tiles: S = Q K^T into float accumulators, the
// scale, soft-cap and masks applied there, an online softmax in base 2, and P, rounded to the
// inputs' type, multiplied by V straight from the registers S was in. Q stays in registers;
// K and V tiles come into shared memory by asynchronous copies, V's while S is computed and
// the next K's while P V is.
// Constants and parameters: kreg/contracts/attention.cuh.
// kreg:entry attention_f16=attention<kreg::half>
// kreg:entry attention_bf16=attention<kreg::bfloat16>
// kreg:specialization 200:b1
// kreg:specialization 200:b1|300:i64
// kreg:specialization 200:b1|300:i256
// kreg:arch-specific
#include <kreg/contracts/attention.cuh>
#include <kreg/device/flash.cuh>
#include <kreg/device/kernel.cuh>
#include <kreg/device/mma.cuh>
#include <kreg/device/vec.cuh>
#include <kreg/device/wgmma.cuh>

// sm_90a: both products on wgmma; elsewhere (sm_80 and up) on mma.sync.
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define KREG_HAS_WGMMA true
#else
#define KREG_HAS_WGMMA false
#endif

KREG_CONSTANT_DEFAULT(int, head_dim, kreg::contracts::attention::kHeadDim, 128);
KREG_CONSTANT_DEFAULT(int, mask_kind, kreg::contracts::attention::kMask, 0);
KREG_CONSTANT_DEFAULT(bool, causal, kreg::contracts::attention::kCausal, false);
KREG_CONSTANT_DEFAULT(bool, soft_capped, kreg::contracts::attention::kSoftCap, false);
KREG_CONSTANT_DEFAULT(bool, windowed, kreg::contracts::attention::kWindow, false);
KREG_CONSTANT_DEFAULT(int, block_warps, kreg::contracts::attention::kWarps, 0);

static_assert(head_dim == 64 || head_dim == 128 || head_dim == 256,
              "attention: the head dimension must be 64, 128 or 256");
static_assert(mask_kind >= 0 && mask_kind <= 2, "attention: the mask kind is 0, 1 or 2");
static_assert(block_warps == 0 || block_warps == 4 || (block_warps == 8 && head_dim != 256),
              "attention: a block has 4 or 8 warps (4 at head dim 256)");

namespace flash {

using namespace kreg;
namespace c = kreg::contracts::attention;

constexpr int kWarps = block_warps > 0 ? block_warps : c::kBlockWarps<head_dim>;
constexpr int kThreads = 32 * kWarps;
constexpr int kRows = 16 * kWarps;
// Keys a tile: 64, or 32 at head dim 256, where the accumulators of O take the registers.
constexpr int kKeys = head_dim == 256 ? 32 : 64;
constexpr int kChunks = head_dim / 8;     // 16-byte chunks of a row
constexpr int kDimSteps = head_dim / 16;  // k-steps of Q K^T
constexpr int kKeyTiles = kKeys / 8;      // n-tiles of S
constexpr int kKeySteps = kKeys / 16;     // k-steps of P V
constexpr int kOutTiles = head_dim / 8;   // n-tiles of O
constexpr float kLog2e = 1.4426950408889634f;
// Both products on wgmma (sm_90a), or on mma.sync. Head dim 64 stays on mma.sync: its wgmma
// form (an m64n64 product with V as the transposed operand) gave wrong sums past the first
// key tile on the H200, which is not yet understood.
constexpr bool kWgmma = KREG_HAS_WGMMA && head_dim != 64;

// The element offset of a row's 16-byte chunk in a tile of Rows rows. A tile is kept in slabs
// of 64 columns (128 bytes a row), and each row's chunks are permuted by its low three bits:
// the 128-byte swizzle that wgmma reads, which also puts the eight rows one ldmatrix reads at
// a column in distinct banks.
template <int Rows>
__device__ inline int swizzle(int row, int chunk) {
  return (chunk >> 3) * (Rows * 64) + row * 64 + (((chunk & 7) ^ (row & 7)) << 3);
}
constexpr unsigned kRowBytes = 128;  // of a slab

// Rows [0, Rows) of one head of a [rows, heads, head_dim] tensor from `base` into a tile; the
// rows from `valid` on are zeros, so that they add nothing (their scores are hidden). A thread
// copies one chunk column of every (kThreads / kChunks)-th row, so that its addresses step by
// constants.
template <int Rows, class T>
__device__ inline void load_tile(T* tile, const T* base, unsigned long long row_stride, int valid,
                                 bool vector) {
  static_assert(kThreads % kChunks == 0 && Rows * kChunks % kThreads == 0, "whole passes");
  static_assert(kThreads / kChunks % 4 == 0, "a thread's rows have at most two swizzles");
  constexpr int kStep = kThreads / kChunks;
  const int chunk = static_cast<int>(threadIdx.x) % kChunks;
  const int first = static_cast<int>(threadIdx.x) / kChunks;
  const T* src = base + first * row_stride + chunk * 8;
  // Rows kStep apart have the same low three bits when kStep is a multiple of 8, and two
  // alternating ones when it is 4.
  const int even = swizzle<Rows>(first, chunk);
  const int odd = swizzle<Rows>(first + kStep, chunk) - kStep * 64;
#pragma unroll
  for (int j = 0; j < Rows / kStep; ++j) {
    const bool inside = first + j * kStep < valid;
    T* dst = tile + (j % 2 == 1 && kStep % 8 != 0 ? odd : even) + j * kStep * 64;
    if (vector) {
      copy_async16(shared_address(dst), src, inside);  // reads nothing outside
    } else {
#pragma unroll
      for (int e = 0; e < 8; ++e) dst[e] = inside ? src[e] : T(0.0f);
    }
    src += kStep * row_stride;
  }
  copy_async_commit();
}

// A sequence's rows, cut to the rows there are.
__device__ inline void span(const int* cu, unsigned b, int total, int& begin, int& length) {
  const int lo = cu[b];
  const int hi = cu[b + 1];
  begin = lo < 0 ? 0 : (lo > total ? total : lo);
  const int end = hi < begin ? begin : (hi > total ? total : hi);
  length = end - begin;
}

}  // namespace flash

template <typename T>
__global__ void __launch_bounds__(flash::kThreads)
    attention(const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v,
              const int* __restrict__ cu_q, const int* __restrict__ cu_k,
              const void* __restrict__ mask, T* __restrict__ out, unsigned batch, unsigned kv_heads,
              int total_q, int total_k, int fixed_q, int fixed_k, long long mask_batch,
              long long mask_head, long long mask_row, int mask_rows, int mask_cols, float scale,
              float soft_cap, int window_left) {
  KREG_SIGNATURE(attention<T>, kreg::contracts::attention::Attention<T>);
  using namespace kreg;
  using namespace flash;
  const unsigned head = blockIdx.y;
  const unsigned q_heads = gridDim.y;
  const unsigned kv_head = head / (q_heads / kv_heads);
  const int warp = static_cast<int>(threadIdx.x / 32);
  const int lane = static_cast<int>(threadIdx.x % 32);
  constexpr int kSecond = kRows > kKeys ? kRows : kKeys;
  __shared__ __align__(1024) uint4 smem[(kKeys + kSecond) * head_dim / 8];

  // The block's sequence and tile. A sequence's tiles are taken last first: with a causal
  // mask those see the most keys, and starting them first evens out the end of the grid.
  int seq = 0;
  int tile = 0;
  int q_begin = 0;
  int q_len = fixed_q;
  int k_begin = 0;
  int k_len = fixed_k;
  if (cu_q == nullptr) {
    const int tiles = (fixed_q + kRows - 1) / kRows;
    if (tiles == 0 || blockIdx.x / tiles >= batch) return;
    seq = static_cast<int>(blockIdx.x / tiles);
    tile = tiles - 1 - static_cast<int>(blockIdx.x % tiles);
    q_begin = seq * fixed_q;
    k_begin = seq * fixed_k;
  } else {
    // Warp 0 counts tiles over the sequences, 32 at a time with a prefix sum, until the
    // slot's sequence turns up. The answer passes through the tiles' memory (at head dim
    // 256 they take all of the 48 KiB).
    int* found = reinterpret_cast<int*>(smem);
    if (warp == 0) {
      const int slot = static_cast<int>(blockIdx.x);
      int before = 0;
      int which = -1;
      int local = 0;
      for (unsigned b0 = 0; b0 < batch; b0 += 32) {
        const unsigned b = b0 + lane;
        int tiles = 0;
        if (b < batch) {
          int begin;
          int length;
          span(cu_q, b, total_q, begin, length);
          tiles = (length + kRows - 1) / kRows;
        }
        int inclusive = tiles;
#pragma unroll
        for (int offset = 1; offset < 32; offset *= 2) {
          const int up = __shfl_up_sync(0xffffffffu, inclusive, offset);
          if (lane >= offset) inclusive += up;
        }
        const int first = before + inclusive - tiles;
        const unsigned hits = __ballot_sync(0xffffffffu, slot >= first && slot < first + tiles);
        if (hits != 0) {
          const int src = __ffs(static_cast<int>(hits)) - 1;
          which = static_cast<int>(b0) + src;
          local = slot - __shfl_sync(0xffffffffu, first, src);
          break;
        }
        before += __shfl_sync(0xffffffffu, inclusive, 31);
      }
      if (lane == 0) {
        found[0] = which;
        found[1] = local;
      }
    }
    __syncthreads();
    seq = found[0];
    const int local = found[1];
    __syncthreads();  // read by all before the tiles' copies overwrite it
    if (seq < 0) return;
    span(cu_q, seq, total_q, q_begin, q_len);
    span(cu_k, seq, total_k, k_begin, k_len);
    tile = (q_len + kRows - 1) / kRows - 1 - local;
  }

  const int m0 = tile * kRows;
  // Query i's own position among the keys: the last query is the last key.
  const int shift = k_len - q_len;
  int n_end = k_len;
  if (causal && m0 + kRows + shift < n_end) n_end = m0 + kRows + shift;
  int n_begin = 0;
  if (windowed && m0 + shift - window_left > 0)
    n_begin = (m0 + shift - window_left) / kKeys * kKeys;

  const unsigned long long q_stride = static_cast<unsigned long long>(q_heads) * head_dim;
  const unsigned long long kv_stride = static_cast<unsigned long long>(kv_heads) * head_dim;
  const int row0 = m0 + warp * 16 + lane / 4;  // the query of c[0], c[1]; row0 + 8 of c[2], c[3]
  T* out_base = out + (static_cast<unsigned long long>(q_begin) * q_heads + head) * head_dim;

  if (n_begin >= n_end) {  // no key in sight: zeros, as for a row whose keys are all hidden
    for (int i = static_cast<int>(threadIdx.x); i < kRows * head_dim; i += kThreads) {
      const int row = m0 + i / head_dim;
      if (row < q_len) out_base[row * q_stride + i % head_dim] = T(0.0f);
    }
    return;
  }

  const bool vector =
      ((reinterpret_cast<unsigned long long>(q) | reinterpret_cast<unsigned long long>(k) |
        reinterpret_cast<unsigned long long>(v)) &
       15) == 0;
  T* k_tile = reinterpret_cast<T*>(smem);
  T* v_tile = k_tile + kKeys * head_dim;
  T* q_tile = v_tile;  // Q passes through V's place on its way to the registers

  const T* k_base = k + (static_cast<unsigned long long>(k_begin) * kv_heads + kv_head) * head_dim;
  const T* v_base = v + (static_cast<unsigned long long>(k_begin) * kv_heads + kv_head) * head_dim;
  load_tile<kRows>(q_tile,
                   q + (static_cast<unsigned long long>(q_begin + m0) * q_heads + head) * head_dim,
                   q_stride, q_len - m0, vector);
  load_tile<kKeys>(k_tile, k_base + n_begin * kv_stride, kv_stride, n_end - n_begin, vector);
  copy_async_wait<1>();
  __syncthreads();

  unsigned qf[kDimSteps][4];
#pragma unroll
  for (int ks = 0; ks < kDimSteps; ++ks) {
    const int row = warp * 16 + (lane / 8 % 2) * 8 + lane % 8;
    load_matrix_x4(qf[ks], shared_address(q_tile + swizzle<kRows>(row, ks * 2 + lane / 16)));
  }

  float o[kOutTiles][4];
#pragma unroll
  for (int t = 0; t < kOutTiles; ++t) o[t][0] = o[t][1] = o[t][2] = o[t][3] = 0.0f;
  float m_run[2] = {negative_infinity(), negative_infinity()};
  float l_run[2] = {0.0f, 0.0f};  // this lane's part of each row's sum

  // Scores stay as they come out of Q K^T, and the scale folds into the exponent, unless
  // a soft-cap or an additive mask needs them scaled first.
  constexpr bool kScaledLate = !soft_capped && mask_kind != c::kMaskAdditive;
  const float exp_scale = kScaledLate ? scale * kLog2e : 1.0f;

  const unsigned k_smem = shared_address(k_tile);
  const unsigned v_smem = shared_address(v_tile);
  constexpr unsigned kSlabBytes = kKeys * kRowBytes;  // of a K or V tile
  // mma.sync: the lane's ldmatrix addresses but for what the unrolled loops add as constants.
  // A chunk's place in its row depends on the row's low bits (the swizzle), which are the
  // lane's own; within each eight chunks that gives four places, worked out once here.
  const int low = lane % 8;
  unsigned k_at[4];
  unsigned v_at[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    k_at[i] = k_smem + (lane / 16 * 8 + low) * kRowBytes + (((2 * i + lane / 8 % 2) ^ low) << 4);
    v_at[i] = v_smem + (lane / 8 % 2 * 8 + low) * kRowBytes + (((2 * i + lane / 16) ^ low) << 4);
  }

  const auto* mask_bytes = static_cast<const unsigned char*>(mask);
  const auto* mask_values = static_cast<const T*>(mask);
  const long long mask_base = mask_batch * seq + mask_head * static_cast<long long>(head);

  for (int n0 = n_begin; n0 < n_end; n0 += kKeys) {
    __syncthreads();  // every warp is done with the last V tile, and first with Q
    load_tile<kKeys>(v_tile, v_base + n0 * kv_stride, kv_stride, n_end - n0, vector);
    copy_async_wait<1>();  // this tile's K
    if constexpr (kWgmma) {
      fence_async_shared();  // cp.async wrote it; wgmma reads it
    }
    __syncthreads();

    float s[kKeyTiles][4];
#pragma unroll
    for (int t = 0; t < kKeyTiles; ++t) s[t][0] = s[t][1] = s[t][2] = s[t][3] = 0.0f;
    if constexpr (kWgmma) {
      // The warpgroup's 64 rows against the tile's keys: K is K-major, 16 of its dims a step.
      wgmma_fence();
#pragma unroll
      for (int ks = 0; ks < kDimSteps; ++ks) {
        Wgmma<kKeys, 0>::run(s, qf[ks],
                             smem_descriptor(k_smem + ks / 4 * kSlabBytes + ks % 4 * 32, 16, 1024),
                             true, T{});
      }
      wgmma_commit();
      wgmma_wait<0>();
      wgmma_hold(s);
    } else {
#pragma unroll
      for (int ks = 0; ks < kDimSteps; ++ks) {
#pragma unroll
        for (int t = 0; t < kKeyTiles; t += 2) {
          unsigned b[4];  // keys t * 8 + lane / 16 * 8 + low, chunk ks * 2 + lane / 8 % 2
          load_matrix_x4(b, k_at[ks % 4] + ks / 4 * kSlabBytes + t * 8 * kRowBytes);
          mma_16816(s[t], qf[ks], b[0], b[1], T{});
          mma_16816(s[t + 1], qf[ks], b[2], b[3], T{});
        }
      }
    }

    // Scores to base-2 logits (or, scaled late, left as they are); hidden ones to -inf. Only tiles
    // at an edge (the sequence's end, the diagonal, the window's start) or under a mask look at
    // each score's position.
    const bool edge = n0 + kKeys > k_len || (causal && n0 + kKeys - 1 > m0 + shift) ||
                      (windowed && n0 < m0 + kRows - 1 + shift - window_left);
#pragma unroll
    for (int t = 0; t < kKeyTiles; ++t) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        float x = s[t][e];
        if (soft_capped) {
          x = soft_cap * tanh_approx(x * scale / soft_cap) * kLog2e;
        } else if (!kScaledLate) {
          x *= scale * kLog2e;
        }
        if (edge || mask_kind != c::kMaskNone) {
          const int i = row0 + (e >= 2 ? 8 : 0);
          const int j = n0 + t * 8 + (lane % 4) * 2 + (e & 1);
          bool hidden =
              j >= k_len || (causal && j > i + shift) || (windowed && j < i + shift - window_left);
          if (mask_kind != c::kMaskNone) {
            if (i >= mask_rows || j >= mask_cols) {
              hidden = true;
            } else if (!hidden) {
              const long long at = mask_base + i * mask_row + j;
              if (mask_kind == c::kMaskBoolean) {
                hidden = mask_bytes[at] == 0;
              } else {
                x = fmaf(to_float(mask_values[at]), kLog2e, x);
              }
            }
          }
          if (hidden) x = negative_infinity();
        }
        s[t][e] = x;
      }
    }

    // The online softmax, and O rescaled to the rows' new maxima.
    float rescale[2];
    flash_softmax_step(s, m_run, l_run, rescale, exp_scale);
    flash_rescale(o, rescale);
    unsigned p[kKeySteps][4];
#pragma unroll
    for (int kk = 0; kk < kKeySteps; ++kk) {
      p[kk][0] = pack2(s[2 * kk][0], s[2 * kk][1], T{});
      p[kk][1] = pack2(s[2 * kk][2], s[2 * kk][3], T{});
      p[kk][2] = pack2(s[2 * kk + 1][0], s[2 * kk + 1][1], T{});
      p[kk][3] = pack2(s[2 * kk + 1][2], s[2 * kk + 1][3], T{});
    }

    copy_async_wait<0>();  // this tile's V
    if constexpr (kWgmma) {
      fence_async_shared();  // cp.async wrote it; wgmma reads it
    }
    __syncthreads();  // and every warp is done with K
    if (n0 + kKeys < n_end) {
      load_tile<kKeys>(k_tile, k_base + (n0 + kKeys) * kv_stride, kv_stride, n_end - n0 - kKeys,
                       vector);
    }

    if constexpr (kWgmma) {
      // P from the registers against V, which is MN-major (its dims are contiguous): 64 dims a
      // slab, 16 keys a step.
      wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < kKeySteps; ++kk) {
        Wgmma<head_dim, 1>::run(
            o, p[kk], smem_descriptor(v_smem + kk * 16 * kRowBytes, kSlabBytes, 1024), true, T{});
      }
      wgmma_commit();
      wgmma_wait<0>();
      wgmma_hold(o);
    } else {
#pragma unroll
      for (int kk = 0; kk < kKeySteps; ++kk) {
#pragma unroll
        for (int t = 0; t < kOutTiles; t += 2) {
          unsigned b[4];  // keys kk * 16 + lane / 8 % 2 * 8 + low, chunk t + lane / 16
          load_matrix_x4_trans(b, v_at[t % 8 / 2] + t / 8 * kSlabBytes + kk * 16 * kRowBytes);
          mma_16816(o[t], p[kk], b[0], b[1], T{});
          mma_16816(o[t + 1], p[kk], b[2], b[3], T{});
        }
      }
    }
  }

  // Each row's sum over its four lanes, then the output; a row that saw no key gives zeros.
  flash_store_rows(out_base, q_stride, row0, q_len, o, l_run);
}
