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
// log-sum-exp; with one split the first kernel writes the output itself. Scores, softmax and
// sums are in float, in base 2 (the scale carries log2(e)), with the softmax kept online.
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
#include <kreg/device/kernel.cuh>
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

constexpr int kThreads = 128;
// Lanes that hold one row of a head, eight elements (16 bytes) each, and rows per warp.
constexpr int kLanes = head_dim / kVecWidth;
constexpr int kRowsPerWarp = 32 / kLanes;
// Token groups of a block: each keeps its own running softmax over the tokens it reads.
constexpr int kGroups = kThreads / 32 * kRowsPerWarp;
// Tokens a group has in flight at once: enough loads to cover the memory's latency, few
// enough registers for three blocks an SM.
constexpr int kUnroll = group_size <= 4 ? 4 : 2;
constexpr float kLog2e = 1.4426950408889634f;

__device__ inline int clamp_to(int v, int lo, int hi) {
  return v < lo ? lo : (v > hi ? hi : v);
}

// Keys and values are read once: they bypass L1, which keeps the block table and the query.
template <class T>
__device__ inline vec8<T> load_stream(const T* p, bool vector) {
  vec8<T> r;
  if (vector) {
    unsigned* w = reinterpret_cast<unsigned*>(&r);
    asm("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
        : "=r"(w[0]), "=r"(w[1]), "=r"(w[2]), "=r"(w[3])
        : "l"(p));
  } else {
#pragma unroll
    for (int k = 0; k < kVecWidth; ++k) r.v[k] = p[k];
  }
  return r;
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
  const unsigned split = blockIdx.x;
  const unsigned splits = gridDim.x;
  const unsigned kv_head = blockIdx.y;
  const unsigned seq = blockIdx.z;
  const unsigned lane = threadIdx.x % 32;
  const unsigned part = lane % kLanes;  // which eight elements of a row
  const unsigned token_group = threadIdx.x / 32 * kRowsPerWarp + lane / kLanes;
  const unsigned q_heads = kv_heads * G;
  const bool vector = vec_aligned(q) && vec_aligned(k_cache) && vec_aligned(v_cache);

  // The keys this block reads: its split of the sequence, within the window. A length past
  // what the block table holds is cut to it, so no read leaves the table (the op keeps the
  // table's capacity below 2^31 tokens).
  const int capacity = static_cast<int>(table_stride * page_size);
  const int length = clamp_to(seq_lens[seq], 0, capacity);
  int begin = static_cast<int>(split * split_tokens);
  const int end = begin + static_cast<int>(split_tokens) < length
                      ? begin + static_cast<int>(split_tokens)
                      : length;
  if (windowed && length - 1 - window_left > begin) begin = length - 1 - window_left;

  // The group's queries, scaled so that a dot product is a base-2 logit (or, soft-capped, the
  // scaled logit the cap takes).
  const float q_scale = soft_capped ? scale : scale * kLog2e;
  float qf[G][kVecWidth];
#pragma unroll
  for (int g = 0; g < G; ++g) {
    const unsigned long long head =
        static_cast<unsigned long long>(seq) * q_heads + kv_head * G + g;
    const vec8<T> v = vector ? load8(q + head * head_dim + part * kVecWidth)
                             : load_stream(q + head * head_dim + part * kVecWidth, false);
#pragma unroll
    for (int k = 0; k < kVecWidth; ++k) qf[g][k] = to_float(v.v[k]) * q_scale;
  }

  float acc[G][kVecWidth];
  float m[G];  // running maximum, base 2
  float l[G];  // running sum of 2^(s - m)
#pragma unroll
  for (int g = 0; g < G; ++g) {
    m[g] = negative_infinity();
    l[g] = 0.0f;
#pragma unroll
    for (int k = 0; k < kVecWidth; ++k) acc[g][k] = 0.0f;
  }

  const unsigned long long row_stride = static_cast<unsigned long long>(kv_heads) * head_dim;
  const T* k_head =
      k_cache + static_cast<unsigned long long>(kv_head) * head_dim + part * kVecWidth;
  const T* v_head =
      v_cache + static_cast<unsigned long long>(kv_head) * head_dim + part * kVecWidth;
  const int* table = block_table + static_cast<unsigned long long>(seq) * table_stride;

  // A group's kUnroll consecutive tokens from `first`: one division for the page of the first,
  // the rest step on from it. Tokens past the end read nothing and are masked below.
  const auto load_tile = [&](int first, vec8<T>(&kv)[kUnroll], vec8<T>(&vv)[kUnroll]) {
    const auto start = static_cast<unsigned>(first);
    const unsigned entry = start / page_size;
    const unsigned offset = start - entry * page_size;
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      if (first + u < end) {
        unsigned at = entry;
        unsigned in_page = offset + u;
        if (in_page >= page_size) {
          at += in_page / page_size;
          in_page %= page_size;
        }
        const auto page = static_cast<unsigned long long>(table[at]);
        const unsigned long long row = page * page_size + in_page;
        kv[u] = load_stream(k_head + row * row_stride, vector);
        vv[u] = load_stream(v_head + row * row_stride, vector);
      } else {
#pragma unroll
        for (int k = 0; k < kVecWidth; ++k) {
          kv[u].v[k] = T(0.0f);
          vv[u].v[k] = T(0.0f);
        }
      }
    }
  };

  // Every thread of the block runs the same iterations (the shuffles below take whole warps).
  // The next tile's loads are issued before this one's arithmetic, so that a warp always has
  // memory in flight.
  constexpr int kStep = kGroups * kUnroll;
  const int mine = static_cast<int>(token_group) * kUnroll;
  vec8<T> kv[kUnroll];
  vec8<T> vv[kUnroll];
  if (begin < end) load_tile(begin + mine, kv, vv);
  for (int base = begin; base < end; base += kStep) {
    const int first = base + mine;
    vec8<T> next_k[kUnroll];
    vec8<T> next_v[kUnroll];
    if (base + kStep < end) load_tile(first + kStep, next_k, next_v);

    float s[G][kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      float kf[kVecWidth];
#pragma unroll
      for (int k = 0; k < kVecWidth; ++k) kf[k] = to_float(kv[u].v[k]);
#pragma unroll
      for (int g = 0; g < G; ++g) {
        float dot = 0.0f;
#pragma unroll
        for (int k = 0; k < kVecWidth; ++k) dot = fmaf(qf[g][k], kf[k], dot);
        s[g][u] = dot;
      }
    }
    // The row's lanes sum their parts; every lane of the row gets the whole dot product.
#pragma unroll
    for (int offset = kLanes / 2; offset > 0; offset /= 2) {
#pragma unroll
      for (int g = 0; g < G; ++g) {
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) s[g][u] += shuffle_xor(s[g][u], offset);
      }
    }

    float vf[kUnroll][kVecWidth];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
