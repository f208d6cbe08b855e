#include "dtypes.hpp"

#include "bindings.hpp"

#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>

#include <kreg/error.hpp>

#include <array>
#include <string>
#include <utility>
#include <vector>

namespace kreg::python {
namespace {

struct Name {
  std::string_view name;
  Dtype dtype;
};

// kreg's names first, then numpy's and C's spellings of the same types.
constexpr std::array kNames = {
    Name{"bool", Dtype::Bool},         Name{"int8", Dtype::Int8},
    Name{"int16", Dtype::Int16},       Name{"int32", Dtype::Int32},
    Name{"int64", Dtype::Int64},       Name{"uint8", Dtype::UInt8},
    Name{"uint16", Dtype::UInt16},     Name{"uint32", Dtype::UInt32},
    Name{"uint64", Dtype::UInt64},     Name{"float16", Dtype::Float16},
    Name{"bfloat16", Dtype::BFloat16}, Name{"float32", Dtype::Float32},
    Name{"float64", Dtype::Float64},   Name{"complex64", Dtype::Complex64},
    Name{"bool_", Dtype::Bool},        Name{"c8", Dtype::Complex64},
    Name{"half", Dtype::Float16},      Name{"float", Dtype::Float32},
    Name{"double", Dtype::Float64},    Name{"int", Dtype::Int32},
    Name{"b1", Dtype::Bool},           Name{"i1", Dtype::Int8},
    Name{"i2", Dtype::Int16},          Name{"i4", Dtype::Int32},
    Name{"i8", Dtype::Int64},          Name{"u1", Dtype::UInt8},
    Name{"u2", Dtype::UInt16},         Name{"u4", Dtype::UInt32},
    Name{"u8", Dtype::UInt64},         Name{"f2", Dtype::Float16},
    Name{"f4", Dtype::Float32},        Name{"f8", Dtype::Float64},
    Name{"float16_t", Dtype::Float16}, Name{"bfloat16_t", Dtype::BFloat16},
};
constexpr std::size_t kOwnNames = 14;  // the first ones: one per dtype, kreg's name

// Dtype objects seen before (numpy dtypes, torch dtypes, JAX scalar types), by identity.
// They are module-level singletons, so a handful of entries covers a program; the entries
// hold references, so an address is never reused while it is here. Touched with the GIL held.
class DtypeCache {
 public:
  bool find(PyObject* key, Dtype& out) const noexcept {
    for (const auto& [object, dtype] : entries_) {
      if (object.ptr() == key) {
        out = dtype;
        return true;
      }
    }
    return false;
  }
  void add(nb::handle key, Dtype dtype) {
    if (entries_.size() < kMaxEntries) entries_.emplace_back(nb::borrow(key), dtype);
  }

 private:
  static constexpr std::size_t kMaxEntries = 64;
  std::vector<std::pair<nb::object, Dtype>> entries_;
};

DtypeCache& cache() {
  static auto* instance = new DtypeCache;  // never destroyed: it holds Python objects
  return *instance;
}

[[noreturn]] void not_a_dtype(nb::handle value, std::string_view what) {
  std::string shown;
  try {
    shown = nb::cast<std::string>(nb::repr(value));
  } catch (...) {
    shown = "?";
  }
  std::string names;
  for (std::size_t i = 0; i < kOwnNames; ++i) {
    names += i == 0 ? "" : ", ";
    names += kNames[i].name;
  }
  throw Error(ErrorCode::InvalidArgument,
              std::string(what) + ": " + shown + " is not a dtype kreg has (" + names + ")");
}

// Reads what `value` names, without the cache.
bool lookup(nb::handle value, Dtype& out, int depth) {
  if (nb::isinstance<Dtype>(value)) {
    out = nb::cast<Dtype>(value);
    return true;
  }
  if (nb::isinstance<nb::str>(value)) {
    return dtype_from_name(nb::cast<std::string_view>(value), out);
  }
  // torch.float32 prints as "torch.float32" (and torch.half as "torch.float16").
  {
    const auto text = nb::cast<std::string>(nb::str(value));
    if (text.rfind("torch.", 0) == 0) return dtype_from_name(std::string_view(text).substr(6), out);
  }
  // A numpy dtype (ml_dtypes' bfloat16 included) has a `name`; so has a dtype's kind.
  if (nb::hasattr(value, "name") && nb::hasattr(value, "itemsize") &&
      nb::isinstance<nb::str>(value.attr("name"))) {
    return dtype_from_name(nb::cast<std::string_view>(value.attr("name")), out);
  }
  // Scalar types (numpy.float32, jax.numpy.float32) and arrays carry a `dtype`.
  if (depth == 0 && nb::hasattr(value, "dtype")) {
    nb::object inner = value.attr("dtype");
    if (!inner.is(value) && lookup(inner, out, depth + 1)) return true;
  }
  // numpy's scalar type classes: numpy.dtype(numpy.float32).
  if (depth == 0 && PyType_Check(value.ptr())) {
    nb::module_ sys = nb::module_::import_("sys");
    nb::object modules = sys.attr("modules");
    if (PyMapping_HasKeyString(modules.ptr(), "numpy") != 0) {
      try {
        nb::object np_dtype = nb::module_::import_("numpy").attr("dtype")(value);
        return lookup(np_dtype, out, depth + 1);
      } catch (const nb::python_error&) {
        return false;
      }
    }
  }
  return false;
}

}  // namespace

bool dtype_from_name(std::string_view name, Dtype& out) noexcept {
  for (const Name& n : kNames) {
    if (n.name == name) {
      out = n.dtype;
      return true;
    }
  }
  return false;
}

Dtype to_dtype(nb::handle value, std::string_view what) {
  Dtype dtype{};
  if (cache().find(value.ptr(), dtype)) return dtype;
  if (!lookup(value, dtype, 0)) not_a_dtype(value, what);
  if (!nb::isinstance<nb::str>(value)) cache().add(value, dtype);
  return dtype;
}

void bind_dtypes(nb::module_& m) {
  auto e = nb::enum_<Dtype>(m, "Dtype",
                            "The element type of an array. Every kreg function that takes a "
                            "dtype also takes its name, or a numpy, torch or JAX dtype.");
  for (std::size_t i = 0; i < kOwnNames; ++i) {
    const std::string name(kNames[i].name);
    e.value(name.c_str(), kNames[i].dtype);
  }
  e.def_prop_ro(
      "itemsize", [](Dtype d) { return size_of(d); }, "Bytes per element.");
  e.def("__str__", [](Dtype d) { return std::string(to_string(d)); });
  m.def(
      "dtype", [](nb::handle value) { return to_dtype(value, "dtype"); }, nb::arg("value"),
      "The kreg.Dtype that `value` names: a kreg.Dtype, a name such as 'float32' or 'half', "
      "or a numpy, torch or JAX dtype.");
}

}  // namespace kreg::python
