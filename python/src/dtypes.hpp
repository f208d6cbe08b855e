#pragma once
// Dtypes from Python: kreg.Dtype, names ("float32", "half", ...), numpy, torch and JAX dtypes.

#include <kreg/dtype.hpp>

#include <nanobind/nanobind.h>

#include <string_view>

namespace kreg::python {

namespace nb = nanobind;

// The dtype `value` names. Throws InvalidArgument (naming `what`) if it names none kreg has.
Dtype to_dtype(nb::handle value, std::string_view what);
// The dtype a name gives ("float32", "f4", "half", "bool_", ...); false if none.
bool dtype_from_name(std::string_view name, Dtype& out) noexcept;

}  // namespace kreg::python
