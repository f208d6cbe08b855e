#pragma once
/// \file
/// 16-bit floating-point types for kernels: `kreg::half` (IEEE binary16) and `kreg::bfloat16`.
///
/// cuda_fp16.h and cuda_bf16.h add about 20 ms to every NVRTC compile that includes them.
/// Kernels mostly need to store these types and convert them, so this header gives just that
/// and includes nothing under NVRTC, which lets sources compile with `-minimal`.
///
/// Arithmetic goes through float: `a + b` converts both operands to float, and the result
/// rounds back on assignment. A float holds every 16-bit value exactly, and with 24 bits of
/// precision (at least twice 11, plus 2) the float result of one +, -, * or / of two 16-bit
/// values rounds back to the correctly rounded 16-bit result.
///
/// Conversions round to nearest, ties to even, with subnormals kept. Device code uses the
/// hardware's `cvt` instructions. Host code rounds in software to the same bits for every
/// input, including NaN, which becomes the canonical NaN 0x7fff as it does on the device.

#ifndef KREG_HOST_DEVICE
#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define KREG_HOST_DEVICE __host__ __device__
#else
#define KREG_HOST_DEVICE
#endif
#endif

#if !defined(__CUDACC_RTC__)
#include <cstring>
#endif

namespace kreg {
namespace detail {

static_assert(sizeof(unsigned) == 4 && sizeof(unsigned long long) == 8, "unexpected int sizes");

KREG_HOST_DEVICE inline unsigned bits_of(float v) {
#ifdef __CUDA_ARCH__
  return __float_as_uint(v);
#else
  unsigned u;
  std::memcpy(&u, &v, sizeof u);
  return u;
#endif
}

KREG_HOST_DEVICE inline unsigned long long bits_of(double v) {
#ifdef __CUDA_ARCH__
  return static_cast<unsigned long long>(__double_as_longlong(v));
#else
  unsigned long long u;
  std::memcpy(&u, &v, sizeof u);
  return u;
#endif
}

KREG_HOST_DEVICE inline float float_from_bits(unsigned u) {
#ifdef __CUDA_ARCH__
  return __uint_as_float(u);
#else
  float v;
  std::memcpy(&v, &u, sizeof v);
  return v;
#endif
}

// A 16-bit format: `mant` fraction bits below an exponent biased by `bias`.
struct half_format {
  static constexpr int mant = 10, bias = 15;
};
struct bf16_format {
  static constexpr int mant = 7, bias = 127;
};

// Rounds the magnitude sig * 2^exp (sig > 0) to format F, ties to even; too large gives
// infinity. Returns the bits without the sign.
template <class F>
KREG_HOST_DEVICE inline unsigned short round_magnitude(unsigned long long sig, int exp) {
  // A sticky low bit keeps every shift below 64 without changing how the value rounds:
  // the discarded bit lies far below any result's last bit.
  if (sig >> 63) {
    sig = (sig >> 1) | (sig & 1);
    ++exp;
  }
  int top = 62;
  while (!(sig >> top)) --top;
  // The result's last bit sits F::mant bits below the leading one, but never below the
  // smallest subnormal's.
  const int min_lsb = 1 - F::bias - F::mant;
  const int lsb = exp + top - F::mant > min_lsb ? exp + top - F::mant : min_lsb;
  const int shift = lsb - exp;
  unsigned long long q;
  if (shift <= 0) {
    q = sig << -shift;  // exact
  } else if (shift > top + 1) {
    q = 0;  // below half the smallest subnormal
  } else {
    q = sig >> shift;
    const unsigned long long rest = sig & ((1ull << shift) - 1);
    const unsigned long long halfway = 1ull << (shift - 1);
    if (rest > halfway || (rest == halfway && (q & 1))) ++q;
  }
  // q holds the leading one of a normal result, so adding it to the exponent field less one
  // encodes the value; a carry out of the fraction steps the exponent up on its own.
  const auto field = static_cast<unsigned long long>(lsb - min_lsb);
  const unsigned long long bits = (field << F::mant) + q;
  const unsigned inf = (2u * F::bias + 1) << F::mant;
  return static_cast<unsigned short>(bits >= inf ? inf : bits);
}

// Converts the bits of an IEEE float or double (`src_mant` fraction bits) to format F.
template <class F, class U>
KREG_HOST_DEVICE inline unsigned short round_ieee(U x, int src_mant) {
  const U sign_bit = U(1) << (sizeof(U) * 8 - 1);
  const U mant_mask = (U(1) << src_mant) - 1;
  const U inf = (sign_bit - 1) & ~mant_mask;
  const unsigned sign = (x & sign_bit) ? 0x8000u : 0u;
  const U mag = x & (sign_bit - 1);
  if (mag > inf) return 0x7fff;
  if (mag == inf) return static_cast<unsigned short>(sign | ((2u * F::bias + 1) << F::mant));
  if (mag == 0) return static_cast<unsigned short>(sign);
  const int src_bias = static_cast<int>(inf >> (src_mant + 1));
  const int biased = static_cast<int>(mag >> src_mant);
  // Subnormal sources have no implicit leading one and the smallest normal's exponent.
  const unsigned long long sig = (mag & mant_mask) | (biased ? mant_mask + 1 : 0);
  const int exp = (biased ? biased : 1) - src_bias - src_mant;
  return static_cast<unsigned short>(sign | round_magnitude<F>(sig, exp));
}

KREG_HOST_DEVICE inline unsigned short from_float(half_format /*format*/, float v) {
#ifdef __CUDA_ARCH__
  unsigned short h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(v));
  return h;
#else
  return round_ieee<half_format>(bits_of(v), 23);
#endif
}

KREG_HOST_DEVICE inline unsigned short from_float(bf16_format /*format*/, float v) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  unsigned short h;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(v));
  return h;
