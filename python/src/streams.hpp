#pragma once
// Streams from Python: kreg.Stream, a raw CUstream as an int, or a framework's stream object.

#include <kreg/stream.hpp>

#include <nanobind/nanobind.h>

#include <cstdint>

namespace kreg::python {

namespace nb = nanobind;

// The native handle of a stream given from Python: an int, a kreg.Stream, an object with a
// `cuda_stream` (torch.cuda.Stream) or `ptr` (cupy.cuda.Stream) attribute, or one with the
// `__cuda_stream__` protocol. Throws InvalidArgument for anything else.
std::uintptr_t native_stream(nb::handle stream);

// A borrowed kreg::Stream over `native` on GPU `device`, reused across calls.
const Stream& wrapped_stream(std::uintptr_t native, int device);

}  // namespace kreg::python
