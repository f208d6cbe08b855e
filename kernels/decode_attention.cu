// Decode attention over a paged KV cache (flash-decoding): each sequence's one new query
// token, for every query head, against the keys and values its block table points at.
//
//   q            [batch, kv_heads * group, head_dim]
//   k/v_cache    [pages, page_size, kv_heads, head_dim]; token t of sequence b is row
//                t % page_size of page block_table[b][t / page_size]
//   out          [batch, kv_heads * group, head_dim]
//
// Query heads kv_head * group ... kv_head * group + group - 1 share KV head kv_head, so one
// block reads each key and value once for all of them. A sequence's keys are cut into splits
// of split_tokens, one block each, whose partial results a second kernel combines by their
// log-sum-exp (launched to overlap the first one's end, where the GPU can); with one split
// the first kernel writes the output itself.
//
// On tensor cores (mma.sync m16n8k16, sm_80 and newer): the group's query heads are the 16
// rows of the A operand (rows past the group are zeros), so a warp takes 16 keys a step,
// S = Q K^T as two 16 x 8 products per 16 dimensions and O += P V with P kept in registers,
// as flash attention does. Each warp of a block streams its own 16-key tiles (the block's
// tiles dealt round-robin) through a ring of three stages in shared memory, filled by
// asynchronous copies two tiles ahead, and keeps its own online softmax; the warps are
// combined at the end. Scores, softmax and sums are in float, in base 2 (the scale carries
// log2(e)).
// Constants and parameters: kreg/contracts/decode_attention.cuh.
// kreg:entry decode_attention_f16=decode_attention<kreg::half>
// kreg:entry decode_attention_bf16=decode_attention<kreg::bfloat16>
// kreg:entry decode_attention_combine_f16=decode_attention_combine<kreg::half>
// kreg:entry decode_attention_combine_bf16=decode_attention_combine<kreg::bfloat16>
// kreg:specialization 301:i4
// kreg:specialization 301:i8
// kreg:specialization 300:i64|301:i4
// kreg:specialization 300:i256|301:i2
#include <kreg/contracts/decode_attention.cuh>
#include <kreg/device/grid_dependency.cuh>
#include <kreg/device/kernel.cuh>
#include <kreg/device/mma.cuh>
#include <kreg/device/vec.cuh>

KREG_CONSTANT_DEFAULT(int, head_dim, kreg::contracts::decode_attention::kHeadDim, 128);
KREG_CONSTANT_DEFAULT(int, group_size, kreg::contracts::decode_attention::kGroup, 1);
KREG_CONSTANT_DEFAULT(bool, soft_capped, kreg::contracts::decode_attention::kSoftCap, false);
KREG_CONSTANT_DEFAULT(bool, windowed, kreg::contracts::decode_attention::kWindow, false);

static_assert(head_dim == 64 || head_dim == 128 || head_dim == 256,
              "decode_attention: the head dimension must be 64, 128 or 256");
static_assert(group_size >= 1 && group_size <= 16,
              "decode_attention: 1 to 16 query heads per KV head");

namespace decode {

using namespace kreg;

constexpr int kWarps = contracts::decode_attention::kWarps<head_dim>;
constexpr int kThreads = 32 * kWarps;
constexpr int kTile = 16;                      // keys a warp takes a step
constexpr int kStages = 3;                     // a warp's ring
constexpr int kChunks = head_dim / 8;          // 16-byte chunks of a row
constexpr int kRowsPerPass = 32 / kChunks;     // rows one copy instruction of a warp covers
constexpr int kPasses = kTile / kRowsPerPass;  // copy instructions a lane issues for a tile
constexpr int kRowBytes = head_dim * 2;
constexpr int kTileBytes = kTile * kRowBytes;  // K or V
constexpr int kStageBytes = 2 * kTileBytes;
constexpr int kWarpBytes = kStages * kStageBytes;
constexpr int kSteps = head_dim / 16;    // k-steps of Q K^T
constexpr int kDimTiles = head_dim / 8;  // n-tiles of P V
constexpr float kLog2e = 1.4426950408889634f;
static_assert(kWarps * kWarpBytes <= 48 * 1024, "a block's rings fit static shared memory");
static_assert(kWarps * (kTile * head_dim + 2 * kTile) * 4 <= kWarps * kWarpBytes,
              "the warps' results fit where their rings were");

__device__ inline int clamp_to(int v, int lo, int hi) {
  return v < lo ? lo : (v > hi ? hi : v);
}

// Chunk `chunk` of row `row` of a tile: XOR-swizzled within each 128 bytes, so that eight
// lanes reading one chunk of eight rows (ldmatrix) hit eight different bank groups.
__device__ inline unsigned tile_offset(unsigned row, unsigned chunk) {
  return row * kRowBytes + ((chunk ^ (row & 7)) << 4);
}

// Sixteen bytes from global to shared memory: asynchronously when the source is 16-byte
// aligned, else element by element (done at once, which the ring's waits then pass). An
// invalid row is zeros.
template <class T>
__device__ inline void copy_row_chunk(unsigned dst, T* dst_generic, const T* src, bool valid,
                                      bool vector) {
  if (vector) {
    copy_async16(dst, src, valid);
    return;
  }
#pragma unroll
  for (int k = 0; k < 8; ++k) dst_generic[k] = valid ? src[k] : T(0.0f);
}

// Two consecutive 16-bit elements as one register, the lower index in the low half.
template <class T>
__device__ inline unsigned load_pair(const T* p, bool aligned) {
  if (aligned) return *reinterpret_cast<const unsigned*>(p);
  const auto* h = reinterpret_cast<const unsigned short*>(p);
  return static_cast<unsigned>(h[0]) | (static_cast<unsigned>(h[1]) << 16);
}

}  // namespace decode

