// Attention for prefill on sm_90a, warp-specialized: the common case of kernels/attention.cu
// (head dim 64 or 128, sequences of one length, no mask) at the rate the copy engine and wgmma
// allow.
//
// The work comes in items of 128 queries of one head; a block (of three warpgroups, one a
// multiprocessor) takes its share of them in turn (for_each_item). The first warpgroup's first
// thread is the producer: for each item it has the copy engine bring Q, once the consumers are
// done with the last item's, then each 128-key tile of K and of V into a ring of two stages
// that runs on from item to item, each copy counted on that stage's "full" barrier, refilling a
// stage once its "empty" barrier says both consumers are done with it; so an item's first
// tiles arrive while the last one's products and output are still under way.
// The other two warpgroups are the consumers, 64 queries each: S = Q K^T with both operands in
// shared memory, the scale, soft-cap and causal or window bounds applied to the float scores,
// an online softmax in base 2, then O += P V with P rounded to the inputs' type from the
// registers S was in. A consumer computes tile t's scores while tile t - 1's weights multiply
// V and runs tile t's softmax while that product still does (as FlashAttention 3 does), and
// by default (kOverlap 2) the two consumers take turns to issue their products, so that one's
// run while the other's softmax does.
//
// The copy engine zero-fills past a sequence's end (the maps are 3-D: a box stops at its
// sequence), so a key past the end is zeros, hidden by its position as well.
// Constants and parameters: kreg/contracts/attention.cuh.
// kreg:entry attention_tma_f16=attention_tma<kreg::half>
// kreg:entry attention_tma_bf16=attention_tma<kreg::bfloat16>
// kreg:specialization 200:b1
// kreg:specialization 300:i64
// kreg:specialization 200:b1|300:i64
// kreg:arch-specific
#include <kreg/contracts/attention.cuh>
#include <kreg/device/flash.cuh>
#include <kreg/device/kernel.cuh>
#include <kreg/device/tma.cuh>
#include <kreg/device/vec.cuh>
#include <kreg/device/wgmma.cuh>

KREG_CONSTANT_DEFAULT(int, head_dim, kreg::contracts::attention::kHeadDim, 128);
KREG_CONSTANT_DEFAULT(bool, causal, kreg::contracts::attention::kCausal, false);
KREG_CONSTANT_DEFAULT(bool, soft_capped, kreg::contracts::attention::kSoftCap, false);
KREG_CONSTANT_DEFAULT(bool, windowed, kreg::contracts::attention::kWindow, false);
KREG_CONSTANT_DEFAULT(int, overlap, kreg::contracts::attention::kOverlap, 2);

static_assert(head_dim == 64 || head_dim == 128, "attention_tma: the head dimension is 64 or 128");
static_assert(overlap == 1 || overlap == 2, "attention_tma: the overlap is 1 or 2");

