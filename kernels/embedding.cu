// Embedding gather: out[r, :] = table[ids[r], :], one block per id. An id outside the table
// (negative, or not below `vocab`) gives a row of zeros: a device-side error would poison the
// whole context.
// kreg:entry embedding_f32_i32=embedding<float, int>
// kreg:entry embedding_f16_i32=embedding<kreg::half, int>
// kreg:entry embedding_bf16_i32=embedding<kreg::bfloat16, int>
// kreg:entry embedding_f32_i64=embedding<float, long long>
// kreg:entry embedding_f16_i64=embedding<kreg::half, long long>
// kreg:entry embedding_bf16_i64=embedding<kreg::bfloat16, long long>
#include <kreg/contracts/embedding.cuh>
#include <kreg/device/kernel.cuh>
#include <kreg/device/vec.cuh>

// The op launches up to 1024 threads a block; the bound keeps every size launchable.
template <typename T, typename I>
__global__ void __launch_bounds__(1024)
    embedding(const T* __restrict__ table, const I* __restrict__ ids, T* __restrict__ out,
              unsigned cols, unsigned long long vocab) {
  KREG_SIGNATURE((embedding<T, I>), kreg::contracts::embedding::Embedding<T, I>);
  using namespace kreg;
  const I id = ids[blockIdx.x];
  const bool inside = id >= 0 && static_cast<unsigned long long>(id) < vocab;
  const T* src = table + (inside ? static_cast<unsigned long long>(id) : 0ULL) * cols;
  T* dst = out + static_cast<unsigned long long>(blockIdx.x) * cols;
  if (cols % kVecWidth == 0 && vec_aligned(src) && vec_aligned(dst)) {
    vec8<T> zero;
#pragma unroll
    for (int k = 0; k < kVecWidth; ++k) zero.v[k] = from_float<T>(0.0f);
    // Up to kRowVectors vectors a thread, all read before any is written, so that they are in
    // flight together.
    const unsigned step = blockDim.x * kVecWidth;
    for (unsigned first = threadIdx.x * kVecWidth; first < cols; first += step * kRowVectors) {
      vec8<T> v[kRowVectors];
#pragma unroll
      for (unsigned j = 0; j < kRowVectors; ++j) {
        const unsigned c = first + j * step;
        if (c < cols) v[j] = inside ? load8(src + c) : zero;
      }
#pragma unroll
      for (unsigned j = 0; j < kRowVectors; ++j) {
        const unsigned c = first + j * step;
        if (c < cols) store8(dst + c, v[j]);
      }
    }
  } else {
    for (unsigned c = threadIdx.x; c < cols; c += blockDim.x) {
      dst[c] = inside ? src[c] : from_float<T>(0.0f);
    }
  }
}
