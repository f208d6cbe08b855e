#pragma once
// The parts of kreg._kreg, each registered by its own file.

#include <nanobind/nanobind.h>

namespace kreg::python {

namespace nb = nanobind;

void bind_errors(nb::module_& m);
void bind_dtypes(nb::module_& m);
void bind_streams(nb::module_& m);
void bind_array(nb::module_& m);
void bind_custom(nb::module_& m);
void bind_registry(nb::module_& m);
void bind_ops(nb::module_& m);

}  // namespace kreg::python
