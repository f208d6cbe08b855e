#include <kreg/dtype.hpp>

namespace kreg {

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

}  // namespace kreg