namespace flash_tma {

namespace c = kreg::contracts::attention;

constexpr int kRows = c::kTmaRows;
constexpr int kKeys = c::kTmaKeys;
constexpr unsigned kStages = c::kTmaStages;
constexpr unsigned kSlab = 64 * 2;                      // bytes of a row of one 64-column box
constexpr int kBoxes = head_dim / 64;                   // boxes a row of Q, K or V spans
constexpr unsigned kQBytes = kRows * head_dim * 2;      // kBoxes boxes of 128 rows
constexpr unsigned kTileBytes = kKeys * head_dim * 2;   // of K or V, kBoxes boxes
constexpr unsigned kQSlab = kRows * kSlab;              // one box of Q
constexpr unsigned kKvSlab = kKeys * kSlab;             // one box of K or V
constexpr int kKeyGroups = kKeys / 8;                   // n-groups of S
constexpr int kDimGroups = head_dim / 8;                // n-groups of O
constexpr bool kPaired = causal || windowed;            // items of unequal cost
constexpr float kLog2e = 1.4426950408889634f;
static_assert(kQBytes + 2 * kStages * kTileBytes + 1024 + 8 * (2 + 4 * kStages) <=
                  c::kTmaSharedBytes<head_dim>,
              "the tiles fit what the op asks for");

// Calls body(seq_head, tile) for each of this block's items (query tile `tile` of `tiles` of
// the (sequence, head) pair `seq_head`), in turn.
// - Where a tile's keys depend on its place (a causal mask, a window) and blocks take several
//   items, a block takes a pair's tiles two by two, the last with the first, the last but one
//   with the second, ...: couples b, b + G, ... of a grid of G, pair by pair, of about equal
//   cost, so that the grid evens out whatever the shape. (Single items shared out by turns
//   even out only where each round holds tiles of every length: for 16 heads x 4096 causal,
//   or 32 query heads on 8 KV heads, a model of it gives 1.5-1.8x the even time, and GPUs took
//   1.5x.)
// - Otherwise the (sequence, head) pairs go in groups of `group` (the query heads of one KV
//   head), whose tiles go side by side, last tiles first, so that its keys and values come
//   from L2 for all but the first; block b takes items b, 2G - 1 - b, 2G + b, ..., each round
//   the other way round. (Groups of 8 or 32 heads, more keys in flight than L2 keeps, were
//   4-8% slower, and 32 query heads on 8 KV heads taken head by head 5-10%.)
template <class Body>
__device__ inline void for_each_item(unsigned seq_heads, unsigned tiles, unsigned group,
                                     Body&& body) {
  if (kPaired && seq_heads * tiles > gridDim.x) {
    const unsigned couples = (tiles + 1) / 2;  // a pair's; with odd tiles the middle alone
    for (unsigned u = blockIdx.x; u < seq_heads * couples; u += gridDim.x) {
      const unsigned i = u % couples;
      body(u / couples, tiles - 1 - i);
      if (i != tiles - 1 - i) body(u / couples, i);
    }
    return;
  }
  const unsigned span = group * tiles;
  for (unsigned round = 0;; ++round) {
    const unsigned r =
        round * gridDim.x + (round % 2 == 0 ? blockIdx.x : gridDim.x - 1 - blockIdx.x);
    if (r >= seq_heads * tiles) break;
    const unsigned within = r % span;
    body(r / span * group + within % group, tiles - 1 - within / group);
  }
}

}  // namespace flash_tma

