// y = W x for decode: W is rows x cols (float32, float16 or bfloat16, row-major), x and y
// float32. One warp per row, eight weights per lane per step, accumulated in float.
// kreg:entry gemv_f32=gemv<float>
// kreg:entry gemv_f16=gemv<kreg::half>
// kreg:entry gemv_bf16=gemv<kreg::bfloat16>
#include <kreg/contracts/gemv.cuh>
#include <kreg/device/kernel.cuh>
#include <kreg/device/vec.cuh>

template <typename W>
__global__ void gemv(const W* __restrict__ w, const float* __restrict__ x, float* __restrict__ y,
                     unsigned rows, unsigned cols) {
  KREG_SIGNATURE(gemv<W>, kreg::contracts::gemv::Gemv<W>);
  using namespace kreg;
  const unsigned lane = threadIdx.x % 32;
  const unsigned long long row =
      static_cast<unsigned long long>(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32;
  if (row >= rows) return;
  const W* wr = w + row * cols;
  float acc = 0.0f;
  if (cols % kVecWidth == 0 && vec_aligned(wr) && vec_aligned(x)) {
    for (unsigned c = lane * kVecWidth; c < cols; c += 32 * kVecWidth) {
      const vec8<W> wv = load8(wr + c);
      const vec8<float> xv = load8(x + c);
#pragma unroll
      for (int k = 0; k < kVecWidth; ++k) acc += to_float(wv.v[k]) * xv.v[k];
    }
  } else {
    for (unsigned c = lane; c < cols; c += 32) acc += to_float(wr[c]) * x[c];
  }
  acc = warp_reduce(acc, Sum{});
  if (lane == 0) y[row] = acc;
}
