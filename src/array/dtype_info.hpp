#pragma once
// What kreg knows of each dtype, as one table: its printable name, its size, and its type as
// generated CUDA C++ spells it.

#include <kreg/dtype.hpp>

#include <cstddef>

namespace kreg::array {

struct DtypeInfo {
  const char* name;  // "float32"
  std::size_t size;  // bytes
  const char* cuda;  // "float", "kreg::half"
};

const DtypeInfo& dtype_info(Dtype dtype) noexcept;

}  // namespace kreg::array