template <typename T>
__global__ void __launch_bounds__(kreg::contracts::attention::kTmaThreads, 1)
    attention_tma(const __grid_constant__ kreg::contracts::TensorMap q_map,
                  const __grid_constant__ kreg::contracts::TensorMap k_map,
                  const __grid_constant__ kreg::contracts::TensorMap v_map, T* __restrict__ out,
                  unsigned batch, unsigned q_heads, unsigned kv_heads, int len_q, int len_k,
                  float scale, float soft_cap, int window_left) {
  KREG_SIGNATURE(attention_tma<T>, kreg::contracts::attention::AttentionTma<T>);
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using namespace kreg;
  using namespace flash_tma;
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  const unsigned base = (shared_address(smem_raw) + 1023) & ~1023u;
  const unsigned q_tile = base;
  const unsigned k_tiles = q_tile + kQBytes;
  const unsigned v_tiles = k_tiles + kStages * kTileBytes;
  const unsigned bars = v_tiles + kStages * kTileBytes;
  const unsigned q_full = bars;
  const unsigned q_empty = bars + 8;
  auto k_full = [&](unsigned s) { return bars + 8 * (2 + s); };
  auto v_full = [&](unsigned s) { return bars + 8 * (2 + kStages + s); };
  auto k_empty = [&](unsigned s) { return bars + 8 * (2 + 2 * kStages + s); };
  auto v_empty = [&](unsigned s) { return bars + 8 * (2 + 3 * kStages + s); };

  // The work items, one a (query tile, sequence, query head), in for_each_item's order.
  const unsigned tiles_q = static_cast<unsigned>((len_q + kRows - 1) / kRows);
  const unsigned seq_heads = batch * q_heads;
  const unsigned group = q_heads / kv_heads;  // the query heads of a KV head
  // Query i's own position among the keys: the last query is the last key.
  const int shift = len_k - len_q;
  struct Item {
    int seq, m0, n_begin, n_end;
    unsigned head;
  };
  const auto describe = [&](unsigned seq_head, unsigned tile) {
    Item w;
    w.head = seq_head % q_heads;
    w.seq = static_cast<int>(seq_head / q_heads);
    w.m0 = static_cast<int>(tile) * kRows;
    w.n_end = len_k;
    if (causal && w.m0 + kRows + shift < w.n_end) w.n_end = w.m0 + kRows + shift;
    w.n_begin = 0;
    if (windowed && w.m0 + shift - window_left > 0) {
      w.n_begin = (w.m0 + shift - window_left) / kKeys * kKeys;
    }
    return w;
  };
  const unsigned long long q_stride = static_cast<unsigned long long>(q_heads) * head_dim;

  const int warpgroup = static_cast<int>(threadIdx.x / 128);
  if (threadIdx.x == 0) {
    barrier_init(q_full, 1);
    barrier_init(q_empty, 8);  // lane 0 of each consumer warp
    for (unsigned s = 0; s < kStages; ++s) {
      barrier_init(k_full(s), 1);
      barrier_init(v_full(s), 1);
      barrier_init(k_empty(s), 8);
      barrier_init(v_empty(s), 8);
    }
    barrier_init_fence();
  }
  __syncthreads();

  // Stage and phase of the block's n-th key tile, counted over all its items.
  const auto stage_of = [](unsigned n) { return n % kStages; };
  const auto phase_of = [](unsigned n) { return (n / kStages) & 1; };

  if (warpgroup == 0) {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 40;");
    if (threadIdx.x != 0) return;
    tensor_map_prefetch(&q_map);
    tensor_map_prefetch(&k_map);
    tensor_map_prefetch(&v_map);
    unsigned n = 0;       // key tiles brought so far
    unsigned loaded = 0;  // items whose Q was brought
    for_each_item(seq_heads, tiles_q, group, [&](unsigned seq_head, unsigned tile) {
      const Item w = describe(seq_head, tile);
      if (w.n_begin >= w.n_end) return;
      const int q_x = static_cast<int>(w.head) * head_dim;
      const int kv_x = static_cast<int>(w.head / group) * head_dim;
      // The next Q once both consumers have their last scores of the item before.
      if (loaded > 0) barrier_wait(q_empty, (loaded - 1) & 1);
      barrier_expect(q_full, kQBytes);
#pragma unroll
      for (int b = 0; b < kBoxes; ++b) {
        tensor_copy_3d(q_tile + b * kQSlab, &q_map, q_x + 64 * b, w.m0, w.seq, q_full);
      }
      ++loaded;
      for (int n0 = w.n_begin; n0 < w.n_end; n0 += kKeys, ++n) {
        const unsigned s = stage_of(n);
        const unsigned reuse = phase_of(n) ^ 1;
        const unsigned k_at = k_tiles + s * kTileBytes;
        const unsigned v_at = v_tiles + s * kTileBytes;
        if (n >= kStages) barrier_wait(k_empty(s), reuse);
        barrier_expect(k_full(s), kTileBytes);
#pragma unroll
        for (int b = 0; b < kBoxes; ++b) {
          tensor_copy_3d(k_at + b * kKvSlab, &k_map, kv_x + 64 * b, n0, w.seq, k_full(s));
        }
        if (n >= kStages) barrier_wait(v_empty(s), reuse);
        barrier_expect(v_full(s), kTileBytes);
#pragma unroll
        for (int b = 0; b < kBoxes; ++b) {
          tensor_copy_3d(v_at + b * kKvSlab, &v_map, kv_x + 64 * b, n0, w.seq, v_full(s));
        }
      }
    });
    return;
  }
  asm volatile("setmaxnreg.inc.sync.aligned.u32 232;");
  const int half = warpgroup - 1;  // queries m0 + 64 * half to m0 + 64 * half + 63
  const int warp = static_cast<int>(threadIdx.x / 32) % 4;
  const int lane = static_cast<int>(threadIdx.x % 32);

  // Scores stay as they come out of Q K^T and the scale folds into the exponent, unless a
  // soft-cap needs them scaled first.
  const float exp_scale = soft_capped ? 1.0f : scale * kLog2e;
  float o[kDimGroups][4];
  float s[kKeyGroups][4];
  unsigned p[kKeys / 16][4];
  float m_run[2];
  float l_run[2];  // this lane's part of each row's sum
  float rescale[2];
  // This warpgroup's 64 rows start 64 * half rows into each box of Q.
  const unsigned q_rows = q_tile + 64 * half * kSlab;

  // S = Q K^T for the block's key tile n, issued (not waited for): both K-major, 16 of the
  // dims a step, 64 of them a box.
  const auto issue_scores = [&](unsigned n) {
    const unsigned k_at = k_tiles + stage_of(n) * kTileBytes;
    barrier_wait(k_full(stage_of(n)), phase_of(n));
#pragma unroll
    for (int ks = 0; ks < head_dim / 16; ++ks) {
      const unsigned step = ks / 4 * kQSlab + ks % 4 * 32;
      const unsigned k_step = ks / 4 * kKvSlab + ks % 4 * 32;
      WgmmaShared<kKeys, 0, 0>::run(s, smem_descriptor(q_rows + step, 16, 1024),
                                    smem_descriptor(k_at + k_step, 16, 1024), ks > 0, T{});
    }
    wgmma_commit();
  };
  // O += P V for key tile n, issued: V is MN-major (its dims contiguous), 64 dims a box, 16
  // keys a step.
  const auto issue_values = [&](unsigned n) {
    const unsigned v_at = v_tiles + stage_of(n) * kTileBytes;
    barrier_wait(v_full(stage_of(n)), phase_of(n));
#pragma unroll
    for (int kk = 0; kk < kKeys / 16; ++kk) {
      Wgmma<head_dim, 1>::run(o, p[kk], smem_descriptor(v_at + kk * 16 * kSlab, kKvSlab, 1024),
                              true, T{});
    }
    wgmma_commit();
  };
  // O rescaled, and the weights as A fragments (16 keys a step: the m16n8k16 A layout is two
  // n-groups of S side by side), rounded to the inputs' type.
  const auto weigh = [&] {
    flash_rescale(o, rescale);
#pragma unroll
    for (int kk = 0; kk < kKeys / 16; ++kk) {
      p[kk][0] = pack2(s[2 * kk][0], s[2 * kk][1], T{});
      p[kk][1] = pack2(s[2 * kk][2], s[2 * kk][3], T{});
      p[kk][2] = pack2(s[2 * kk + 1][0], s[2 * kk + 1][1], T{});
      p[kk][3] = pack2(s[2 * kk + 1][2], s[2 * kk + 1][3], T{});
    }
  };
  // With overlap 2 the consumers take turns to issue their products (named barriers 1 and 2,
  // each item's first turn the first consumer's).
  const auto take_turn = [&] {
    if constexpr (overlap == 2) {
      if (half == 0) {
        asm volatile("bar.sync 1, 256;" ::: "memory");
      } else {
        asm volatile("bar.sync 2, 256;" ::: "memory");
      }
    }
  };
  const auto pass_turn = [&] {
    if constexpr (overlap == 2) {
      if (half == 0) {
        asm volatile("bar.arrive 2, 256;" ::: "memory");
      } else {
        asm volatile("bar.arrive 1, 256;" ::: "memory");
      }
    }
  };

  unsigned n = 0;       // key tiles used so far
  unsigned loaded = 0;  // items whose Q was used
  for_each_item(seq_heads, tiles_q, group, [&](unsigned seq_head, unsigned tile) {
    const Item w = describe(seq_head, tile);
    T* out_base = out + (static_cast<unsigned long long>(w.seq) * len_q * q_heads + w.head) *
                            head_dim;
    const int first_row = w.m0 + 64 * half;
    if (w.n_begin >= w.n_end) {  // no key in sight: zeros, as for a row whose keys are all hidden
      for (int i = static_cast<int>(threadIdx.x % 128); i < 64 * head_dim; i += 128) {
        const int row = first_row + i / head_dim;
        if (row < len_q) out_base[row * q_stride + i % head_dim] = T(0.0f);
      }
      return;
    }
    const int tiles = (w.n_end - w.n_begin + kKeys - 1) / kKeys;
    const int row0 = first_row + 16 * warp + lane / 4;  // of s[.][0..1]; row0 + 8 of [2..3]
#pragma unroll
    for (int g = 0; g < kDimGroups; ++g) o[g][0] = o[g][1] = o[g][2] = o[g][3] = 0.0f;
    m_run[0] = m_run[1] = negative_infinity();
    l_run[0] = l_run[1] = 0.0f;

    // Tile t's scores to weights: base-2 logits (or, scaled late, as they are), hidden ones to
    // -inf, then the online softmax. Only tiles at an edge (the sequence's end, the diagonal,
    // the window's start) look at each score's position. Leaves O's rescale in `rescale`.
    const auto soften = [&](int t) {
      const int n0 = w.n_begin + t * kKeys;
      const bool edge = n0 + kKeys > len_k || (causal && n0 + kKeys - 1 > first_row + shift) ||
                        (windowed && n0 < first_row + 63 + shift - window_left);
#pragma unroll
      for (int g = 0; g < kKeyGroups; ++g) {
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          float x = s[g][e];
          if (soft_capped) x = soft_cap * tanh_approx(x * scale / soft_cap) * kLog2e;
          if (edge) {
            const int i = row0 + (e >= 2 ? 8 : 0);
            const int j = n0 + g * 8 + (lane % 4) * 2 + (e & 1);
            if (j >= len_k || (causal && j > i + shift) ||
                (windowed && j < i + shift - window_left)) {
              x = negative_infinity();
            }
          }
          s[g][e] = x;
        }
      }
      flash_softmax_step(s, m_run, l_run, rescale, exp_scale);
    };

    // Tile t's scores are computed while tile t - 1's weights multiply V, and its softmax runs
    // while they still do: O's rescale for tile t waits for that product. Once the item's
    // last scores are in, Q's buffer is the producer's again.
    barrier_wait(q_full, loaded & 1);
    ++loaded;
    if (half == 1) {
      if constexpr (overlap == 2) asm volatile("bar.arrive 1, 256;" ::: "memory");
    }
    take_turn();
    wgmma_fence();
    issue_scores(n);
    pass_turn();
    wgmma_wait<0>();
    wgmma_hold(s);
    if (lane == 0) {
      barrier_arrive(k_empty(stage_of(n)));
      if (tiles == 1) barrier_arrive(q_empty);
    }
    soften(0);
    weigh();
    for (int t = 1; t < tiles; ++t) {
      wgmma_hold(s);
      wgmma_hold(o);
      wgmma_hold(p);
      take_turn();
      wgmma_fence();
      issue_scores(n + t);
      issue_values(n + t - 1);
      pass_turn();
      wgmma_wait<1>();
      wgmma_hold(s);
      if (lane == 0) {
        barrier_arrive(k_empty(stage_of(n + t)));
        if (t == tiles - 1) barrier_arrive(q_empty);
      }
      soften(t);
      wgmma_wait<0>();
      wgmma_hold(o);
      if (lane == 0) barrier_arrive(v_empty(stage_of(n + t - 1)));
      weigh();
    }
    wgmma_hold(o);
    wgmma_hold(p);
    take_turn();
    wgmma_fence();
    issue_values(n + tiles - 1);
    // Every turn is taken: the second consumer's last would be waited for by no one.
    if (half == 0) pass_turn();
    wgmma_wait<0>();
    wgmma_hold(o);
    if (lane == 0) barrier_arrive(v_empty(stage_of(n + tiles - 1)));
    n += static_cast<unsigned>(tiles);

    // Each row's sum over its four lanes, then the output; a row that saw no key gives zeros.
    flash_store_rows(out_base, q_stride, row0, len_q, o, l_run);
  });
#else
  __trap();  // the op launches this only where the target has wgmma
#endif
}
