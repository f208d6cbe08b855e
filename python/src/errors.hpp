#pragma once
// kreg's errors as Python exceptions: kreg.Error and one subclass per ErrorCode.

#include <kreg/error.hpp>

namespace kreg::python {

// Raises `error` as its Python class (sets the error indicator; call with the GIL held).
void raise_error(const Error& error);

}  // namespace kreg::python