template <typename T>
__global__ void __launch_bounds__(decode::kThreads)
    decode_attention(const T* __restrict__ q, const T* __restrict__ k_cache,
                     const T* __restrict__ v_cache, const int* __restrict__ block_table,
                     const int* __restrict__ seq_lens, T* __restrict__ out,
                     float* __restrict__ partial_out, float* __restrict__ partial_lse,
                     unsigned kv_heads, unsigned page_size, unsigned table_stride,
                     unsigned split_tokens, float scale, float soft_cap, int window_left) {
  KREG_SIGNATURE(decode_attention<T>, kreg::contracts::decode_attention::DecodeAttention<T>);
  using namespace kreg;
  using namespace decode;
  constexpr int G = group_size;
  __shared__ __align__(128) unsigned char smem[kWarps * kWarpBytes];
  const unsigned split = blockIdx.x;
  const unsigned splits = gridDim.x;
  const unsigned kv_head = blockIdx.y;
  const unsigned seq = blockIdx.z;
  const unsigned warp = threadIdx.x / 32;
  const unsigned lane = threadIdx.x % 32;
  const unsigned g = lane / 4;  // the fragments' row
  const unsigned t = lane % 4;  // and column pair
  const unsigned q_heads = kv_heads * G;
  // The combine (launched to overlap this kernel) may take its place on the multiprocessors
  // now; it waits for this grid to end before it reads a partial.
  release_dependent_grid();

  const int* table = block_table + static_cast<unsigned long long>(seq) * table_stride;
  int begin = static_cast<int>(split * split_tokens);

  // Where pages hold whole 16-key tiles and the split starts on one (no window moves it), a
  // tile is one page's consecutive rows: one table entry a tile. The pages of this warp's
  // first tiles are asked for before the length is known, so that the two reads overlap
  // rather than follow each other (an entry past the table's end is not read).
  const bool whole_tiles =
      !windowed && page_size % kTile == 0 && split_tokens % kTile == 0 && split_tokens > 0;
  int early_page[kStages - 1];
#pragma unroll
  for (int i = 0; i < kStages - 1; ++i) {
    const unsigned entry =
        (static_cast<unsigned>(begin) + (warp + i * kWarps) * kTile) / page_size;
    early_page[i] = whole_tiles && entry < table_stride ? table[entry] : 0;
  }

  // The keys this block reads: its split of the sequence, within the window. A length past
  // what the block table holds is cut to it, so no read leaves the table (the op keeps the
  // table's capacity below 2^31 tokens).
  const int capacity = static_cast<int>(table_stride * page_size);
  const int length = clamp_to(seq_lens[seq], 0, capacity);
  const int end = begin + static_cast<int>(split_tokens) < length
                      ? begin + static_cast<int>(split_tokens)
                      : length;
  if (windowed && length - 1 - window_left > begin) begin = length - 1 - window_left;

  // The group's queries as A fragments, one set per 16 dimensions; rows past the group are
  // zeros. The scale is applied to the float scores, not rounded into Q.
  const unsigned long long out_row = static_cast<unsigned long long>(seq) * q_heads + kv_head * G;
  const T* q_group = q + out_row * head_dim;
  const bool q_aligned = (reinterpret_cast<unsigned long long>(q) & 3) == 0;
  unsigned qa[kSteps][4];
#pragma unroll
  for (int kk = 0; kk < kSteps; ++kk) {
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      const unsigned row = g + (r % 2) * 8;
      const unsigned col = kk * 16 + (r / 2) * 8 + 2 * t;
      qa[kk][r] = row < G ? load_pair(q_group + row * head_dim + col, q_aligned) : 0u;
    }
  }
  const float q_scale = soft_capped ? scale : scale * kLog2e;

  // This warp's tiles: the block's 16-key tiles warp, warp + kWarps, ...
  const int tiles = end > begin ? (end - begin + kTile - 1) / kTile : 0;
  const int mine =
      tiles > static_cast<int>(warp) ? (tiles - static_cast<int>(warp) + kWarps - 1) / kWarps : 0;
  const bool vector = vec_aligned(k_cache) && vec_aligned(v_cache);
  const unsigned long long row_stride = static_cast<unsigned long long>(kv_heads) * head_dim;
  const unsigned copy_row = lane / kChunks;  // the row and chunk this lane copies
  const unsigned copy_chunk = lane % kChunks;
  const T* k_head = k_cache + static_cast<unsigned long long>(kv_head) * head_dim + copy_chunk * 8;
  const T* v_head = v_cache + static_cast<unsigned long long>(kv_head) * head_dim + copy_chunk * 8;
  unsigned char* ring = smem + warp * kWarpBytes;
  const unsigned ring_at = shared_address(ring);

  // Pass p of a tile's copies: this lane's chunk of K and of V for the tile's row
  // copy_row + p * kRowsPerPass, from `row_at` elements past the head's first (zeros if not
  // valid) into the stage at byte `stage` of the ring.
  const auto copy_pass = [&](unsigned stage, int p, unsigned long long row_at, bool valid) {
    const unsigned offset = stage + tile_offset(copy_row + p * kRowsPerPass, copy_chunk);
    copy_row_chunk(ring_at + offset, reinterpret_cast<T*>(ring + offset), k_head + row_at, valid,
                   vector);
    copy_row_chunk(ring_at + offset + kTileBytes, reinterpret_cast<T*>(ring + offset + kTileBytes),
                   v_head + row_at, valid, vector);
  };

  // Tile i of this warp into stage i % kStages, as one group of copies (an empty group past
  // the last tile, so that the waits below count alike). `page_known` is the tile's page
  // where whole_tiles holds and the caller has read it already, else negative.
  const auto issue = [&](int i, int page_known) {
    const unsigned stage = (i % kStages) * kStageBytes;
    if (i < mine && whole_tiles) {
      const int tile_row = begin + (static_cast<int>(warp) + i * kWarps) * kTile;
      const int page =
          page_known >= 0 ? page_known : table[static_cast<unsigned>(tile_row) / page_size];
      const unsigned in_page = static_cast<unsigned>(tile_row) % page_size + copy_row;
      const unsigned long long at =
          (static_cast<unsigned long long>(page) * page_size + in_page) * row_stride;
#pragma unroll
      for (int p = 0; p < kPasses; ++p) {
        const bool valid = tile_row + static_cast<int>(copy_row) + p * kRowsPerPass < end;
        copy_pass(stage, p, valid ? at + p * kRowsPerPass * row_stride : 0, valid);
      }
    } else if (i < mine) {
      const int first =
          begin + (static_cast<int>(warp) + i * kWarps) * kTile + static_cast<int>(copy_row);
      unsigned entry = static_cast<unsigned>(first) / page_size;
      unsigned in_page = static_cast<unsigned>(first) - entry * page_size;
#pragma unroll
      for (int p = 0; p < kPasses; ++p) {
        const bool valid = first + p * kRowsPerPass < end;
        unsigned long long at = 0;
        if (valid) {
          const auto page = static_cast<unsigned long long>(table[entry]);
          at = (page * page_size + in_page) * row_stride;
        }
        copy_pass(stage, p, at, valid);
        in_page += kRowsPerPass;
        while (in_page >= page_size) {
          in_page -= page_size;
          ++entry;
        }
      }
    }
    copy_async_commit();
  };

  float o[kDimTiles][4];