#else
  return round_ieee<bf16_format>(bits_of(v), 23);
#endif
}

// Doubles round once, straight to 16 bits: going through float would round twice.
KREG_HOST_DEVICE inline unsigned short from_double(half_format /*format*/, double v) {
#ifdef __CUDA_ARCH__
  unsigned short h;
  asm("cvt.rn.f16.f64 %0, %1;" : "=h"(h) : "d"(v));
  return h;
#else
  return round_ieee<half_format>(bits_of(v), 52);
#endif
}

KREG_HOST_DEVICE inline unsigned short from_double(bf16_format /*format*/, double v) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  unsigned short h;
  asm("cvt.rn.bf16.f64 %0, %1;" : "=h"(h) : "d"(v));
  return h;
#else
  return round_ieee<bf16_format>(bits_of(v), 52);
#endif
}

// Integers below 2^24 are exact in a float, so they take the fast float path and round once.
// Larger ones round in software, since float would round them first.
template <class F>
KREG_HOST_DEVICE inline unsigned short from_integer(bool negative, unsigned long long mag) {
  if (mag < (1ull << 24)) {
    const auto v = static_cast<float>(mag);
    return from_float(F{}, negative ? -v : v);
  }
  return static_cast<unsigned short>((negative ? 0x8000u : 0u) | round_magnitude<F>(mag, 0));
}

KREG_HOST_DEVICE inline unsigned long long magnitude(long long v) {
  return v < 0 ? 0ull - static_cast<unsigned long long>(v) : static_cast<unsigned long long>(v);
}

KREG_HOST_DEVICE inline float to_float(half_format /*format*/, unsigned short h) {
#ifdef __CUDA_ARCH__
  float v;
  asm("cvt.f32.f16 %0, %1;" : "=f"(v) : "h"(h));
  return v;
#else
  const unsigned sign = (h & 0x8000u) << 16;
  const unsigned exp = (h >> 10) & 0x1fu;
  const unsigned mant = h & 0x3ffu;
  if (exp == 0x1f) return float_from_bits(mant ? 0x7fffffffu : sign | 0x7f800000u);
  if (exp == 0) {
    // mant * 2^-24 is exact in float.
    const float v = static_cast<float>(mant) * 5.9604644775390625e-8f;
    return sign ? -v : v;
  }
  return float_from_bits(sign | ((exp + 112) << 23) | (mant << 13));
#endif
}

// bfloat16 is the top half of a float.
KREG_HOST_DEVICE inline float to_float(bf16_format /*format*/, unsigned short h) {
  return float_from_bits(static_cast<unsigned>(h) << 16);
}

