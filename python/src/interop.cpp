#include "interop.hpp"

#include "dtypes.hpp"
#include "streams.hpp"

#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>

#include <kreg/dlpack.hpp>
#include <kreg/error.hpp>

#include <dlpack/dlpack.h>

#include <array>
#include <climits>
#include <string>
#include <utility>
#include <vector>

namespace kreg::python {
namespace {

// The legacy default stream, as DLPack and the driver API spell it.
constexpr std::uintptr_t kLegacyStream = 1;

[[noreturn]] void invalid(std::string_view what, const std::string& why) {
  throw Error(ErrorCode::InvalidArgument, std::string(what) + ": " + why);
}

std::string name_of_type(nb::handle value) {
  return nb::cast<std::string>(nb::type_name(value.type()));
}

// Interned attribute names and the framework functions the hot path calls, looked up once.
// Never destroyed: they hold Python objects that may outlive the module's teardown order.
struct Names {
  nb::object data_ptr = nb::str("data_ptr");
  nb::object get_device = nb::str("get_device");
  nb::object shape = nb::str("shape");
  nb::object stride = nb::str("stride");
  nb::object dtype = nb::str("dtype");
  nb::object dlpack = nb::str("__dlpack__");
  nb::object dlpack_device = nb::str("__dlpack_device__");
  nb::object cai = nb::str("__cuda_array_interface__");
};

const Names& names() {
  static auto* instance = new Names;
  return *instance;
}

nb::object call_method(nb::handle self, const nb::object& name) {
  PyObject* result = PyObject_CallMethodObjArgs(self.ptr(), name.ptr(), nullptr);
  if (result == nullptr) throw nb::python_error();
  return nb::steal(result);
}

nb::object get_attr(nb::handle self, const nb::object& name) {
  PyObject* result = PyObject_GetAttr(self.ptr(), name.ptr());
  if (result == nullptr) throw nb::python_error();
  return nb::steal(result);
}

std::int64_t as_int64(nb::handle value) {
  const long long v = PyLong_AsLongLong(value.ptr());
  if (v == -1 && PyErr_Occurred() != nullptr) throw nb::python_error();
  return v;
}

// A function of an importable module, cached; None if the module or name is missing.
class LazyFunction {
 public:
  LazyFunction(const char* module, std::vector<const char*> path)
      : module_(module), path_(std::move(path)) {}
  nb::handle get() {
    if (!looked_) {
      looked_ = true;
      try {
        nb::object f = nb::module_::import_(module_);
        for (const char* part : path_) f = f.attr(part);
        function_ = f.release().ptr();
      } catch (const nb::python_error&) {
        function_ = nullptr;
      }
    }
    return function_;
  }

 private:
  const char* module_;
  std::vector<const char*> path_;
  bool looked_ = false;
  PyObject* function_ = nullptr;
};

struct Frameworks {
  LazyFunction torch_raw_stream{"torch", {"_C", "_cuda_getCurrentRawStream"}};
  LazyFunction torch_current_stream{"torch", {"cuda", "current_stream"}};
  LazyFunction torch_from_capsule{"torch", {"_C", "_from_dlpack"}};
  LazyFunction torch_to_capsule{"torch", {"_C", "_to_dlpack"}};
  LazyFunction torch_from_dlpack{"torch", {"utils", "dlpack", "from_dlpack"}};
  LazyFunction cupy_current_stream{"cupy", {"cuda", "get_current_stream"}};
  LazyFunction cupy_from_dlpack{"cupy", {"from_dlpack"}};
  LazyFunction jax_from_dlpack{"jax", {"dlpack", "from_dlpack"}};
  LazyFunction numpy_empty{"numpy", {"empty"}};
  LazyFunction numpy_ascontiguous{"numpy", {"ascontiguousarray"}};
  LazyFunction ml_bfloat16{"ml_dtypes", {"bfloat16"}};
};

Frameworks& frameworks() {
  static auto* instance = new Frameworks;
  return *instance;
}

nb::handle required(LazyFunction& f, const char* what) {
  nb::handle h = f.get();
  if (!h.is_valid()) invalid("outputs", std::string(what) + " is not importable");
  return h;
}

// Types seen before, by identity, with the framework they belong to.
class TypeCache {
 public:
  bool find(PyTypeObject* type, Framework& out) const noexcept {
    for (const auto& [t, f] : entries_) {
      if (reinterpret_cast<PyTypeObject*>(t.ptr()) == type) {
        out = f;
        return true;
      }
    }
    return false;
  }
  void add(nb::handle type, Framework f) {
    if (entries_.size() < 64) entries_.emplace_back(nb::borrow(type), f);
  }

