#pragma once
/// \file
/// Element types of arrays and custom kernels.

#include <complex>
#include <cstddef>
#include <cstdint>

namespace kreg {

// The 16-bit float types, for host and kernels alike, are in <kreg/half.cuh>.
struct half;
struct bfloat16;

/// The element type of an `Array`.
enum class Dtype {
  Bool,
  Int8,
  Int16,
  Int32,
  Int64,
  UInt8,
  UInt16,
  UInt32,
  UInt64,
  Float16,   ///< IEEE binary16, `kreg::half` on the host
  BFloat16,  ///< bfloat16, `kreg::bfloat16` on the host
  Float32,
  Float64,
  Complex64,  ///< real and imaginary float32, `std::complex<float>` on the host
};

/// Bytes per element.
std::size_t size_of(Dtype dtype) noexcept;
/// The printable name, e.g. "float32".
const char* to_string(Dtype dtype) noexcept;

/// Writes `value` as one element of `dtype` to `out` (`size_of(dtype)` bytes): floats round
/// to nearest, integers truncate toward zero and saturate at their type's bounds, NaN gives
/// an integer 0, bool is `value != 0`, and a complex gets `value` as its real part.
void write_element(double value, Dtype dtype, void* out) noexcept;

namespace detail {
template <class T>
struct dtype_of;
template <Dtype D>
struct dtype_tag {
  static constexpr Dtype value = D;
};
template <>
struct dtype_of<bool> : dtype_tag<Dtype::Bool> {};
template <>
struct dtype_of<std::int8_t> : dtype_tag<Dtype::Int8> {};
template <>
struct dtype_of<std::int16_t> : dtype_tag<Dtype::Int16> {};
template <>
struct dtype_of<std::int32_t> : dtype_tag<Dtype::Int32> {};
template <>
struct dtype_of<std::int64_t> : dtype_tag<Dtype::Int64> {};
template <>
struct dtype_of<std::uint8_t> : dtype_tag<Dtype::UInt8> {};
template <>
struct dtype_of<std::uint16_t> : dtype_tag<Dtype::UInt16> {};
template <>
struct dtype_of<std::uint32_t> : dtype_tag<Dtype::UInt32> {};
template <>
struct dtype_of<std::uint64_t> : dtype_tag<Dtype::UInt64> {};
template <>
struct dtype_of<half> : dtype_tag<Dtype::Float16> {};
template <>
struct dtype_of<bfloat16> : dtype_tag<Dtype::BFloat16> {};
template <>
struct dtype_of<float> : dtype_tag<Dtype::Float32> {};
template <>
struct dtype_of<double> : dtype_tag<Dtype::Float64> {};
template <>
struct dtype_of<std::complex<float>> : dtype_tag<Dtype::Complex64> {};
}  // namespace detail

/// The dtype of a C++ element type: `dtype_v<float>` is `Dtype::Float32`.
template <class T>
inline constexpr Dtype dtype_v = detail::dtype_of<T>::value;

}  // namespace kreg
