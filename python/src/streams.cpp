#include "streams.hpp"

#include "bindings.hpp"

#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>

#include <kreg/error.hpp>

#include <array>
#include <string>

namespace kreg::python {
namespace {

// The streams last wrapped: frameworks hand out the same few streams over and over, and a
// kreg::Stream costs an allocation. A handle reused after its stream was destroyed names the
// new stream, so a stale entry is never wrong. Touched with the GIL held.
class StreamCache {
 public:
  const Stream& get(std::uintptr_t native, int device) {
    for (const Entry& e : entries_) {
      if (e.used && e.native == native && e.device == device) return *e.stream;
    }
    Entry& slot = entries_[next_];
    next_ = (next_ + 1) % entries_.size();
    slot.stream = std::make_shared<Stream>(
        Stream::wrap(StreamRef(reinterpret_cast<void*>(native)), device));  // NOLINT
    slot.native = native;
    slot.device = device;
    slot.used = true;
    return *slot.stream;
  }

 private:
  struct Entry {
    std::uintptr_t native = 0;
    int device = 0;
    bool used = false;
    std::shared_ptr<Stream> stream;
  };
  std::array<Entry, 8> entries_{};
  std::size_t next_ = 0;
};

std::uintptr_t as_handle(nb::handle value) {
  if (!nb::isinstance<nb::int_>(value)) {
    throw Error(ErrorCode::InvalidArgument, "a stream handle must be an int");
  }
  return static_cast<std::uintptr_t>(PyLong_AsUnsignedLongLongMask(value.ptr()));
}

}  // namespace

std::uintptr_t native_stream(nb::handle stream) {
  if (nb::isinstance<nb::int_>(stream) && !nb::isinstance<nb::bool_>(stream)) {
    return as_handle(stream);
  }
  if (nb::isinstance<Stream>(stream)) {
    return reinterpret_cast<std::uintptr_t>(nb::cast<const Stream&>(stream).native().native);
  }
  if (nb::hasattr(stream, "__cuda_stream__")) {
    nb::object pair = stream.attr("__cuda_stream__")();
    return as_handle(pair[1]);
  }
  if (nb::hasattr(stream, "cuda_stream")) return as_handle(stream.attr("cuda_stream"));
  if (nb::hasattr(stream, "ptr")) return as_handle(stream.attr("ptr"));
  throw Error(ErrorCode::InvalidArgument,
              "stream: " + nb::cast<std::string>(nb::repr(stream)) +
                  " is not a stream (give an int CUstream, a kreg.Stream, a "
                  "torch.cuda.Stream or a cupy.cuda.Stream)");
}

const Stream& wrapped_stream(std::uintptr_t native, int device) {
  static auto* cache = new StreamCache;  // kept to the end: streams may outlive the module
  return cache->get(native, device);
}

void bind_streams(nb::module_& m) {
  nb::class_<Stream>(m, "Stream",
                     "A CUDA stream on one GPU. Stream(device) makes a new non-blocking stream "
                     "that is destroyed with its last reference; Stream.wrap borrows one.")
      .def(nb::init<int>(), nb::arg("device") = 0)
      .def_static(
          "wrap",
          [](nb::handle native, int device) {
            return Stream::wrap(StreamRef(reinterpret_cast<void*>(  // NOLINT
                                    native_stream(native))),
                                device);
          },
          nb::arg("stream"), nb::arg("device") = 0,
          "A stream someone else owns (an int CUstream, or a torch or CuPy stream). kreg never "
          "destroys it.")
      .def_static("default", &Stream::default_stream, nb::arg("device") = 0,
                  "The GPU's legacy default stream.")
      .def_prop_ro("device", &Stream::device)
      .def_prop_ro(
          "native",
          [](const Stream& s) { return reinterpret_cast<std::uintptr_t>(s.native().native); },
          "The CUstream handle, as an int.")
      .def(
          "synchronize",
          [](const Stream& s) {
            nb::gil_scoped_release release;
            s.synchronize();
          },
          "Waits (without holding the GIL) until the stream's work has finished.")
      .def("__cuda_stream__",
           [](const Stream& s) {
             return nb::make_tuple(0, reinterpret_cast<std::uintptr_t>(s.native().native));
           })
      .def("__eq__", [](const Stream& a, const Stream& b) { return a == b; })
      .def("__hash__",
           [](const Stream& s) { return reinterpret_cast<std::uintptr_t>(s.native().native); })
      .def("__repr__", [](const Stream& s) {
        return "kreg.Stream(device=" + std::to_string(s.device()) +
               ", native=" + std::to_string(reinterpret_cast<std::uintptr_t>(s.native().native)) +
               ")";
      });
  m.def("current_stream", &current_stream,
        "The stream kreg work of this thread runs on when no framework's stream applies.");
}

}  // namespace kreg::python