 private:
  std::vector<std::pair<nb::object, Framework>> entries_;
};

Framework classify_type(nb::handle value) {
  if (nb::isinstance<Array>(value)) return Framework::Kreg;
  nb::handle type = value.type();
  std::string module;
  if (nb::hasattr(type, "__module__")) {
    nb::object m = type.attr("__module__");
    if (nb::isinstance<nb::str>(m)) module = nb::cast<std::string>(m);
  }
  const auto starts = [&](const char* prefix) { return module.rfind(prefix, 0) == 0; };
  const bool dlpack = nb::hasattr(value, "__dlpack__");
  const bool cai = nb::hasattr(value, "__cuda_array_interface__");
  if (starts("torch") && nb::hasattr(value, "data_ptr") && nb::hasattr(value, "get_device")) {
    return Framework::Torch;
  }
  if (starts("cupy") && (dlpack || cai)) return Framework::Cupy;
  if ((starts("jax") || starts("jaxlib")) && dlpack) return Framework::Jax;
  if (starts("numpy") && (dlpack || nb::hasattr(value, "__array_interface__"))) {
    return Framework::Numpy;
  }
  if (dlpack || cai) return Framework::Other;
  return Framework::None;
}

DLDataType dl_type(Dtype dtype) {
  const DlpackDtype d = dlpack_dtype(dtype);
  DLDataType t{};
  t.code = d.code;
  t.bits = d.bits;
  t.lanes = d.lanes;
  return t;
}

// A tensor over memory a Python object owns, which it keeps alive until kreg lets go.
struct Borrowed {
  DLManagedTensor managed{};
  std::array<std::int64_t, 8> shape{};
  std::array<std::int64_t, 8> strides{};
  PyObject* owner = nullptr;
};

void release_borrowed(DLManagedTensor* tensor) {
  auto* b = static_cast<Borrowed*>(tensor->manager_ctx);
  // kreg may drop the array on a thread that does not hold the GIL.
  const PyGILState_STATE state = PyGILState_Ensure();
  Py_XDECREF(b->owner);
  PyGILState_Release(state);
  delete b;
}

// Fills `b`'s shape and strides from Python sequences; strides are in elements.
void fill_layout(Borrowed& b, nb::handle shape, nb::handle strides, std::string_view what,
                 std::int64_t stride_unit) {
  const std::size_t ndim = nb::len(shape);
  if (ndim > b.shape.size()) invalid(what, std::to_string(ndim) + " dimensions (at most 8)");
  b.managed.dl_tensor.ndim = static_cast<int>(ndim);
  for (std::size_t i = 0; i < ndim; ++i) b.shape[i] = as_int64(shape[i]);
  if (strides.is_none()) {
    std::int64_t step = 1;
    for (std::size_t i = ndim; i-- > 0;) {
      b.strides[i] = step;
      step *= b.shape[i];
    }
  } else {
    if (nb::len(strides) != ndim) invalid(what, "the strides do not match the shape");
    for (std::size_t i = 0; i < ndim; ++i) {
      const std::int64_t s = as_int64(strides[i]);
      if (s % stride_unit != 0) invalid(what, "a stride is not a whole number of elements");
      b.strides[i] = s / stride_unit;
    }
  }
  b.managed.dl_tensor.shape = b.shape.data();
  b.managed.dl_tensor.strides = b.strides.data();
}

Array take_over(std::unique_ptr<Borrowed> b, nb::handle owner, DlpackRelease release) {
  b->owner = owner.inc_ref().ptr();
  b->managed.manager_ctx = b.get();
  b->managed.deleter = release_borrowed;
  DLManagedTensor* tensor = &b.release()->managed;
  try {
    return from_dlpack(tensor, release);
  } catch (...) {
    tensor->deleter(tensor);  // kreg leaves a tensor it rejects with the caller
    throw;
  }
}

// A torch tensor on a GPU, read through its attributes: torch's `__dlpack__` costs
// microseconds of Python per call, which would dwarf a cached kernel's launch.
Array import_torch(nb::handle tensor, int device, DlpackRelease release, std::string_view what) {
  const Names& n = names();
  auto b = std::make_unique<Borrowed>();
  DLTensor& t = b->managed.dl_tensor;
  t.data = reinterpret_cast<void*>(  // NOLINT(performance-no-int-to-ptr)
      static_cast<std::uintptr_t>(as_int64(call_method(tensor, n.data_ptr))));
  t.device = DLDevice{kDLCUDA, device};
  t.dtype = dl_type(to_dtype(get_attr(tensor, n.dtype), what));
  fill_layout(*b, get_attr(tensor, n.shape), call_method(tensor, n.stride), what, 1);
  return take_over(std::move(b), tensor, release);
}

Array import_capsule(nb::handle capsule, DlpackRelease release, std::string_view what) {
  if (PyCapsule_IsValid(capsule.ptr(), "dltensor_versioned") != 0) {
    invalid(what, "the producer sent a versioned DLPack tensor, which kreg cannot read yet");
  }
  if (PyCapsule_IsValid(capsule.ptr(), "dltensor") == 0) {
    invalid(what, "__dlpack__ did not return a DLPack capsule");
  }
  auto* tensor = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule.ptr(), "dltensor"));
  // Ours from here on, whatever happens.
  PyCapsule_SetName(capsule.ptr(), "used_dltensor");
  try {
    return from_dlpack(tensor, release);
  } catch (...) {
    if (tensor->deleter != nullptr) tensor->deleter(tensor);
    throw;
  }
}

