#pragma once
// Arrays across the Python boundary: torch, CuPy, JAX and numpy arrays (and anything with
// `__dlpack__` or `__cuda_array_interface__`) in, arrays of the caller's framework out,
// sharing GPU memory both ways.

#include <kreg/array.hpp>
#include <kreg/dlpack.hpp>
#include <kreg/stream.hpp>

#include <nanobind/nanobind.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

extern "C" {
struct DLManagedTensor;
}

namespace kreg::python {

namespace nb = nanobind;

// Whose array a Python object is. None: not an array (a Python scalar, say).
enum class Framework : std::uint8_t { None, Kreg, Torch, Cupy, Jax, Numpy, Other };

Framework framework_of(nb::handle value);

// One call's placement: the framework its outputs go back to, the GPU and the stream its
// work runs on, selected for the calling thread (a kreg::StreamScope) while it lives.
//
// The first array argument decides: its GPU, and its framework's current stream there
// (torch's current stream for torch tensors, CuPy's for CuPy arrays; kreg's current stream
// otherwise), unless the caller gave `stream`. Host arrays (numpy, CPU tensors) are copied
// to the GPU and outputs are copied back to the host.
//
// Inputs of torch and CuPy, on their framework's current stream, go back to their owner as
// soon as kreg has queued its work, as the frameworks' own operations do; any other input is
// handed back after its stream has finished with it.
class CallScope {
 public:
  CallScope(nb::handle first_array, nb::handle stream);
  CallScope(const CallScope&) = delete;
  CallScope& operator=(const CallScope&) = delete;

  // `value` as an array on the call's GPU: GPU memory is shared, never copied; host data is
  // copied. `what` names the argument in errors.
  Array input(nb::handle value, std::string_view what) const;
  // `array` as an array of the call's framework, sharing its memory. Evaluates it.
  nb::object output(const Array& array) const;

  int device() const noexcept { return device_; }
  const Stream& stream() const noexcept { return *stream_; }
  Framework framework() const noexcept { return framework_; }

 private:
  // When an input of framework `f` is handed back to its owner (see DlpackRelease).
  DlpackRelease release_for(Framework f) const noexcept;

  Framework framework_ = Framework::None;
  bool host_ = false;
  int device_ = 0;
  nb::handle first_;  // the first array and its place, not looked up twice
  bool first_host_ = false;
  int first_device_ = 0;
  // A torch first array's DLPack export, taken to learn its place; its input() uses it.
  mutable nb::object first_capsule_;
  // The Python object behind the stream (a torch or CuPy stream), which outputs keep alive:
  // kreg frees their memory on it.
  nb::object stream_owner_;
  bool current_stream_ = false;  // the stream is the framework's current one
  std::optional<Stream> stream_;
  std::optional<StreamScope> scope_;
};

// A launch extent from Python: an int, or a sequence of 1 to 3 ints. Throws InvalidArgument,
// saying which: "<kind> '<name>': <part>" ("custom kernel 'k': grid", say). The message is
// only put together for an error: launches parse two extents on every call.
Dim3 to_dim3(nb::handle value, std::string_view kind, std::string_view name, std::string_view part);

// The first argument of `values` (a sequence) that is an array, or None.
nb::handle first_array(nb::handle values);

// Whether an op may write into `value` in place: a kreg array, or a GPU array of torch, CuPy
// or another DLPack producer. Host arrays would be written through a copy, and JAX's arrays
// are immutable, so neither is.
bool writable_on_gpu(nb::handle value);

// A numpy array holding a copy of `array`'s values.
nb::object host_copy(const Array& array);

// A "dltensor" capsule owning `tensor`: its deleter runs when the capsule is dropped unused.
// With `keep_alive`, the tensor also holds a reference to that object until its deleter runs
// (the Python stream whose handle kreg freed the memory on, say).
nb::object dlpack_capsule(DLManagedTensor* tensor, nb::handle keep_alive = nb::handle());

// An array to hand to a framework's from_dlpack: `__dlpack__` exports it, holding `keep_alive`.
struct Export {
  Array array;
  nb::object keep_alive;
};

// Export.__dlpack__ and kreg.Array.__dlpack__: DLPack's stream protocol over to_dlpack.
nb::object export_dlpack(const Array& array, nb::handle keep_alive, nb::handle stream,
                         nb::handle dl_device, nb::handle copy);

// Whether `value` is a numpy scalar (a numpy.generic: np.float32(1), np.bool_(True), ...).
// np.float64 is also a Python float, so a caller that reads a numpy scalar's own bytes must
// ask this before it asks for a float. False when numpy was never imported.
bool is_numpy_scalar(nb::handle value);

// The device address of an array-like argument, without taking it over (for raw launches).
// False if `value` is not an array.
bool device_address(nb::handle value, std::uintptr_t& address);

}  // namespace kreg::python
