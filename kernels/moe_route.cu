// The small kernels of a mixture-of-experts layer: the router (softmax and top-k), the
// dispatch (the tokens' choices sorted by expert, cut into tiles for the grouped products of
// kernels/moe_matmul.cu) and the combine (each token's expert outputs, weighted and summed).
//
// moe_route: one warp a token holds its logits in registers (expert lane + 32 j), takes their
// softmax, then picks the largest top_k by as many warp-wide arg-max rounds.
// moe_dispatch: one block counts the choices of each expert in shared memory, scans the counts
// into first rows and tile counts, writes the tiles, and places each choice at its expert's
// next free row (a shared-memory atomic: the order within an expert is unspecified, and no
// result depends on it, since each row of a product is computed alone and the combine sums a
// token's choices in their own order).
// moe_combine: one block a token, 8 elements a thread at a time.
// Constants and parameters: kreg/contracts/moe.cuh.
// kreg:entry moe_route_f32=moe_route<float>
// kreg:entry moe_route_f16=moe_route<kreg::half>
// kreg:entry moe_route_bf16=moe_route<kreg::bfloat16>
// kreg:entry moe_combine_f16=moe_combine<kreg::half>
// kreg:entry moe_combine_bf16=moe_combine<kreg::bfloat16>
#include <kreg/contracts/moe.cuh>
#include <kreg/device/kernel.cuh>
#include <kreg/device/vec.cuh>

namespace moe {

namespace mc = kreg::contracts::moe;

constexpr int kPerLane = mc::kMaxExperts / 32;
constexpr int kNone = 0x7fffffff;  // no expert picked yet

// A lane's best candidate: its logit and expert.
struct Pick {
  float key;
  int expert;
};

// The better of two picks: a higher logit, or the lower expert on a tie; a lane with none
// loses to any.
__device__ inline Pick better(Pick a, Pick b) {
  if (b.expert == kNone) return a;
  if (a.expert == kNone) return b;
  if (b.key > a.key || (b.key == a.key && b.expert < a.expert)) return b;
  return a;
}

// Inclusive prefix sums over a block of at most 1024 threads; `scratch` holds 32 ints of
// shared memory. Every thread gets its own sum and, in `total`, the block's.
__device__ inline int block_scan(int v, int* scratch, int& total) {
  const int lane = static_cast<int>(threadIdx.x % 32);
  const int warp = static_cast<int>(threadIdx.x / 32);
#pragma unroll
  for (int d = 1; d < 32; d *= 2) {
    const int up = __shfl_up_sync(0xffffffffu, v, d);
    if (lane >= d) v += up;
  }
  __syncthreads();
  if (lane == 31) scratch[warp] = v;
  __syncthreads();
  const int warps = static_cast<int>((blockDim.x + 31) / 32);
  if (warp == 0) {
    int w = lane < warps ? scratch[lane] : 0;
#pragma unroll
    for (int d = 1; d < 32; d *= 2) {
      const int up = __shfl_up_sync(0xffffffffu, w, d);
      if (lane >= d) w += up;
    }
    scratch[lane] = w;
  }
  __syncthreads();
  total = scratch[warps - 1];
  return v + (warp > 0 ? scratch[warp - 1] : 0);
}

// One token's route, by its warp, for up to 32 * PerLane experts: expert lane + 32 j is
// key[j] of a lane. Choice r ends in lane r, which writes it.
template <int PerLane, typename T>
__device__ inline void route_token(const T* __restrict__ row, float* __restrict__ weights,
                                   int* __restrict__ ids, int experts, int top_k,
                                   bool renormalize) {
  using namespace kreg;
  const int lane = static_cast<int>(threadIdx.x % 32);
  // NaN sorts as -inf; it still makes the softmax's sum, and so every weight, NaN.
  float key[PerLane];
#pragma unroll
  for (int j = 0; j < PerLane; ++j) {
    const int e = lane + 32 * j;
    key[j] = e < experts ? to_float(row[e]) : negative_infinity();
  }
  float top = negative_infinity();
  bool nan = false;
#pragma unroll
  for (int j = 0; j < PerLane; ++j) {
    nan = nan || key[j] != key[j];
    if (key[j] != key[j]) key[j] = negative_infinity();
    top = fmaxf(top, key[j]);
  }
  top = warp_reduce(top, Max{});
  // A row of -inf logits: every expert is equally likely.
  const bool flat = top == negative_infinity();
  float sum = 0.0f;
#pragma unroll
  for (int j = 0; j < PerLane; ++j) {
    if (lane + 32 * j < experts && !flat) sum += __expf(key[j] - top);
  }
  sum = warp_reduce(sum, Sum{});
  if (__any_sync(0xffffffffu, nan)) sum = __int_as_float(0x7fc00000);

  unsigned taken = 0;  // bit j: expert lane + 32 j is picked
  float mine_weight = 0.0f;
  int mine_id = 0;
  // Not unrolled: the scan below is the body, and top_k rounds of it unrolled would be code
  // that runs once from a cold instruction cache.
#pragma unroll 1
  for (int r = 0; r < top_k; ++r) {
    Pick best{0.0f, kNone};
#pragma unroll
    for (int j = 0; j < PerLane; ++j) {
      const int e = lane + 32 * j;
      if (e < experts && !(taken >> j & 1u) && (best.expert == kNone || key[j] > best.key)) {
        best = {key[j], e};
      }
    }
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) {
      const Pick other{__shfl_xor_sync(0xffffffffu, best.key, offset),
                       __shfl_xor_sync(0xffffffffu, best.expert, offset)};
      best = better(best, other);
    }
    if (best.expert % 32 == lane) taken |= 1u << (best.expert / 32);
    if (lane == r) {
      mine_weight = flat ? 1.0f : __expf(best.key - top);
      mine_id = best.expert;
    }
  }
  const float chosen_sum = warp_reduce(mine_weight, Sum{});  // lanes past top_k hold 0
  const float divisor = renormalize ? chosen_sum : (flat ? static_cast<float>(experts) : sum);
  const float nan_or_one = sum != sum ? sum : 1.0f;
  if (lane < top_k) {
    weights[lane] = mine_weight / divisor * nan_or_one;
    ids[lane] = mine_id;
  }
}

}  // namespace moe