// A torch tensor's DLPack capsule from torch's own exporter, or None where torch has none or
// refuses (a dtype DLPack lacks, say: the attribute path then gives kreg's own error). One
// call where reading data_ptr, shape, stride, dtype and device costs five; it leaves stream
// ordering to kreg, which runs on torch's current stream or orders itself after it.
nb::object torch_capsule(nb::handle tensor) {
  nb::handle export_ = frameworks().torch_to_capsule.get();
  if (!export_.is_valid()) return nb::none();
  PyObject* capsule = PyObject_CallFunctionObjArgs(export_.ptr(), tensor.ptr(), nullptr);
  if (capsule == nullptr) {
    PyErr_Clear();
    return nb::none();
  }
  nb::object owned = nb::steal(capsule);
  // A versioned capsule (DLPack 1.x) goes unused: its destructor hands the tensor back.
  return PyCapsule_IsValid(capsule, "dltensor") != 0 ? owned : nb::none();
}

// Where a "dltensor" capsule's tensor lives: (is on the host, GPU ordinal).
std::pair<bool, int> capsule_placement(nb::handle capsule) {
  const auto* t =
      static_cast<const DLManagedTensor*>(PyCapsule_GetPointer(capsule.ptr(), "dltensor"));
  if (t == nullptr) throw nb::python_error();
  const DLDevice d = t->dl_tensor.device;
  const bool host = d.device_type == kDLCPU || d.device_type == kDLCUDAHost;
  return {host, host ? 0 : d.device_id};
}

Array import_dlpack(nb::handle value, bool host, std::uintptr_t stream, DlpackRelease release,
                    std::string_view what) {
  const Names& n = names();
  if (host) return import_capsule(call_method(value, n.dlpack), release, what);
  nb::object method = get_attr(value, n.dlpack);
  nb::object capsule;
  try {
    // The producer orders its pending writes before work on our stream.
    capsule = method(nb::arg("stream") = stream == 0 ? kLegacyStream : stream);
  } catch (const nb::python_error& e) {
    if (!e.matches(PyExc_TypeError)) throw;
    capsule = method();  // a producer that takes no stream
  }
  return import_capsule(capsule, release, what);
}

