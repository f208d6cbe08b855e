// kreg.Array: kreg's lazily evaluated GPU array, as a Python object that speaks DLPack.
#include "bindings.hpp"
#include "interop.hpp"
#include "streams.hpp"

#include <kreg/dlpack.hpp>
#include <kreg/error.hpp>

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string>

namespace kreg::python {
namespace {

constexpr int kDLCuda = 2;

nb::tuple to_tuple(const Shape& values) {
  nb::list out;
  for (const std::int64_t v : values) out.append(v);
  return nb::tuple(out);
}

// DLPack's `stream` argument: None means the legacy default stream, -1 no ordering at all.
std::optional<StreamRef> consumer_stream(const Array& array, nb::handle stream) {
  if (stream.is_none()) return StreamRef(nullptr);
  const long long value = PyLong_AsLongLong(stream.ptr());
  if (value == -1 && PyErr_Occurred() != nullptr) throw nb::python_error();
  if (value == -1) return array.stream().native();
  if (value == 1) return StreamRef(nullptr);  // CU_STREAM_LEGACY is the null stream
  return StreamRef(reinterpret_cast<void*>(static_cast<std::uintptr_t>(value)));  // NOLINT
}

nb::object array_dlpack(const Array& array, nb::handle stream, nb::handle /*max_version*/,
                        nb::handle dl_device, nb::handle copy) {
  return export_dlpack(array, nb::handle(), stream, dl_device, copy);
}

nb::object exported_dlpack(const Export& e, nb::handle stream, nb::handle /*max_version*/,
                           nb::handle dl_device, nb::handle copy) {
  return export_dlpack(e.array, e.keep_alive, stream, dl_device, copy);
}

}  // namespace

nb::object export_dlpack(const Array& array, nb::handle keep_alive, nb::handle stream,
                         nb::handle dl_device, nb::handle copy) {
  if (!copy.is_none() && nb::cast<bool>(copy)) {
    PyErr_SetString(PyExc_BufferError, "kreg.Array.__dlpack__: copy=True is not supported");
    throw nb::python_error();
  }
  if (!dl_device.is_none()) {
    const int type = nb::cast<int>(dl_device[0]);
    const int id = nb::cast<int>(dl_device[1]);
    if (type != kDLCuda || id != array.stream().device()) {
      PyErr_SetString(PyExc_BufferError,
                      "kreg.Array.__dlpack__: the array is on its GPU; no other device");
      throw nb::python_error();
    }
  }
  const std::optional<StreamRef> consumer = consumer_stream(array, stream);
  DLManagedTensor* tensor = nullptr;
  {
    nb::gil_scoped_release release;  // evaluating may compile and wait
    tensor = to_dlpack(array, consumer);
  }
  return dlpack_capsule(tensor, keep_alive);
}

void bind_array(nb::module_& m) {
  nb::class_<Array>(m, "Array",
                    "An n-dimensional GPU array, evaluated lazily. kreg.array() makes one from "
                    "any array; torch.from_dlpack, cupy.from_dlpack, jax.dlpack.from_dlpack and "
                    "numpy.asarray take one without copying GPU memory (numpy copies to the "
                    "host).")
      .def_prop_ro("shape", [](const Array& a) { return to_tuple(a.shape()); })
      .def_prop_ro(
          "strides", [](const Array& a) { return to_tuple(a.strides()); },
          "Strides in elements, not bytes.")
      .def_prop_ro("dtype", &Array::dtype)
      .def_prop_ro("ndim", &Array::ndim)
      .def_prop_ro("size", &Array::size, "The number of elements.")
      .def_prop_ro("nbytes", &Array::nbytes)
      .def_prop_ro(
          "device", [](const Array& a) { return a.stream().device(); }, "The GPU ordinal.")
      .def_prop_ro("stream", &Array::stream, "The stream the array is computed on.")
      .def_prop_ro("is_evaluated", &Array::is_evaluated)
      .def_prop_ro("is_row_contiguous", &Array::is_row_contiguous)
      .def(
          "eval",
          [](const Array& a) {
            nb::gil_scoped_release release;
            a.eval();
          },
          "Computes the array now (compiling what it needs), without holding the GIL.")
      .def(
          "data_ptr",
          [](const Array& a) {
            nb::gil_scoped_release release;
            return reinterpret_cast<std::uintptr_t>(a.data());
          },
          "The device address of element 0, after evaluating.")
      .def("numpy", &host_copy,
           "A numpy array holding a copy of the values (waits for them). bfloat16 needs "
           "ml_dtypes.")
      .def(
          "__array__",
          [](nb::handle self, nb::handle dtype, nb::handle) {
            nb::object out = self.attr("numpy")();
            return dtype.is_none() ? out : out.attr("astype")(dtype);
          },
          nb::arg("dtype") = nb::none(), nb::arg("copy") = nb::none())
      .def("tolist", [](nb::handle self) { return self.attr("numpy")().attr("tolist")(); })
      .def("__dlpack__", &array_dlpack, nb::kw_only(), nb::arg("stream") = nb::none(),
           nb::arg("max_version") = nb::none(), nb::arg("dl_device") = nb::none(),
           nb::arg("copy") = nb::none(),
           "DLPack export: a capsule sharing the array's memory, ordered before work on "
           "`stream` (None: the legacy default stream; -1: no ordering).")
      .def("__dlpack_device__",
           [](const Array& a) { return nb::make_tuple(kDLCuda, a.stream().device()); })
      .def(
          "transpose",
          [](const Array& a, std::optional<std::vector<int>> axes) {
            return axes ? a.transpose(*axes) : a.transpose();
          },
          nb::arg("axes") = nb::none(), "A view with the axes reversed or permuted.")
      .def_prop_ro("T", [](const Array& a) { return a.transpose(); })
      .def("__len__",
           [](const Array& a) {
             if (a.ndim() == 0) throw nb::type_error("len() of a 0-d kreg.Array");
             return a.shape()[0];
           })
      .def("__repr__", [](const Array& a) {
        std::string shape;
        for (std::size_t i = 0; i < a.shape().size(); ++i) {
          shape += (i == 0 ? "" : ", ") + std::to_string(a.shape()[i]);
        }
        if (a.shape().size() == 1) shape += ",";
        return "kreg.Array(shape=(" + shape + "), dtype=" + to_string(a.dtype()) +
               ", device=" + std::to_string(a.stream().device()) +
               (a.is_evaluated() ? "" : ", pending") + ")";
      });

  nb::class_<Export>(m, "_Export", "An array on its way to a framework's from_dlpack.")
      .def("__dlpack__", &exported_dlpack, nb::kw_only(), nb::arg("stream") = nb::none(),
           nb::arg("max_version") = nb::none(), nb::arg("dl_device") = nb::none(),
           nb::arg("copy") = nb::none())
      .def("__dlpack_device__",
           [](const Export& e) { return nb::make_tuple(kDLCuda, e.array.stream().device()); });

  m.def(
      "array",
      [](nb::handle value, nb::handle stream) {
        CallScope scope(value, stream);
        return scope.input(value, "array");
      },
      nb::arg("value"), nb::arg("stream") = nb::none(),
      "`value` as a kreg.Array: GPU arrays (torch, CuPy, JAX, anything with __dlpack__ or "
      "__cuda_array_interface__) share their memory; host arrays and Python numbers are "
      "copied.");
}

}  // namespace kreg::python
