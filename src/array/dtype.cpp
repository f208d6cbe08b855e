#include <kreg/dtype.hpp>

#include <kreg/device/half.cuh>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>

namespace kreg {
namespace {

template <class T>
T saturated(double value) noexcept {
  if (std::isnan(value)) return T{};
  const auto low = static_cast<double>(std::numeric_limits<T>::lowest());
  const auto high = static_cast<double>(std::numeric_limits<T>::max());
  return static_cast<T>(std::clamp(value, low, high));
}

}  // namespace

std::size_t size_of(Dtype dtype) noexcept {
  switch (dtype) {
    case Dtype::Bool:
    case Dtype::Int8:
    case Dtype::UInt8: return 1;
    case Dtype::Int16:
    case Dtype::UInt16:
    case Dtype::Float16:
    case Dtype::BFloat16: return 2;
    case Dtype::Int32:
    case Dtype::UInt32:
    case Dtype::Float32: return 4;
    case Dtype::Int64:
    case Dtype::UInt64:
    case Dtype::Float64:
    case Dtype::Complex64: return 8;
  }
  return 0;
}

const char* to_string(Dtype dtype) noexcept {
  switch (dtype) {
    case Dtype::Bool: return "bool";
    case Dtype::Int8: return "int8";
    case Dtype::Int16: return "int16";
    case Dtype::Int32: return "int32";
    case Dtype::Int64: return "int64";
    case Dtype::UInt8: return "uint8";
    case Dtype::UInt16: return "uint16";
    case Dtype::UInt32: return "uint32";
    case Dtype::UInt64: return "uint64";
    case Dtype::Float16: return "float16";
    case Dtype::BFloat16: return "bfloat16";
    case Dtype::Float32: return "float32";
    case Dtype::Float64: return "float64";
    case Dtype::Complex64: return "complex64";
  }
  return "unknown";
}

void write_element(double value, Dtype dtype, void* out) noexcept {
  auto put = [out](const auto& v) { std::memcpy(out, &v, sizeof(v)); };
  switch (dtype) {
    case Dtype::Bool: put(static_cast<unsigned char>(value != 0)); break;
    case Dtype::Int8: put(saturated<std::int8_t>(value)); break;
    case Dtype::Int16: put(saturated<std::int16_t>(value)); break;
    case Dtype::Int32: put(saturated<std::int32_t>(value)); break;
    case Dtype::Int64: put(saturated<std::int64_t>(value)); break;
    case Dtype::UInt8: put(saturated<std::uint8_t>(value)); break;
    case Dtype::UInt16: put(saturated<std::uint16_t>(value)); break;
    case Dtype::UInt32: put(saturated<std::uint32_t>(value)); break;
    case Dtype::UInt64: put(saturated<std::uint64_t>(value)); break;
    case Dtype::Float16: put(half(value)); break;
    case Dtype::BFloat16: put(bfloat16(value)); break;
    case Dtype::Float32: put(static_cast<float>(value)); break;
    case Dtype::Float64: put(value); break;
    case Dtype::Complex64: put(std::array<float, 2>{static_cast<float>(value), 0.0F}); break;
  }
}

}  // namespace kreg