struct raw_bits_t {};

// What half and bfloat16 share. The derived type inherits the constructors, so that it stays
// a distinct, trivially copyable struct.
template <class Self, class F>
struct float16 {
  unsigned short bits;  ///< The raw bit pattern.

  float16() = default;
  KREG_HOST_DEVICE constexpr float16(raw_bits_t /*tag*/, unsigned short b) : bits(b) {}

  // One converting constructor per arithmetic type, so that `= 1`, `= 1.0f` and `= 1.0`
  // each pick one without ambiguity. bool and char promote to int.
  KREG_HOST_DEVICE float16(float v) : bits(from_float(F{}, v)) {}
  KREG_HOST_DEVICE float16(double v) : bits(from_double(F{}, v)) {}
  KREG_HOST_DEVICE float16(signed char v)
      : bits(from_integer<F>(v < 0, magnitude(static_cast<long long>(v)))) {}
  KREG_HOST_DEVICE float16(short v)
      : bits(from_integer<F>(v < 0, magnitude(static_cast<long long>(v)))) {}
  KREG_HOST_DEVICE float16(int v)
      : bits(from_integer<F>(v < 0, magnitude(static_cast<long long>(v)))) {}
  KREG_HOST_DEVICE float16(long v)
      : bits(from_integer<F>(v < 0, magnitude(static_cast<long long>(v)))) {}
  KREG_HOST_DEVICE float16(long long v) : bits(from_integer<F>(v < 0, magnitude(v))) {}
  KREG_HOST_DEVICE float16(unsigned char v)
      : bits(from_integer<F>(false, static_cast<unsigned long long>(v))) {}
  KREG_HOST_DEVICE float16(unsigned short v)
      : bits(from_integer<F>(false, static_cast<unsigned long long>(v))) {}
  KREG_HOST_DEVICE float16(unsigned v)
      : bits(from_integer<F>(false, static_cast<unsigned long long>(v))) {}
  KREG_HOST_DEVICE float16(unsigned long v)
      : bits(from_integer<F>(false, static_cast<unsigned long long>(v))) {}
  KREG_HOST_DEVICE float16(unsigned long long v) : bits(from_integer<F>(false, v)) {}
  // From the other 16-bit format (half from bfloat16, and back), through float, as Metal
  // converts them implicitly; a vector of one converts to a vector of the other explicitly.
  template <class OtherSelf, class OtherF>
  KREG_HOST_DEVICE float16(const float16<OtherSelf, OtherF>& other)
      : bits(from_float(F{}, static_cast<float>(other))) {}

  /// The value with the bit pattern `b`.
  KREG_HOST_DEVICE static constexpr Self from_bits(unsigned short b) {
    return Self(raw_bits_t{}, b);
  }

  KREG_HOST_DEVICE operator float() const { return to_float(F{}, bits); }

  KREG_HOST_DEVICE Self& operator+=(float v) { return assign(static_cast<float>(*this) + v); }
  KREG_HOST_DEVICE Self& operator-=(float v) { return assign(static_cast<float>(*this) - v); }
  KREG_HOST_DEVICE Self& operator*=(float v) { return assign(static_cast<float>(*this) * v); }
  KREG_HOST_DEVICE Self& operator/=(float v) { return assign(static_cast<float>(*this) / v); }

 private:
  KREG_HOST_DEVICE Self& assign(float v) {
    bits = from_float(F{}, v);
    return static_cast<Self&>(*this);
  }
};

}  // namespace detail

/// IEEE binary16: 1 sign, 5 exponent and 10 fraction bits.
struct half : detail::float16<half, detail::half_format> {
  using float16::float16;
};

/// bfloat16: the top 16 bits of a float (1 sign, 8 exponent and 7 fraction bits).
struct bfloat16 : detail::float16<bfloat16, detail::bf16_format> {
  using float16::float16;
};

static_assert(sizeof(half) == 2 && alignof(half) == 2, "half must be laid out as 2 bytes");
static_assert(sizeof(bfloat16) == 2 && alignof(bfloat16) == 2,
              "bfloat16 must be laid out as 2 bytes");

}  // namespace kreg