#pragma unroll
  for (int n = 0; n < kDimTiles; ++n) {
#pragma unroll
    for (int e = 0; e < 4; ++e) o[n][e] = 0.0f;
  }
  float m[2] = {negative_infinity(), negative_infinity()};  // rows g and g + 8, base 2
  float l[2] = {0.0f, 0.0f};  // this lane's part of each row's sum of 2^(s - m)

  // The ldmatrix lanes: matrix lane / 8, its row lane % 8.
  const unsigned matrix = lane / 8;
  const unsigned k_row = (matrix / 2) * 8 + lane % 8;  // keys 0-7 or 8-15
  const unsigned v_row = (matrix % 2) * 8 + lane % 8;

#pragma unroll
  for (int i = 0; i < kStages - 1; ++i) issue(i, early_page[i]);
  for (int i = 0; i < mine; ++i) {
    issue(i + kStages - 1, -1);
    copy_async_wait<kStages - 1>();
    __syncwarp();  // every lane's copies of tile i are in
    const unsigned stage = ring_at + (i % kStages) * kStageBytes;

    // S = Q K^T for the tile's 16 keys: n-tile j holds keys 8j to 8j + 7.
    float s[2][4] = {{0.0f, 0.0f, 0.0f, 0.0f}, {0.0f, 0.0f, 0.0f, 0.0f}};
#pragma unroll
    for (int kk = 0; kk < kSteps; ++kk) {
      unsigned b[4];
      load_matrix_x4(b, stage + tile_offset(k_row, 2 * kk + matrix % 2));
      mma_16816(s[0], qa[kk], b[0], b[1], T{});
      mma_16816(s[1], qa[kk], b[2], b[3], T{});
    }

    const int tile_first = begin + (static_cast<int>(warp) + i * kWarps) * kTile;
    float top[2] = {m[0], m[1]};
#pragma unroll
    for (int j = 0; j < 2; ++j) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        float x = s[j][e] * q_scale;
        if (soft_capped) x = soft_cap * tanhf(x / soft_cap) * kLog2e;
        if (tile_first + j * 8 + static_cast<int>(2 * t) + (e % 2) >= end) {
          x = negative_infinity();
        }
        s[j][e] = x;
        top[e / 2] = fmaxf(top[e / 2], x);
      }
    }
    float rescale[2];
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      top[r] = fmaxf(top[r], shuffle_xor(top[r], 1));
      top[r] = fmaxf(top[r], shuffle_xor(top[r], 2));
      // Nothing seen yet: every weight is 2^-inf = 0 against any finite reference.
      const float ref = top[r] == negative_infinity() ? 0.0f : top[r];
      rescale[r] = fast_exp2(m[r] - ref);
      m[r] = top[r];
      float sum = 0.0f;