#pragma unroll
      for (int k = 0; k < kVecWidth; ++k) vf[u][k] = to_float(vv[u].v[k]);
    }
#pragma unroll
    for (int g = 0; g < G; ++g) {
      float top = m[g];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        if (soft_capped) s[g][u] = soft_cap * tanhf(s[g][u] / soft_cap) * kLog2e;
        if (first + u >= end) s[g][u] = negative_infinity();
        top = fmaxf(top, s[g][u]);
      }
      // Nothing seen yet: every weight is 2^-inf = 0 against any finite reference.
      const float ref = top == negative_infinity() ? 0.0f : top;
      const float rescale = fast_exp2(m[g] - ref);
      float p[kUnroll];
      float sum = 0.0f;
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        p[u] = fast_exp2(s[g][u] - ref);
        sum += p[u];
      }
      l[g] = fmaf(l[g], rescale, sum);
      m[g] = top;
#pragma unroll
      for (int k = 0; k < kVecWidth; ++k) {
        float a = acc[g][k] * rescale;
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) a = fmaf(p[u], vf[u][k], a);
        acc[g][k] = a;
      }
    }
    if (base + kStep < end) {
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        kv[u] = next_k[u];
        vv[u] = next_v[u];
      }
    }
  }

  // The block's groups combined, one head at a time: each group's sum weighted by 2^(its
  // maximum - the block's).
  __shared__ float group_max[kGroups][G];
  __shared__ float group_sum[kGroups][G];
  __shared__ float partial[kGroups][head_dim];
  if (part == 0) {
#pragma unroll
    for (int g = 0; g < G; ++g) {
      group_max[token_group][g] = m[g];
      group_sum[token_group][g] = l[g];
    }
  }
  __syncthreads();
  const unsigned long long out_row = static_cast<unsigned long long>(seq) * q_heads + kv_head * G;
