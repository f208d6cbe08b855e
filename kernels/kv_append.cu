// The KV-cache append of a decode or prefill step: each new token's K and V rows, every KV
// head, are written into its slot of a paged cache, K optionally turned by rotary position
// embedding on the way (the pass over K that a separate rope would take is saved).
//
//   k, v              [tokens, kv_heads, head_dim]
//   k_cache, v_cache  [pages, page_size, kv_heads, head_dim], written in place
//
// One block per token: it copies V, then writes K as it is or turned (the rotation of
// <kreg/device/rotary.cuh>, the rope kernel's), eight elements per access where the
// alignment allows. Padding tokens carry a negative slot and write nothing.
// Constants and parameters: kreg/contracts/kv_append.cuh.
// kreg:entry kv_append_f16=kv_append<kreg::half>
// kreg:entry kv_append_bf16=kv_append<kreg::bfloat16>
// kreg:specialization 200:b1
// kreg:specialization 200:b1|201:b1
#include <kreg/contracts/kv_append.cuh>
#include <kreg/device/kernel.cuh>
#include <kreg/device/rotary.cuh>
#include <kreg/device/vec.cuh>

KREG_CONSTANT_DEFAULT(bool, rotated, kreg::contracts::kv_append::kRope, false);
KREG_CONSTANT_DEFAULT(bool, neox, kreg::contracts::kv_append::kNeox, false);
KREG_CONSTANT_DEFAULT(bool, wide_slots, kreg::contracts::kv_append::kWideSlots, false);

template <typename T>
__global__ void kv_append(const T* __restrict__ k, const T* __restrict__ v,
                          const void* __restrict__ slots, const int* __restrict__ positions,
                          T* __restrict__ k_cache, T* __restrict__ v_cache, unsigned kv_heads,
                          unsigned head_dim, long long cache_slots, float log2_base) {
  KREG_SIGNATURE(kv_append<T>, kreg::contracts::kv_append::KvAppend<T>);
  using namespace kreg;
  __shared__ float cosines[rotated ? kRotaryTable : 1];
  __shared__ float sines[rotated ? kRotaryTable : 1];
  const unsigned t = blockIdx.x;
  const long long slot = wide_slots ? static_cast<const long long*>(slots)[t]
                                    : static_cast<long long>(static_cast<const int*>(slots)[t]);
  // The whole block agrees, so an early return leaves no thread at a barrier.
  if (slot < 0 || slot >= cache_slots) return;
  const unsigned long long width = static_cast<unsigned long long>(kv_heads) * head_dim;
  const unsigned long long from = static_cast<unsigned long long>(t) * width;
  const unsigned long long to = static_cast<unsigned long long>(slot) * width;
  const T* kr = k + from;
  const T* vr = v + from;
  T* kc = k_cache + to;
  T* vc = v_cache + to;

  // Eight elements per access where both rows allow it.
  const auto copy_row = [&](const T* from_row, T* to_row) {
    if (vec_aligned(from_row) && vec_aligned(to_row) && width % kVecWidth == 0) {
      for (unsigned long long e = threadIdx.x * kVecWidth; e < width; e += blockDim.x * kVecWidth) {
        store8(to_row + e, load8(from_row + e));
      }
    } else {
      for (unsigned long long e = threadIdx.x; e < width; e += blockDim.x) to_row[e] = from_row[e];
    }
  };
  copy_row(vr, vc);
  if (rotated) {
    rotate_token<neox>(kr, kc, kv_heads, head_dim, static_cast<float>(positions[t]), log2_base,
                       cosines, sines);
  } else {
    copy_row(kr, kc);
  }
}