Array import_cai(nb::handle value, const Stream& stream, std::string_view what) {
  nb::object cai = get_attr(value, names().cai);
  auto d = nb::cast<nb::dict>(cai);
  const auto typestr = nb::cast<std::string>(d["typestr"]);
  if (typestr.size() < 3) invalid(what, "bad typestr '" + typestr + "'");
  Dtype dtype{};
  if (!dtype_from_name(std::string_view(typestr).substr(1), dtype)) {
    invalid(what, "the dtype '" + typestr + "' is not one kreg has");
  }
  if (d.contains("mask") && !d["mask"].is_none()) invalid(what, "masked arrays are not supported");
  // Version 3: work pending on the producer's stream must finish before ours reads.
  if (d.contains("stream") && !d["stream"].is_none()) {
    const auto producer = static_cast<std::uintptr_t>(as_int64(d["stream"]));
    if (producer != reinterpret_cast<std::uintptr_t>(stream.native().native)) {
      nb::gil_scoped_release release;
      wrapped_stream(producer, stream.device()).synchronize();
    }
  }
  auto b = std::make_unique<Borrowed>();
  DLTensor& t = b->managed.dl_tensor;
  nb::handle data = d["data"];
  t.data = reinterpret_cast<void*>(  // NOLINT(performance-no-int-to-ptr)
      static_cast<std::uintptr_t>(as_int64(data[0])));
  t.device = DLDevice{kDLCUDA, stream.device()};
  t.dtype = dl_type(dtype);
  nb::object strides = d.contains("strides") ? nb::borrow(d["strides"]) : nb::none();
  fill_layout(*b, d["shape"], strides, what, static_cast<std::int64_t>(size_of(dtype)));
  // Numba and older CuPy: nothing says how their allocators reuse memory.
  return take_over(std::move(b), value, DlpackRelease::AfterStream);
}

Array import_scalar(nb::handle value, std::string_view what) {
  if (nb::isinstance<nb::bool_>(value)) {
    return Array::from_data(std::vector<bool>{nb::cast<bool>(value)}, {});
  }
  if (nb::isinstance<nb::int_>(value)) {
    const std::int64_t v = as_int64(value);
    if (v >= INT32_MIN && v <= INT32_MAX) {
      return Array::from_data(std::vector<std::int32_t>{static_cast<std::int32_t>(v)}, {});
    }
    return Array::from_data(std::vector<std::int64_t>{v}, {});
  }
  if (nb::isinstance<nb::float_>(value)) {
    return Array::from_data(std::vector<float>{static_cast<float>(nb::cast<double>(value))}, {});
  }
  invalid(what, "a " + name_of_type(value) +
                    " is not an array (give a torch, CuPy, JAX or numpy array, a kreg.Array, "
                    "anything with __dlpack__ or __cuda_array_interface__, or a Python number)");
}

// Where an array lives: (is on the host, GPU ordinal).
std::pair<bool, int> placement(nb::handle value, Framework f) {
  if (f == Framework::Kreg) return {false, nb::cast<const Array&>(value).stream().device()};
  if (f == Framework::Torch) {
    const std::int64_t device = as_int64(call_method(value, names().get_device));
    return {device < 0, device < 0 ? 0 : static_cast<int>(device)};
  }
  if (nb::hasattr(value, names().dlpack_device)) {
    nb::object where = call_method(value, names().dlpack_device);
    const std::int64_t type = as_int64(where[0]);
    const auto id = static_cast<int>(as_int64(where[1]));
    if (type == kDLCPU || type == kDLCUDAHost) return {true, 0};
    if (type == kDLCUDA || type == kDLCUDAManaged) return {false, id};
    invalid("input", "a " + name_of_type(value) + " on DLPack device type " + std::to_string(type) +
                         ", which is neither a CUDA GPU nor the host");
  }
  if (f == Framework::Numpy) return {true, 0};
  return {false, current_device().type == Device::Type::Gpu ? current_device().index : 0};
}

