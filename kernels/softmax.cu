// Row softmax over the last dimension, in float: out = softmax(x * scale (+ mask)). One block
// per row; rows of up to 32768 elements stay in registers (one read, one write), longer ones
// are read three times. The mask is additive (e.g. -inf to exclude), with x's shape, or one
// row shared by every row (mask_stride 0).
//   constant 200 (bool, default false): add the mask
// kreg:entry softmax_f32=softmax<float>
// kreg:entry softmax_f16=softmax<kreg::half>
// kreg:entry softmax_bf16=softmax<kreg::bfloat16>
// kreg:specialization 200:b1
#include <kreg/kernel.cuh>
#include <kreg/vec.cuh>

KREG_CONSTANT_DEFAULT(bool, has_mask, 200, false);

template <typename T>
__global__ void softmax(const T* __restrict__ x, const T* __restrict__ mask, T* __restrict__ out,
                        unsigned cols, unsigned long long mask_stride, float scale) {
  using namespace kreg;
  __shared__ float scratch[32];
  const unsigned long long base = static_cast<unsigned long long>(blockIdx.x) * cols;
  const T* xr = x + base;
  const T* mr = has_mask ? mask + blockIdx.x * mask_stride : nullptr;
  T* outr = out + base;
  const float neg_inf = -__int_as_float(0x7f800000);
  auto logit = [&](float v, unsigned c) {
    return has_mask ? v * scale + to_float(mr[c]) : v * scale;
  };

  constexpr unsigned kCached = 4;
  const bool vector = cols % kVecWidth == 0 && vec_aligned(xr) && vec_aligned(outr) &&
                      (!has_mask || vec_aligned(mr));
  if (vector && cols <= blockDim.x * kVecWidth * kCached) {
    float v[kCached][kVecWidth];
    float top = neg_inf;
#pragma unroll
    for (unsigned j = 0; j < kCached; ++j) {
      const unsigned c = (threadIdx.x + j * blockDim.x) * kVecWidth;
      if (c >= cols) break;
      const vec8<T> xv = load8(xr + c);
      vec8<T> mv;
      if (has_mask) mv = load8(mr + c);
#pragma unroll
      for (int k = 0; k < kVecWidth; ++k) {
        v[j][k] =
            has_mask ? to_float(xv.v[k]) * scale + to_float(mv.v[k]) : to_float(xv.v[k]) * scale;
        top = fmaxf(top, v[j][k]);
      }
    }
    top = block_max(top, scratch);
    float sum = 0.0f;
#pragma unroll
    for (unsigned j = 0; j < kCached; ++j) {
      if ((threadIdx.x + j * blockDim.x) * kVecWidth >= cols) break;
#pragma unroll
      for (int k = 0; k < kVecWidth; ++k) {
        // A row that is all -inf has no finite maximum: its exponentials are 0, not NaN.
        v[j][k] = top == neg_inf ? 0.0f : __expf(v[j][k] - top);
        sum += v[j][k];
      }
    }
    const float total = block_sum(sum, scratch);
    const float inv = total > 0.0f ? 1.0f / total : 0.0f;  // all -inf: zeros, not NaN
#pragma unroll
    for (unsigned j = 0; j < kCached; ++j) {
      const unsigned c = (threadIdx.x + j * blockDim.x) * kVecWidth;
      if (c >= cols) break;
      vec8<T> o;
#pragma unroll
      for (int k = 0; k < kVecWidth; ++k) o.v[k] = from_float<T>(v[j][k] * inv);
      store8(outr + c, o);
    }
    return;
  }

  float top = neg_inf;
  for (unsigned c = threadIdx.x; c < cols; c += blockDim.x)
    top = fmaxf(top, logit(to_float(xr[c]), c));
  top = block_max(top, scratch);
  float sum = 0.0f;
  for (unsigned c = threadIdx.x; c < cols; c += blockDim.x) {
    sum += top == neg_inf ? 0.0f : __expf(logit(to_float(xr[c]), c) - top);
  }
  const float total = block_sum(sum, scratch);
  const float inv = total > 0.0f ? 1.0f / total : 0.0f;  // all -inf: zeros, not NaN
  for (unsigned c = threadIdx.x; c < cols; c += blockDim.x) {
    const float e = top == neg_inf ? 0.0f : __expf(logit(to_float(xr[c]), c) - top);
    outr[c] = from_float<T>(e * inv);
  }
}