template <typename T>
__global__ void __launch_bounds__(kreg::contracts::moe::kRouteThreads)
    moe_route(const T* __restrict__ logits, float* __restrict__ weights, int* __restrict__ ids,
              int tokens, int experts, int top_k, int renormalize) {
  KREG_SIGNATURE(moe_route<T>, kreg::contracts::moe::Route<T>);
  using namespace moe;
  const long long token = static_cast<long long>(blockIdx.x) * (mc::kRouteThreads / 32) +
                          static_cast<long long>(threadIdx.x / 32);
  if (token >= tokens) return;
  const T* row = logits + token * experts;
  float* w = weights + token * top_k;
  int* id = ids + token * top_k;
  // Registers for as many experts as there are, in three sizes.
  if (experts <= 64) {
    route_token<2>(row, w, id, experts, top_k, renormalize != 0);
  } else if (experts <= 256) {
    route_token<8>(row, w, id, experts, top_k, renormalize != 0);
  } else {
    route_token<kPerLane>(row, w, id, experts, top_k, renormalize != 0);
  }
}

extern "C" __global__ void __launch_bounds__(kreg::contracts::moe::kDispatchThreads)
    moe_dispatch(const int* __restrict__ ids, int* __restrict__ positions, int* __restrict__ order,
                 int* __restrict__ tiles, int slots, int experts, int tile_rows, int tile_count) {
  KREG_SIGNATURE(moe_dispatch, kreg::contracts::moe::Dispatch);
  using namespace moe;
  __shared__ int counts[mc::kMaxExperts];
  __shared__ int scratch[32];
  const int tid = static_cast<int>(threadIdx.x);
  const int threads = static_cast<int>(blockDim.x);
  for (int e = tid; e < experts; e += threads) counts[e] = 0;
  __syncthreads();
  for (int s = tid; s < slots; s += threads) {
    const int e = ids[s];
    if (e >= 0 && e < experts) atomicAdd(&counts[e], 1);
  }
  __syncthreads();
  // One expert a thread (experts <= blockDim.x): its first row and its first tile.
  const int count = tid < experts ? counts[tid] : 0;
  const int tiles_here = (count + tile_rows - 1) / tile_rows;
  int rows_total = 0;
  const int row0 = block_scan(count, scratch, rows_total) - count;
  int tiles_total = 0;
  const int tile0 = block_scan(tiles_here, scratch, tiles_total) - tiles_here;
  if (tid < experts) {
    counts[tid] = row0;  // from here on, the expert's next free row
    for (int i = 0; i < tiles_here; ++i) {
      int* t = tiles + 4 * (tile0 + i);
      t[0] = tid;
      t[1] = row0 + i * tile_rows;
      t[2] = min(tile_rows, count - i * tile_rows);
      t[3] = 0;
    }
  }
  for (int i = tiles_total + tid; i < tile_count; i += threads) {
    int* t = tiles + 4 * i;
    t[0] = -1;
    t[1] = t[2] = t[3] = 0;
  }
  __syncthreads();
  for (int s = tid; s < slots; s += threads) {
    const int e = ids[s];
    int p = -1;
    if (e >= 0 && e < experts) {
      p = atomicAdd(&counts[e], 1);
      order[p] = s;
    }
    positions[s] = p;
  }
  // Rows past the last taken one (ids outside the experts) belong to no slot.
  for (int p = rows_total + tid; p < slots; p += threads) order[p] = -1;
}

template <typename T>
__global__ void __launch_bounds__(kreg::contracts::moe::kCombineThreads)
    moe_combine(const T* __restrict__ y, const float* __restrict__ weights,
                const int* __restrict__ positions, T* __restrict__ out, int tokens, int top_k,
                int hidden) {
  KREG_SIGNATURE(moe_combine<T>, kreg::contracts::moe::Combine<T>);
  using namespace kreg;
  using namespace moe;
  const long long token = blockIdx.x;
  if (token >= tokens) return;
  int at[mc::kMaxTopK];
  float w[mc::kMaxTopK];
#pragma unroll
  for (int j = 0; j < mc::kMaxTopK; ++j) {
    at[j] = j < top_k ? positions[token * top_k + j] : -1;
    w[j] = at[j] >= 0 ? weights[token * top_k + j] : 0.0f;
  }
  for (int c = static_cast<int>(threadIdx.x) * kVecWidth; c < hidden;
       c += static_cast<int>(blockDim.x) * kVecWidth) {
    // Every load of the step before any sum, so that they are in flight together.
    vec8<T> v[mc::kMaxTopK];
#pragma unroll
    for (int j = 0; j < mc::kMaxTopK; ++j) {
      if (at[j] >= 0) v[j] = load8(y + static_cast<long long>(at[j]) * hidden + c);
    }
    float acc[kVecWidth] = {};
#pragma unroll
    for (int j = 0; j < mc::kMaxTopK; ++j) {
      if (at[j] < 0) continue;
#pragma unroll
      for (int i = 0; i < kVecWidth; ++i) acc[i] += w[j] * to_float(v[j].v[i]);
    }
    store8(out + token * hidden + c, pack8<T>(acc));
  }
}