// The framework's current stream on `device`; `owner` receives the Python object behind it
// where there is one that could be destroyed (CuPy's streams; torch's are never destroyed).
std::uintptr_t framework_stream(Framework f, int device, nb::object& owner) {
  Frameworks& fw = frameworks();
  if (f == Framework::Torch) {
    if (nb::handle raw = fw.torch_raw_stream.get(); raw.is_valid()) {
      return static_cast<std::uintptr_t>(as_int64(raw(device)));
    }
    if (nb::handle current = fw.torch_current_stream.get(); current.is_valid()) {
      return static_cast<std::uintptr_t>(as_int64(current(device).attr("cuda_stream")));
    }
  }
  if (f == Framework::Cupy) {
    if (nb::handle current = fw.cupy_current_stream.get(); current.is_valid()) {
      owner = current();
      return static_cast<std::uintptr_t>(as_int64(owner.attr("ptr")));
    }
  }
  const Device selected = current_device();
  if (selected == Device::gpu(device)) {
    return reinterpret_cast<std::uintptr_t>(kreg::current_stream().native().native);
  }
  return 0;
}

nb::object numpy_copy(const Array& array, bool or_self) {
  Frameworks& fw = frameworks();
  nb::handle empty = required(fw.numpy_empty, "numpy");
  auto shape = nb::steal<nb::tuple>(PyTuple_New(static_cast<Py_ssize_t>(array.ndim())));
  for (int i = 0; i < array.ndim(); ++i) {
    PyTuple_SetItem(shape.ptr(), i,
                    PyLong_FromLongLong(array.shape()[static_cast<std::size_t>(i)]));
  }
  nb::object dtype = nb::str(to_string(array.dtype()));
  if (array.dtype() == Dtype::BFloat16) {
    nb::handle bf16 = fw.ml_bfloat16.get();
    if (!bf16.is_valid()) {  // numpy has no bfloat16 of its own
      if (or_self) return nb::cast(array);
      invalid("numpy", "numpy has no bfloat16; install ml_dtypes");
    }
    dtype = nb::borrow(bf16);
  }
  nb::object out = empty(shape, nb::arg("dtype") = dtype);
  const auto address =
      static_cast<std::uintptr_t>(as_int64(out.attr("__array_interface__")["data"][0]));
  void* host = reinterpret_cast<void*>(address);  // NOLINT(performance-no-int-to-ptr)
  {
    nb::gil_scoped_release release;
    array.copy_to_host(host);
  }
  return out;
}

}  // namespace

Framework framework_of(nb::handle value) {
  static auto* cache = new TypeCache;
  PyTypeObject* type = Py_TYPE(value.ptr());
  Framework f{};
  if (cache->find(type, f)) return f;
  f = classify_type(value);
  cache->add(value.type(), f);
  return f;
}

namespace {

// Where an extent came from, for messages.
struct ExtentSource {
  std::string_view kind, name, part;
  std::string text() const {
    return std::string(kind) + " '" + std::string(name) + "': " + std::string(part);
  }
};

unsigned extent(nb::handle value, const ExtentSource& source) {
  const long long v = PyLong_AsLongLong(value.ptr());
  if (v == -1 && PyErr_Occurred() != nullptr) {
    PyErr_Clear();
    throw Error(ErrorCode::InvalidArgument, source.text() + " must hold ints");
  }
  if (v < 0 || v > UINT_MAX) {
    throw Error(ErrorCode::InvalidArgument, source.text() + " has " + std::to_string(v));
  }
  return static_cast<unsigned>(v);
}

}  // namespace

Dim3 to_dim3(nb::handle value, std::string_view kind, std::string_view name,
             std::string_view part) {
  const ExtentSource source{kind, name, part};
  if (nb::isinstance<nb::int_>(value)) return Dim3{extent(value, source)};
  const std::size_t n = nb::len(value);
  if (n < 1 || n > 3) {
    throw Error(ErrorCode::InvalidArgument, source.text() + " takes 1 to 3 extents");
  }
  Dim3 d;
  d.x = extent(value[0], source);
  if (n > 1) d.y = extent(value[1], source);
  if (n > 2) d.z = extent(value[2], source);
  return d;
}

nb::handle first_array(nb::handle values) {
  const std::size_t n = nb::len(values);
  for (std::size_t i = 0; i < n; ++i) {
    nb::object item = values[i];
    if (framework_of(item) != Framework::None) return item.release().dec_ref();
  }
  return nb::none();
}

