// Row softmax over the last dimension, in float: out = softmax(x * scale (+ mask)). One block
// per row; rows of up to 32768 elements stay in registers (one read, one write), longer ones
// are read twice. Each thread takes the maximum of its logits and the sum of their
// exponentials relative to it; one block reduction merges these (the "online" softmax).
// Logits are kept in base 2 (scaled by log2(e)), so each exponential is one exp2.
// The mask is additive (e.g. -inf to exclude), with x's shape, or one row shared by every
// row (mask_stride 0).
// Constants and parameters: kreg/contracts/softmax.cuh.
// kreg:entry softmax_f32=softmax<float>
// kreg:entry softmax_f16=softmax<kreg::half>
// kreg:entry softmax_bf16=softmax<kreg::bfloat16>
// kreg:specialization 200:b1
#include <kreg/contracts/softmax.cuh>
#include <kreg/device/kernel.cuh>
#include <kreg/device/vec.cuh>

KREG_CONSTANT_DEFAULT(bool, has_mask, kreg::contracts::softmax::kHasMask, false);

constexpr float kLog2e = 1.4426950408889634f;

// A maximum, and a sum of exponentials taken relative to it.
struct MaxSum {
  float top;
  float sum;
};

__device__ inline MaxSum shuffle_xor(MaxSum m, int offset) {
  return {kreg::shuffle_xor(m.top, offset), kreg::shuffle_xor(m.sum, offset)};
}

// 2^(x - top), where a top of -inf (no finite logit yet) contributes nothing, not NaN.
__device__ inline float exp_below(float x, float top) {
  return top == kreg::negative_infinity() ? 0.0f : kreg::fast_exp2(x - top);
}

struct Merge {
  __device__ MaxSum operator()(const MaxSum& a, const MaxSum& b) const {
    const float top = fmaxf(a.top, b.top);
    return {top, a.sum * exp_below(a.top, top) + b.sum * exp_below(b.top, top)};
  }
};

// Adds one logit to a thread's running maximum and sum.
__device__ inline void absorb(MaxSum& m, float x) {
  if (x > m.top) {
    m.sum = m.sum * exp_below(m.top, x) + 1.0f;
    m.top = x;
  } else {
    m.sum += exp_below(x, m.top);
  }
}

// The op launches up to 1024 threads a block; the bound keeps every size launchable.
template <typename T>
__global__ void __launch_bounds__(1024)
    softmax(const T* __restrict__ x, const T* __restrict__ mask, T* __restrict__ out, unsigned cols,
            unsigned long long mask_stride, float scale) {
  KREG_SIGNATURE(softmax<T>, kreg::contracts::softmax::Softmax<T>);
  using namespace kreg;
  __shared__ MaxSum scratch[32];
  const unsigned long long base = static_cast<unsigned long long>(blockIdx.x) * cols;
  const T* xr = x + base;
  const T* mr = has_mask ? mask + blockIdx.x * mask_stride : nullptr;
  T* outr = out + base;
  const float scale2 = scale * kLog2e;
  auto logit = [&](float v, float m) {
    return has_mask ? fmaf(v, scale2, m * kLog2e) : v * scale2;
  };
  const bool vector = cols % kVecWidth == 0 && vec_aligned(xr) && vec_aligned(outr) &&
                      (!has_mask || vec_aligned(mr));
  if (row_in_registers(cols, vector)) {
    // The row stays in registers as loaded (for a 16-bit type, half the registers of float
    // logits), and each exponential is taken twice, for the sum and for the output: at the
    // memory roofline the second exp2 costs nothing measurable.
    vec8<T> xv[kRowVectors];
    vec8<T> mv[kRowVectors];
    auto logit_at = [&](unsigned j, int k) {
      return logit(to_float(xv[j].v[k]), has_mask ? to_float(mv[j].v[k]) : 0.0f);
    };
    load_row(xv, xr, cols);
    if (has_mask) load_row(mv, mr, cols);
    float top = negative_infinity();
    for_each_row_vector(cols, [&](unsigned j, unsigned) {
#pragma unroll
      for (int k = 0; k < kVecWidth; ++k) top = fmaxf(top, logit_at(j, k));
    });
    float sum = 0.0f;
    for_each_row_vector(cols, [&](unsigned j, unsigned) {
#pragma unroll
      for (int k = 0; k < kVecWidth; ++k) sum += exp_below(logit_at(j, k), top);
    });
    const MaxSum row =
        block_reduce(MaxSum{top, sum}, scratch, Merge{}, MaxSum{negative_infinity(), 0.0f});
    // This thread's exponentials, moved to the row's maximum and normalized; a row that is
    // all -inf gives zeros, not NaN.
    const float factor = row.sum > 0.0f ? exp_below(top, row.top) / row.sum : 0.0f;
    for_each_row_vector(cols, [&](unsigned j, unsigned c) {
      float o[kVecWidth];
#pragma unroll
      for (int k = 0; k < kVecWidth; ++k) o[k] = exp_below(logit_at(j, k), top) * factor;
      store8(outr + c, pack8<T>(o));
    });
    return;
  }

  MaxSum mine{negative_infinity(), 0.0f};
  auto logit_of = [&](unsigned c) {
    return logit(to_float(xr[c]), has_mask ? to_float(mr[c]) : 0.0f);
  };
  for (unsigned c = threadIdx.x; c < cols; c += blockDim.x) absorb(mine, logit_of(c));
  const MaxSum row = block_reduce(mine, scratch, Merge{}, MaxSum{negative_infinity(), 0.0f});
  const float inv = row.sum > 0.0f ? 1.0f / row.sum : 0.0f;
  for (unsigned c = threadIdx.x; c < cols; c += blockDim.x) {
    outr[c] = from_float<T>(exp_below(logit_of(c), row.top) * inv);
  }
}
