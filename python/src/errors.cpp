#include "errors.hpp"

#include "bindings.hpp"

#include <array>
#include <string>

namespace kreg::python {
namespace {

constexpr std::size_t kCodes = static_cast<std::size_t>(ErrorCode::CudaError) + 1;

// The exception classes, made once when the module is imported and kept for its life.
struct ErrorClasses {
  PyObject* base = nullptr;
  std::array<PyObject*, kCodes> by_code{};
  PyObject* code_enum = nullptr;
};

ErrorClasses& classes() {
  static ErrorClasses instance;
  return instance;
}

PyObject* make_class(nb::module_& m, const char* name, const char* doc, PyObject* bases) {
  const std::string qualified = std::string("kreg.") + name;
  PyObject* cls = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, bases, nullptr);
  if (cls == nullptr) throw nb::python_error();
  m.attr(name) = nb::borrow(cls);
  return cls;
}

nb::object text_or_none(const std::string* text) {
  if (text == nullptr) return nb::none();
  return nb::str(text->data(), text->size());
}

}  // namespace

void raise_error(const Error& error) {
  const ErrorClasses& c = classes();
  PyObject* cls = c.by_code[static_cast<std::size_t>(error.code())];
  if (cls == nullptr) cls = c.base;
  const std::string_view message = error.message();
  nb::str text(message.data(), message.size());
  nb::object instance = nb::steal(PyObject_CallFunctionObjArgs(cls, text.ptr(), nullptr));
  if (!instance.is_valid()) return;  // the call set its own error
  nb::object code = nb::borrow(c.code_enum)(static_cast<int>(error.code()));
  nb::setattr(instance, "code", code);
  if (error.code() == ErrorCode::CompileError) {
    // A constant that is missing or mistyped never reached NVRTC: no log, no source.
    const CompileFailure* failure = error.compile_failure();
    const std::string numbered = failure != nullptr ? number_lines(failure->source) : "";
    nb::setattr(instance, "log", text_or_none(failure != nullptr ? &failure->log : nullptr));
    nb::setattr(instance, "source", text_or_none(failure != nullptr ? &numbered : nullptr));
    nb::setattr(instance, "source_name",
                text_or_none(failure != nullptr ? &failure->source_name : nullptr));
    nb::setattr(instance, "kernel", text_or_none(failure != nullptr ? &failure->label : nullptr));
    nb::setattr(instance, "key", text_or_none(failure != nullptr ? &failure->key : nullptr));
  }
  PyErr_SetObject(cls, instance.ptr());
}

std::string number_lines(const std::string& text) {
  std::string out;
  std::size_t line = 0;
  for (std::size_t start = 0; start < text.size();) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string number = std::to_string(++line);
    out.append(number.size() < 4 ? 4 - number.size() : 0, ' ')
        .append(number)
        .append(" | ")
        .append(text, start, end - start)
        .append("\n");
    start = end + 1;
  }
  return out;
}

void bind_errors(nb::module_& m) {
  nb::enum_<ErrorCode>(m, "ErrorCode", "What went wrong: the `code` of every kreg.Error.")
      .value("KernelNotFound", ErrorCode::KernelNotFound)
      .value("CompileError", ErrorCode::CompileError)
      .value("LoadError", ErrorCode::LoadError)
      .value("LaunchError", ErrorCode::LaunchError)
      .value("InvalidArgument", ErrorCode::InvalidArgument)
      .value("NoDevice", ErrorCode::NoDevice)
      .value("CudaError", ErrorCode::CudaError);
  ErrorClasses& c = classes();
  c.code_enum = m.attr("ErrorCode").ptr();
  Py_INCREF(c.code_enum);

  c.base = make_class(m, "Error",
                      "Base of kreg's exceptions. `code` (kreg.ErrorCode) says what went wrong; "
                      "the message names the kernel, its cache key and the cause.",
                      PyExc_RuntimeError);
  const auto with = [&](PyObject* other) { return nb::steal(PyTuple_Pack(2, c.base, other)); };
  const auto code = [](ErrorCode e) { return static_cast<std::size_t>(e); };
  c.by_code[code(ErrorCode::KernelNotFound)] = make_class(
      m, "KernelNotFound", "No registered source declares the requested name (also a KeyError).",
      with(PyExc_KeyError).ptr());
  // KeyError would print the message as a quoted repr.
  nb::setattr(nb::borrow(c.by_code[code(ErrorCode::KernelNotFound)]), "__str__",
              nb::borrow(reinterpret_cast<PyObject*>(PyExc_Exception)).attr("__str__"));
  c.by_code[code(ErrorCode::CompileError)] =
      make_class(m, "CompileError",
                 "NVRTC rejected a source, or a constant is missing or mistyped. For a compile "
                 "NVRTC refused: `log` is the compiler's log, `source` the numbered text it was "
                 "given (a custom kernel's generated source), `source_name` the source's name, "
                 "`kernel` the label asked for and `key` the binary's key; all None for a "
                 "constant that never reached the compiler.",
                 c.base);
  c.by_code[code(ErrorCode::LoadError)] =
      make_class(m, "LoadError", "The driver refused to load a compiled binary.", c.base);
  c.by_code[code(ErrorCode::LaunchError)] = make_class(
      m, "LaunchError", "The driver refused a launch (geometry, shared memory, ...).", c.base);
  c.by_code[code(ErrorCode::InvalidArgument)] =
      make_class(m, "InvalidArgument",
                 "A bad argument, rejected before any work was done (also a ValueError).",
                 with(PyExc_ValueError).ptr());
  c.by_code[code(ErrorCode::NoDevice)] = make_class(
      m, "NoDevice", "The operation needs a GPU (or a driver) and there is none.", c.base);
  c.by_code[code(ErrorCode::CudaError)] =
      make_class(m, "CudaError", "Any other failure of the CUDA driver.", c.base);

  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const Error& e) {
      raise_error(e);
    }
  });
}

}  // namespace kreg::python