CallScope::CallScope(nb::handle first, nb::handle stream) : first_(first) {
  framework_ = first.is_none() ? Framework::None : framework_of(first);
  if (framework_ == Framework::Torch) {
    nb::object capsule = torch_capsule(first);
    if (!capsule.is_none()) first_capsule_ = std::move(capsule);
  }
  if (framework_ != Framework::None) {
    std::tie(host_, device_) = first_capsule_.is_valid() ? capsule_placement(first_capsule_)
                                                         : placement(first, framework_);
    first_host_ = host_;
    first_device_ = device_;
  }
  if (framework_ == Framework::None || host_) {
    const Device selected = current_device();
    device_ = selected.type == Device::Type::Gpu ? selected.index : 0;
  }
  if (!stream.is_none() && nb::isinstance<Stream>(stream)) {
    stream_.emplace(nb::cast<const Stream&>(stream));  // kreg's own: its state keeps it alive
  } else {
    const Framework own = host_ ? Framework::None : framework_;
    std::uintptr_t native = framework_stream(own, device_, stream_owner_);
    current_stream_ = true;
    if (!stream.is_none()) {
      const std::uintptr_t given = native_stream(stream);
      current_stream_ = given == native;
      native = given;
      stream_owner_ = nb::borrow(stream);
    }
    if (native == kLegacyStream) native = 0;
    stream_.emplace(wrapped_stream(native, device_));
  }
  scope_.emplace(*stream_);
}

DlpackRelease CallScope::release_for(Framework f) const noexcept {
  // As the framework's own operations on its current stream: its caching allocator reuses
  // the memory only after work queued there, kreg's included.
  const bool stream_ordered = f == Framework::Torch || f == Framework::Cupy;
  return stream_ordered && f == framework_ && current_stream_ ? DlpackRelease::Immediately
                                                              : DlpackRelease::AfterStream;
}

Array CallScope::input(nb::handle value, std::string_view what) const {
  const Framework f = framework_of(value);
  switch (f) {
    case Framework::None: return import_scalar(value, what);
    case Framework::Kreg: return nb::cast<const Array&>(value);
    case Framework::Torch: {
      // The first array's export serves once: the same tensor may come again.
      nb::object capsule = value.is(first_) && first_capsule_.is_valid() ? std::move(first_capsule_)
                                                                         : torch_capsule(value);
      if (!capsule.is_none()) {
        return import_capsule(capsule, release_for(f), what);
      }
      const auto [host, device] =
          value.is(first_) ? std::pair{first_host_, first_device_} : placement(value, f);
      if (!host) return import_torch(value, device, release_for(f), what);
      return import_capsule(call_method(value, names().dlpack), release_for(f), what);
    }
    default: break;
  }
  const auto native = reinterpret_cast<std::uintptr_t>(stream_->native().native);
  if (nb::hasattr(value, names().dlpack)) {
    const bool host = value.is(first_) ? first_host_ : placement(value, f).first;
    return import_dlpack(value, host, native, release_for(f), what);
  }
  if (nb::hasattr(value, names().cai)) return import_cai(value, *stream_, what);
  // A numpy scalar or an old numpy array: through a fresh contiguous array.
  nb::object copy = required(frameworks().numpy_ascontiguous, "numpy")(value);
  return import_capsule(call_method(copy, names().dlpack), DlpackRelease::AfterStream, what);
}

nb::object CallScope::output(const Array& array) const {
  Frameworks& fw = frameworks();
  switch (framework_) {
    case Framework::Torch: {
      nb::object capsule =
          dlpack_capsule(to_dlpack(array, StreamRef(stream_->native().native)), stream_owner_);
      nb::handle from = fw.torch_from_capsule.get();
      if (!from.is_valid()) from = required(fw.torch_from_dlpack, "torch");
      nb::object tensor = from(capsule);
      return host_ ? tensor.attr("cpu")() : tensor;
    }
    case Framework::Cupy:
      return required(fw.cupy_from_dlpack, "cupy")(nb::cast(Export{array, stream_owner_}));
    case Framework::Jax:
      return required(fw.jax_from_dlpack, "jax")(nb::cast(Export{array, stream_owner_}));
    case Framework::Numpy: return numpy_copy(array, true);
    default: return nb::cast(array);
  }
}