#pragma unroll
  for (int g = 0; g < G; ++g) {
    float top = negative_infinity();
#pragma unroll
    for (int j = 0; j < kGroups; ++j) top = fmaxf(top, group_max[j][g]);
    const float ref = top == negative_infinity() ? 0.0f : top;
    float total = 0.0f;
#pragma unroll
    for (int j = 0; j < kGroups; ++j) total += group_sum[j][g] * fast_exp2(group_max[j][g] - ref);
    const float weight = fast_exp2(m[g] - ref);
#pragma unroll
    for (int k = 0; k < kVecWidth; ++k)
      partial[token_group][part * kVecWidth + k] = acc[g][k] * weight;
    __syncthreads();
    const float inverse = total > 0.0f ? 1.0f / total : 0.0f;
    for (unsigned d = threadIdx.x; d < head_dim; d += kThreads) {
      float o = 0.0f;
#pragma unroll
      for (int j = 0; j < kGroups; ++j) o += partial[j][d];
      o *= inverse;
      if (splits == 1) {
        out[(out_row + g) * head_dim + d] = from_float<T>(o);
      } else {
        const unsigned long long at = (out_row + g) * splits + split;
        partial_out[at * head_dim + d] = o;
        if (d == 0) partial_lse[at] = total > 0.0f ? ref + __log2f(total) : negative_infinity();
      }
    }
    __syncthreads();
  }
}

// The splits of one (sequence, query head) combined: each split's output weighted by
// 2^(its lse - the largest), a thread per dimension. A sequence with no keys gives zeros.
template <typename T>
__global__ void __launch_bounds__(256)
    decode_attention_combine(const float* __restrict__ partial_out,
                             const float* __restrict__ partial_lse, T* __restrict__ out,
                             unsigned splits) {
  KREG_SIGNATURE(decode_attention_combine<T>, kreg::contracts::decode_attention::DecodeCombine<T>);
  using namespace kreg;
  __shared__ float weights[kreg::contracts::decode_attention::kMaxSplits];
  __shared__ float scratch[32];
  const unsigned long long row =
      static_cast<unsigned long long>(blockIdx.y) * gridDim.x + blockIdx.x;
  const float* lse = partial_lse + row * splits;
  float top = negative_infinity();
  for (unsigned s = threadIdx.x; s < splits; s += blockDim.x) top = fmaxf(top, lse[s]);
  top = block_max(top, scratch);
  const float ref = top == negative_infinity() ? 0.0f : top;
  float sum = 0.0f;
  for (unsigned s = threadIdx.x; s < splits; s += blockDim.x) {
    weights[s] = exp2f(lse[s] - ref);
    sum += weights[s];
  }
  const float total = block_sum(sum, scratch);  // its barrier also publishes the weights
  // The splits' loads are independent: unrolled, several are in flight at once.
  const float* parts = partial_out + row * splits * head_dim + threadIdx.x;
  float o = 0.0f;
#pragma unroll 8
  for (unsigned s = 0; s < splits; ++s) {
    o = fmaf(weights[s], parts[static_cast<unsigned long long>(s) * head_dim], o);
  }
  out[row * head_dim + threadIdx.x] = from_float<T>(total > 0.0f ? o / total : 0.0f);
}
