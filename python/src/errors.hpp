#pragma once
// kreg's errors as Python exceptions: kreg.Error and one subclass per ErrorCode.

#include <kreg/error.hpp>

namespace kreg::python {

#include <string>

// Raises `error` as its Python class (sets the error indicator; call with the GIL held).
// `source`, when given, becomes a CompileError's `source` attribute.
void raise_error(const Error& error, const std::string* source = nullptr);

// A compile error of a registered source, with that source numbered: thrown by the
// registry's bindings, raised as kreg.CompileError with `source` set.
struct SourceCompileError {
  Error error;
  std::string numbered_source;
};

// `text` with its lines numbered, as compile errors show generated sources.
std::string number_lines(const std::string& text);

}  // namespace kreg::python
