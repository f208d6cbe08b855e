// Rotary position embedding over x of shape tokens x heads x head_dim (row-major), in float:
// each pair (x0, x1) of a head turns by the angle position * base^(-2i / head_dim), where i
// numbers the pair. The pairs are adjacent elements (2i, 2i + 1), or, in the NeoX layout, the
// two halves of the head (i, i + head_dim / 2). A token's position is positions[t], or
// offset + t without a positions array. One block per token: the block first takes the
// token's cosines and sines once (they do not depend on the head), then turns every head,
// eight elements per access where the layout and alignment allow.
// Constants and parameters: kreg/contracts/rope.cuh.
// kreg:entry rope_f32=rope<float>
// kreg:entry rope_f16=rope<kreg::half>
// kreg:entry rope_bf16=rope<kreg::bfloat16>
// kreg:specialization 200:b1
// kreg:specialization 201:b1
// kreg:specialization 200:b1|201:b1
#include <kreg/contracts/rope.cuh>
#include <kreg/device/kernel.cuh>
#include <kreg/device/vec.cuh>

KREG_CONSTANT_DEFAULT(bool, neox, kreg::contracts::rope::kNeox, false);
KREG_CONSTANT_DEFAULT(bool, has_positions, kreg::contracts::rope::kHasPositions, false);

// Heads of up to 2 * kTable elements take their angles from a table in shared memory.
constexpr unsigned kTable = 1024;

__device__ inline void turn(float x0, float x1, float c, float s, float& y0, float& y1) {
  y0 = x0 * c - x1 * s;
  y1 = x0 * s + x1 * c;
}

template <typename T>
__global__ void rope(const T* __restrict__ x, const int* __restrict__ positions,
                     T* __restrict__ out, unsigned heads, unsigned head_dim, long long offset,
                     float log2_base) {
  KREG_SIGNATURE(rope<T>, kreg::contracts::rope::Rope<T>);
  using namespace kreg;
  __shared__ float cosines[kTable];
  __shared__ float sines[kTable];
  const unsigned t = blockIdx.x;
  const float position = has_positions ? static_cast<float>(positions[t])
                                       : static_cast<float>(offset + static_cast<long long>(t));
  const unsigned half = head_dim / 2;
  const bool table = half <= kTable;
  auto angle = [&](unsigned i, float& c, float& s) {
    const float inv_freq =
        exp2f(-2.0f * static_cast<float>(i) / static_cast<float>(head_dim) * log2_base);
    sincosf(position * inv_freq, &s, &c);
  };
  auto lookup = [&](unsigned i, float& c, float& s) {
    if (table) {
      c = cosines[i];
      s = sines[i];
    } else {
      angle(i, c, s);
    }
  };
  if (table) {
    for (unsigned i = threadIdx.x; i < half; i += blockDim.x) angle(i, cosines[i], sines[i]);
    __syncthreads();
  }
  const unsigned long long row = static_cast<unsigned long long>(t) * heads * head_dim;
  const T* xr = x + row;
  T* outr = out + row;
  const bool vector = vec_aligned(xr) && vec_aligned(outr) &&
                      (neox ? half % kVecWidth == 0 : head_dim % kVecWidth == 0);
  if (vector && neox) {
    // Eight pairs (i, i + half) per step: a vector from each half of the head.
    const unsigned per_head = half / kVecWidth;
    for (unsigned q = threadIdx.x; q < heads * per_head; q += blockDim.x) {
      const unsigned at = (q / per_head) * head_dim;
      const unsigned i = (q % per_head) * kVecWidth;
      const vec8<T> a = load8(xr + at + i);
      const vec8<T> b = load8(xr + at + half + i);
      float ya[kVecWidth];
      float yb[kVecWidth];
#pragma unroll
      for (int k = 0; k < kVecWidth; ++k) {
        float c;
        float s;
        lookup(i + k, c, s);
        turn(to_float(a.v[k]), to_float(b.v[k]), c, s, ya[k], yb[k]);
      }
      store8(outr + at + i, pack8<T>(ya));
      store8(outr + at + half + i, pack8<T>(yb));
    }
    return;
  }
  if (vector) {
    // Four adjacent pairs (2i, 2i + 1) per vector.
    for (unsigned q = threadIdx.x; q < heads * head_dim / kVecWidth; q += blockDim.x) {
      const unsigned e = q * kVecWidth;
      const unsigned i = (e % head_dim) / 2;
      const vec8<T> a = load8(xr + e);
      float y[kVecWidth];
#pragma unroll
      for (int k = 0; k < kVecWidth / 2; ++k) {
        float c;
        float s;
        lookup(i + k, c, s);
        turn(to_float(a.v[2 * k]), to_float(a.v[2 * k + 1]), c, s, y[2 * k], y[2 * k + 1]);
      }
      store8(outr + e, pack8<T>(y));
    }
    return;
  }
  for (unsigned p = threadIdx.x; p < heads * half; p += blockDim.x) {
    const unsigned at = (p / half) * head_dim;
    const unsigned i = p % half;
    float c;
    float s;
    lookup(i, c, s);
    const unsigned a = neox ? i : 2 * i;
    const unsigned b = neox ? i + half : 2 * i + 1;
    float y0;
    float y1;
    turn(to_float(xr[at + a]), to_float(xr[at + b]), c, s, y0, y1);
    outr[at + a] = from_float<T>(y0);
    outr[at + b] = from_float<T>(y1);
  }
}
