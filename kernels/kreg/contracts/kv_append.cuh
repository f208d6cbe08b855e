#pragma once
// What kernels/kv_append.cu and the op that launches it agree on (see activation.cuh).

namespace kreg::contracts::kv_append {

// bool, default false: K turns by rotary position embedding on its way into the cache.
inline constexpr int kRope = 200;
// bool, default false: the rotation's NeoX layout (pairs across the two halves of a head).
inline constexpr int kNeox = 201;
// bool, default false: slots are int64 instead of int32.
inline constexpr int kWideSlots = 202;

// One block per new token: its K and V rows, all KV heads, go to row `slots[t]` of the caches
// (page slots[t] / page_size, row slots[t] % page_size: the caches' first two dimensions
// flattened). A slot outside [0, cache_slots) is skipped.
template <class T>
using KvAppend = void(const T* k, const T* v, const void* slots, const int* positions, T* k_cache,
                      T* v_cache, unsigned kv_heads, unsigned head_dim, long long cache_slots,
                      float log2_base);

}  // namespace kreg::contracts::kv_append
