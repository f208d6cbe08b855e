// kreg._kreg: the compiled half of the `kreg` Python package (python/kreg/__init__.py is the
// other). See docs/python.md.
#include "bindings.hpp"

#include <kreg/version.hpp>

NB_MODULE(_kreg, m) {
  namespace py = kreg::python;
  m.doc() = "kreg's runtime kernel registry, custom kernels and ops (see the kreg package)";
  m.attr("__version__") = kreg::version();
  py::bind_errors(m);
  py::bind_dtypes(m);
  py::bind_streams(m);
  py::bind_array(m);
  py::bind_custom(m);
  py::bind_registry(m);
  py::bind_ops(m);
}
