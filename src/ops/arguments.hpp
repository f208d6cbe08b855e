#pragma once
// The argument checks the ops share: errors that name the op, shapes as text, the entry
// suffix of a float dtype.

#include <kreg/array.hpp>
#include <kreg/error.hpp>

#include "array/node.hpp"

#include <string>

namespace kreg::ops {

[[noreturn]] inline void invalid(const std::string& op, const std::string& what) {
  throw Error(ErrorCode::InvalidArgument, "ops::" + op + ": " + what);
}

inline std::string shape_text(const Shape& shape) {
  std::string out = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + "]";
}

// Element (0, 0) of x, read row-major, starts on a multiple of `elements` elements: always so
// for a view that is not row-contiguous, whose row-major copy starts a buffer of its own.
inline bool starts_on(const Array& x, std::int64_t elements) {
  const std::int64_t offset = x.is_row_contiguous() ? array::ArrayAccess::node(x)->offset : 0;
  return offset % elements == 0;
}

// The entry suffix of a float dtype the built-ins have.
inline const char* suffix(const std::string& op, const char* name, const Array& a) {
  if (!a.valid()) invalid(op, std::string(name) + " is an empty Array handle");
  switch (a.dtype()) {
    case Dtype::Float32: return "f32";
    case Dtype::Float16: return "f16";
    case Dtype::BFloat16: return "bf16";
    default: break;
  }
  invalid(op, std::string(name) + " is " + to_string(a.dtype()) +
                  "; float32, float16 or bfloat16 are supported");
}

}  // namespace kreg::ops
