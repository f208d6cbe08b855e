#pragma once
// kreg's errors as Python exceptions: kreg.Error and one subclass per ErrorCode.

#include <kreg/error.hpp>

namespace kreg::python {

#include <string>

// Raises `error` as its Python class (sets the error indicator; call with the GIL held). A
// CompileError's attributes come from its compile_failure(), never from its message.
void raise_error(const Error& error);

// `text` with its lines numbered, as compile errors show generated sources.
std::string number_lines(const std::string& text);

}  // namespace kreg::python
