#pragma once
/// \file
/// MLX's `complex64_t` for custom kernels: a float32 real and imaginary part, laid out as
/// `std::complex<float>` (and numpy's and torch's complex64) is. The arithmetic of complex
/// numbers, with a float standing for a real number:
///
///     complex64_t z(re, im), w = x;     // x a float: w = x + 0i
///     z * w + complex64_t(k);           // + - * / between complex values and floats
///     z.real, z.imag, conj(z), abs(z)   // |z| without overflow in the squares

namespace kreg::detail {
__host__ __device__ constexpr float magnitude(float x) {
  return x < 0 ? -x : x;
}
__device__ inline float root(float x) {
  float r;
  asm("sqrt.rn.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
}
}  // namespace kreg::detail

struct complex64_t {
  float real;
  float imag;

  complex64_t() = default;
  __host__ __device__ constexpr complex64_t(float re, float im) : real(re), imag(im) {}
  /// A real number (any arithmetic value, so that `complex64_t(1)` and `= x` work).
  template <class T, class = decltype(static_cast<float>(T{}))>
  __host__ __device__ constexpr complex64_t(T re) : real(static_cast<float>(re)), imag(0.0f) {}

  __host__ __device__ complex64_t& operator+=(complex64_t w) {
    real += w.real;
    imag += w.imag;
    return *this;
  }
  __host__ __device__ complex64_t& operator-=(complex64_t w) {
    real -= w.real;
    imag -= w.imag;
    return *this;
  }
  __host__ __device__ complex64_t& operator*=(complex64_t w) {
    const float re = real * w.real - imag * w.imag;
    imag = real * w.imag + imag * w.real;
    real = re;
    return *this;
  }
  __host__ __device__ complex64_t& operator/=(complex64_t w) {
    // Scaled by the larger part of w, so that |w|^2 neither overflows nor underflows.
    const float a = kreg::detail::magnitude(w.real);
    const float b = kreg::detail::magnitude(w.imag);
    const float s = a > b ? a : b;
    const float wr = w.real / s;
    const float wi = w.imag / s;
    const float d = wr * wr + wi * wi;
    const float re = (real * wr + imag * wi) / (d * s);
    imag = (imag * wr - real * wi) / (d * s);
    real = re;
    return *this;
  }
};

__host__ __device__ inline complex64_t operator+(complex64_t z, complex64_t w) {
  return z += w;
}
__host__ __device__ inline complex64_t operator-(complex64_t z, complex64_t w) {
  return z -= w;
}
__host__ __device__ inline complex64_t operator*(complex64_t z, complex64_t w) {
  return z *= w;
}
__host__ __device__ inline complex64_t operator/(complex64_t z, complex64_t w) {
  return z /= w;
}
__host__ __device__ inline complex64_t operator-(complex64_t z) {
  return {-z.real, -z.imag};
}
__host__ __device__ inline complex64_t operator+(complex64_t z) {
  return z;
}
__host__ __device__ inline bool operator==(complex64_t z, complex64_t w) {
  return z.real == w.real && z.imag == w.imag;
}
__host__ __device__ inline bool operator!=(complex64_t z, complex64_t w) {
  return !(z == w);
}

/// The complex conjugate, and the real and imaginary parts as functions.
__host__ __device__ inline complex64_t conj(complex64_t z) {
  return {z.real, -z.imag};
}
__host__ __device__ inline float real(complex64_t z) {
  return z.real;
}
__host__ __device__ inline float imag(complex64_t z) {
  return z.imag;
}
/// |z|.
__device__ inline float abs(complex64_t z) {
  const float a = kreg::detail::magnitude(z.real);
  const float b = kreg::detail::magnitude(z.imag);
  const float big = a > b ? a : b;
  if (big == 0.0f) return 0.0f;
  return big * kreg::detail::root((a / big) * (a / big) + (b / big) * (b / big));
}