#pragma unroll
      for (int j = 0; j < 2; ++j) {
#pragma unroll
        for (int e = 2 * r; e < 2 * r + 2; ++e) {
          s[j][e] = fast_exp2(s[j][e] - ref);
          sum += s[j][e];
        }
      }
      l[r] = fmaf(l[r], rescale[r], sum);
    }
    // P as the A fragment of a 16 x 16 tile (keys as its columns).
    const unsigned pa[4] = {pack2(s[0][0], s[0][1], T{}), pack2(s[0][2], s[0][3], T{}),
                            pack2(s[1][0], s[1][1], T{}), pack2(s[1][2], s[1][3], T{})};
#pragma unroll
    for (int n = 0; n < kDimTiles; n += 2) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        o[n][e] *= rescale[e / 2];
        o[n + 1][e] *= rescale[e / 2];
      }
      unsigned b[4];
      load_matrix_x4_trans(b, stage + kTileBytes + tile_offset(v_row, n + matrix / 2));
      mma_16816(o[n], pa, b[0], b[1], T{});
      mma_16816(o[n + 1], pa, b[2], b[3], T{});
    }
    __syncwarp();  // the stage is read before a later issue refills it
  }
  copy_async_wait<0>();
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    l[r] += shuffle_xor(l[r], 1);
    l[r] += shuffle_xor(l[r], 2);
  }

  // The warps combined, where their rings were: each row's sum and output weighted by
  // 2^(the warp's maximum - the block's).
  __syncthreads();
  float* warp_out = reinterpret_cast<float*>(smem);  // [kWarps][16][head_dim]
  float* warp_max = warp_out + kWarps * kTile * head_dim;
  float* warp_sum = warp_max + kWarps * kTile;
#pragma unroll
  for (int n = 0; n < kDimTiles; ++n) {
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const unsigned row = g + (e / 2) * 8;
      warp_out[(warp * kTile + row) * head_dim + n * 8 + 2 * t + e % 2] = o[n][e];
    }
  }
  if (t == 0) {
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      warp_max[warp * kTile + g + r * 8] = m[r];
      warp_sum[warp * kTile + g + r * 8] = l[r];
    }
  }
  __syncthreads();
  for (unsigned idx = threadIdx.x; idx < G * head_dim; idx += kThreads) {
    const unsigned row = idx / head_dim;
    const unsigned d = idx % head_dim;
    float top = negative_infinity();
#pragma unroll
    for (int w = 0; w < kWarps; ++w) top = fmaxf(top, warp_max[w * kTile + row]);
    const float ref = top == negative_infinity() ? 0.0f : top;
    float total = 0.0f;
    float value = 0.0f;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) {
      const float weight = fast_exp2(warp_max[w * kTile + row] - ref);
      total = fmaf(warp_sum[w * kTile + row], weight, total);
      value = fmaf(warp_out[(w * kTile + row) * head_dim + d], weight, value);
    }
    const float o_value = total > 0.0f ? value / total : 0.0f;
    if (splits == 1) {
      out[(out_row + row) * head_dim + d] = from_float<T>(o_value);
    } else {
      const unsigned long long at = (out_row + row) * splits + split;
      partial_out[at * head_dim + d] = o_value;
      if (d == 0) partial_lse[at] = total > 0.0f ? ref + __log2f(total) : negative_infinity();
    }
  }
}

