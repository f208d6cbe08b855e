#include <kreg/dtype.hpp>

#include "array/dtype_info.hpp"

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

namespace array {

const DtypeInfo& dtype_info(Dtype dtype) noexcept {
  // In Dtype's order.
  static constexpr DtypeInfo kInfo[] = {{"bool", 1, "bool"},
                                        {"int8", 1, "int8_t"},
                                        {"int16", 2, "int16_t"},
                                        {"int32", 4, "int32_t"},
                                        {"int64", 8, "int64_t"},
                                        {"uint8", 1, "uint8_t"},
                                        {"uint16", 2, "uint16_t"},
                                        {"uint32", 4, "uint32_t"},
                                        {"uint64", 8, "uint64_t"},
                                        {"float16", 2, "kreg::half"},
                                        {"bfloat16", 2, "kreg::bfloat16"},
                                        {"float32", 4, "float"},
                                        {"float64", 8, "double"},
                                        {"complex64", 8, "complex64_t"}};
  static constexpr DtypeInfo kUnknown = {"unknown", 0, "void"};
  const auto i = static_cast<std::size_t>(dtype);
  return i < std::size(kInfo) ? kInfo[i] : kUnknown;
}

}  // namespace array

std::size_t size_of(Dtype dtype) noexcept {
  return array::dtype_info(dtype).size;
}

const char* to_string(Dtype dtype) noexcept {
  return array::dtype_info(dtype).name;
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
