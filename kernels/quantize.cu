// MLX's affine quantization (kreg/contracts/quantized.cuh) and its inverse.
//
// quantize: one thread a group. The group's extreme of larger magnitude (the edge) gets an
// exact code, and the scale is chosen so that zero does too (as mx.quantize does): the
// scale starts at (max - min) / (2^bits - 1), signed so that the codes count away from the
// edge, and is then set to edge / round(edge / scale), with the edge as the bias. The codes
// are rounded to nearest (ties to even) and clamped to [0, 2^bits - 1]; the scale and bias
// are stored in the weights' type.
// dequantize: one thread a word, each element scale * q + bias computed in float and rounded
// once to the weights' type.
// kreg:entry quantize_f16=quantize<kreg::half>
// kreg:entry quantize_bf16=quantize<kreg::bfloat16>
// kreg:entry quantize_f32=quantize<float>
// kreg:entry dequantize_f16=dequantize<kreg::half>
// kreg:entry dequantize_bf16=dequantize<kreg::bfloat16>
// kreg:entry dequantize_f32=dequantize<float>
// kreg:specialization 300:i8
#include <kreg/contracts/quantized.cuh>
#include <kreg/device/half.cuh>
#include <kreg/device/kernel.cuh>

KREG_CONSTANT_DEFAULT(int, bits, kreg::contracts::quantized::kBits, 4);
KREG_CONSTANT_DEFAULT(int, group, kreg::contracts::quantized::kGroup, 64);

static_assert(bits == 4 || bits == 8, "quantize: bits is 4 or 8");
static_assert(group == 32 || group == 64 || group == 128, "quantize: a group is 32, 64 or 128");

namespace affine {
constexpr int kPerWord = 32 / bits;
constexpr unsigned kMaxCode = (1u << bits) - 1;
constexpr int kWordsPerGroup = group / kPerWord;
}  // namespace affine

template <typename T>
__global__ void quantize(const T* __restrict__ w, unsigned* __restrict__ wq, T* __restrict__ scales,
                         T* __restrict__ biases, long long groups) {
  KREG_SIGNATURE(quantize<T>, kreg::contracts::quantized::Quantize<T>);
  using namespace affine;
  const long long g = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (g >= groups) return;
  const T* in = w + g * group;
  float lo = static_cast<float>(in[0]);
  float hi = lo;
#pragma unroll 8
  for (int i = 1; i < group; ++i) {
    const float v = static_cast<float>(in[i]);
    lo = fminf(lo, v);
    hi = fmaxf(hi, v);
  }
  float scale = fmaxf((hi - lo) / static_cast<float>(kMaxCode), 1e-7f);
  const bool low_edge = fabsf(lo) > fabsf(hi);
  if (!low_edge) scale = -scale;
  const float edge = low_edge ? lo : hi;
  const float edge_code = rintf(edge / scale);
  float bias = 0.0f;
  if (edge_code != 0.0f) {
    scale = edge / edge_code;
    bias = edge;
  }
  scales[g] = T(scale);
  biases[g] = T(bias);
  unsigned* out = wq + g * kWordsPerGroup;
  for (int word = 0; word < kWordsPerGroup; ++word) {
    unsigned packed = 0;
#pragma unroll
    for (int j = 0; j < kPerWord; ++j) {
      const float code = rintf((static_cast<float>(in[word * kPerWord + j]) - bias) / scale);
      const float clamped = fminf(fmaxf(code, 0.0f), static_cast<float>(kMaxCode));
      packed |= static_cast<unsigned>(clamped) << (bits * j);
    }
    out[word] = packed;
  }
}

template <typename T>
__global__ void dequantize(const unsigned* __restrict__ wq, const T* __restrict__ scales,
                           const T* __restrict__ biases, T* __restrict__ w, long long words) {
  KREG_SIGNATURE(dequantize<T>, kreg::contracts::quantized::Dequantize<T>);
  using namespace affine;
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= words) return;
  const long long g = i / kWordsPerGroup;
  const float scale = static_cast<float>(scales[g]);
  const float bias = static_cast<float>(biases[g]);
  const unsigned packed = wq[i];
  T* out = w + i * kPerWord;
#pragma unroll
  for (int j = 0; j < kPerWord; ++j) {
    const auto code = static_cast<float>((packed >> (bits * j)) & kMaxCode);
    out[j] = T(fmaf(scale, code, bias));
  }
}