// The splits of one (sequence, query head) combined: each split's output weighted by
// 2^(its lse - the largest). A row of head_dim floats is read as float4s by head_dim / 4
// lanes, and the block's lane groups take every kCombineGroups-th split each, keeping a
// running maximum as flash attention does, so that a split's lse and output are read
// together and no load waits for another's result; the groups meet in shared memory. A
// sequence with no keys gives zeros.
template <typename T>
__global__ void __launch_bounds__(kreg::contracts::decode_attention::kCombineThreads)
    decode_attention_combine(const float* __restrict__ partial_out,
                             const float* __restrict__ partial_lse, T* __restrict__ out,
                             unsigned splits) {
  KREG_SIGNATURE(decode_attention_combine<T>, kreg::contracts::decode_attention::DecodeCombine<T>);
  using namespace kreg;
  constexpr unsigned kThreads = kreg::contracts::decode_attention::kCombineThreads;
  constexpr unsigned kLanes = head_dim / 4;
  constexpr unsigned kGroups = kThreads / kLanes;
  __shared__ float4 sums[kGroups][kLanes];
  __shared__ float tops[kGroups];
  __shared__ float totals[kGroups];
  const unsigned long long row =
      static_cast<unsigned long long>(blockIdx.y) * gridDim.x + blockIdx.x;
  const float* lse = partial_lse + row * splits;
  const unsigned lane = threadIdx.x % kLanes;
  const unsigned group = threadIdx.x / kLanes;
  const float4* parts = reinterpret_cast<const float4*>(partial_out + row * splits * head_dim);
  wait_for_prior_grid();  // the partials are the first kernel's
  float top = negative_infinity();  // the largest lse seen, base 2
  float total = 0.0f;               // the weights' sum against it
  float4 acc = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
#pragma unroll 8
  for (unsigned s = group; s < splits; s += kGroups) {
    const float e = lse[s];
    const float4 v = parts[static_cast<unsigned long long>(s) * kLanes + lane];
    const float next = fmaxf(top, e);
    // A split without keys (lse -inf) weighs 0 against any finite reference.
    const float ref = next == negative_infinity() ? 0.0f : next;
    const float rescale = exp2f(top - ref);
    const float w = exp2f(e - ref);
    top = next;
    total = fmaf(total, rescale, w);
    acc.x = fmaf(acc.x, rescale, w * v.x);
    acc.y = fmaf(acc.y, rescale, w * v.y);
    acc.z = fmaf(acc.z, rescale, w * v.z);
    acc.w = fmaf(acc.w, rescale, w * v.w);
  }
  sums[group][lane] = acc;
  if (lane == 0) {
    tops[group] = top;
    totals[group] = total;
  }
  __syncthreads();
  if (group != 0) return;
  float best = negative_infinity();
#pragma unroll
  for (unsigned j = 0; j < kGroups; ++j) best = fmaxf(best, tops[j]);
  const float ref = best == negative_infinity() ? 0.0f : best;
  float4 sum = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  float weight_sum = 0.0f;
#pragma unroll
  for (unsigned j = 0; j < kGroups; ++j) {
    const float w = exp2f(tops[j] - ref);
    const float4 v = sums[j][lane];
    weight_sum = fmaf(totals[j], w, weight_sum);
    sum.x = fmaf(v.x, w, sum.x);
    sum.y = fmaf(v.y, w, sum.y);
    sum.z = fmaf(v.z, w, sum.z);
    sum.w = fmaf(v.w, w, sum.w);
  }
  const float inverse = weight_sum > 0.0f ? 1.0f / weight_sum : 0.0f;
  T* o = out + row * head_dim + lane * 4;
  o[0] = from_float<T>(sum.x * inverse);
  o[1] = from_float<T>(sum.y * inverse);
  o[2] = from_float<T>(sum.z * inverse);
  o[3] = from_float<T>(sum.w * inverse);
}