bool writable_on_gpu(nb::handle value) {
  const Framework f = framework_of(value);
  if (f == Framework::None || f == Framework::Jax || f == Framework::Numpy) return false;
  return !placement(value, f).first;
}

nb::object host_copy(const Array& array) {
  return numpy_copy(array, false);
}

namespace {

// A tensor that holds a Python object until the tensor it forwards to is released.
struct KeptTensor {
  DLManagedTensor managed{};
  DLManagedTensor* inner = nullptr;
  PyObject* keep = nullptr;
};

void release_kept(DLManagedTensor* tensor) {
  auto* k = static_cast<KeptTensor*>(tensor->manager_ctx);
  if (k->inner->deleter != nullptr) k->inner->deleter(k->inner);
  const PyGILState_STATE state = PyGILState_Ensure();
  Py_XDECREF(k->keep);
  PyGILState_Release(state);
  delete k;
}

void delete_unused_capsule(PyObject* self) {
  if (PyCapsule_IsValid(self, "dltensor") != 0) {
    auto* t = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(self, "dltensor"));
    if (t->deleter != nullptr) t->deleter(t);
  }
}

}  // namespace

nb::object dlpack_capsule(DLManagedTensor* tensor, nb::handle keep_alive) {
  if (keep_alive.is_valid() && !keep_alive.is_none()) {
    auto* k = new KeptTensor;
    k->managed.dl_tensor = tensor->dl_tensor;
    k->managed.manager_ctx = k;
    k->managed.deleter = release_kept;
    k->inner = tensor;
    k->keep = keep_alive.inc_ref().ptr();
    tensor = &k->managed;
  }
  PyObject* capsule = PyCapsule_New(tensor, "dltensor", delete_unused_capsule);
  if (capsule == nullptr) {
    tensor->deleter(tensor);
    throw nb::python_error();
  }
  return nb::steal(capsule);
}

bool is_numpy_scalar(nb::handle value) {
  static PyObject* generic = nullptr;  // kept for the process, as the module is
  if (generic == nullptr) {
    nb::object name = nb::str("numpy");
    PyObject* numpy = PyImport_GetModule(name.ptr());  // only a module already imported
    if (numpy == nullptr) {
      if (PyErr_Occurred() != nullptr) throw nb::python_error();
      return false;
    }
    generic = PyObject_GetAttrString(numpy, "generic");
    Py_DECREF(numpy);
    if (generic == nullptr) throw nb::python_error();
  }
  const int is = PyObject_IsInstance(value.ptr(), generic);
  if (is < 0) throw nb::python_error();
  return is == 1;
}

bool device_address(nb::handle value, std::uintptr_t& address) {
  const Framework f = framework_of(value);
  if (f == Framework::None) return false;
  if (f == Framework::Kreg) {
    const auto& a = nb::cast<const Array&>(value);
    nb::gil_scoped_release release;  // evaluating may compile
    address = reinterpret_cast<std::uintptr_t>(a.data());
    return true;
  }
  if (f == Framework::Torch) {
    address = static_cast<std::uintptr_t>(as_int64(call_method(value, names().data_ptr)));
    return true;
  }
  if (nb::hasattr(value, names().cai)) {
    nb::object cai = get_attr(value, names().cai);
    address = static_cast<std::uintptr_t>(as_int64(cai["data"][0]));
    return true;
  }
  if (nb::hasattr(value, names().dlpack)) {
    nb::object capsule = call_method(value, names().dlpack);
    if (PyCapsule_IsValid(capsule.ptr(), "dltensor") == 0) return false;
    const auto* t = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule.ptr(), "dltensor"));
    address = reinterpret_cast<std::uintptr_t>(t->dl_tensor.data) + t->dl_tensor.byte_offset;
    return true;  // the capsule's destructor hands the tensor back; `value` keeps the memory
  }
  return false;
}

}  // namespace kreg::python
