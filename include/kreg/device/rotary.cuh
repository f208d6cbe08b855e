#pragma once
// Rotary position embedding of one token's heads by one block, shared by the rope and
// kv_append kernels: pair i of a head, (2i, 2i + 1) or in NeoX's layout (i, i + head_dim / 2),
// turns by the angle position * base^(-2i / head_dim), in float.

#include <kreg/device/vec.cuh>

namespace kreg {

// Heads of up to 2 * kRotaryTable elements take their angles from a table in shared memory,
// filled once per token (the angles do not depend on the head); longer heads compute each.
inline constexpr unsigned kRotaryTable = 512;

// Every thread of the block calls it, with the same arguments (it may wait at a barrier).
// `cosines` and `sines` are kRotaryTable floats of shared memory each. `in` and `out` are the
// token's heads * head_dim elements, row-major.
template <bool Neox, class T>
__device__ inline void rotate_token(const T* __restrict__ in, T* __restrict__ out, unsigned heads,
                                    unsigned head_dim, float position, float log2_base,
                                    float* cosines, float* sines) {
  const unsigned half = head_dim / 2;
  const bool table = half <= kRotaryTable;
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
  auto turn = [](float x0, float x1, float c, float s, float& y0, float& y1) {
    y0 = x0 * c - x1 * s;
    y1 = x0 * s + x1 * c;
  };
  if (table) {
    for (unsigned i = threadIdx.x; i < half; i += blockDim.x) angle(i, cosines[i], sines[i]);
    __syncthreads();
  }
  const bool vector = vec_aligned(in) && vec_aligned(out) &&
                      (Neox ? half % kVecWidth == 0 : head_dim % kVecWidth == 0);
  if (vector && Neox) {
    // Eight pairs (i, i + half) per step: a vector from each half of the head.
    const unsigned per_head = half / kVecWidth;
    for (unsigned q = threadIdx.x; q < heads * per_head; q += blockDim.x) {
      const unsigned at = (q / per_head) * head_dim;
      const unsigned i = (q % per_head) * kVecWidth;
      const vec8<T> a = load8(in + at + i);
      const vec8<T> b = load8(in + at + half + i);
      float ya[kVecWidth];
      float yb[kVecWidth];
#pragma unroll
      for (int k = 0; k < kVecWidth; ++k) {
        float c;
        float s;
        lookup(i + k, c, s);
        turn(to_float(a.v[k]), to_float(b.v[k]), c, s, ya[k], yb[k]);
      }
      store8(out + at + i, pack8<T>(ya));
      store8(out + at + half + i, pack8<T>(yb));
    }
    return;
  }
  if (vector) {
    // Four adjacent pairs (2i, 2i + 1) per vector.
    for (unsigned q = threadIdx.x; q < heads * head_dim / kVecWidth; q += blockDim.x) {
      const unsigned e = q * kVecWidth;
      const unsigned i = (e % head_dim) / 2;
      const vec8<T> a = load8(in + e);
      float y[kVecWidth];
#pragma unroll
      for (int k = 0; k < kVecWidth / 2; ++k) {
        float c;
        float s;
        lookup(i + k, c, s);
        turn(to_float(a.v[2 * k]), to_float(a.v[2 * k + 1]), c, s, y[2 * k], y[2 * k + 1]);
      }
      store8(out + e, pack8<T>(y));
    }
    return;
  }
  for (unsigned p = threadIdx.x; p < heads * half; p += blockDim.x) {
    const unsigned at = (p / half) * head_dim;
    const unsigned i = p % half;
    float c;
    float s;
    lookup(i, c, s);
    const unsigned a = Neox ? i : 2 * i;
    const unsigned b = Neox ? i + half : 2 * i + 1;
    float y0;
    float y1;
    turn(to_float(in[at + a]), to_float(in[at + b]), c, s, y0, y1);
    out[at + a] = from_float<T>(y0);
    out[at + b] = from_float<T>(y1);
  }
}

}  // namespace kreg
