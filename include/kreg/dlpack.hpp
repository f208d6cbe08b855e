#pragma once
/// \file
/// Zero-copy exchange of arrays with other frameworks (PyTorch, CuPy, JAX, ...) through
/// DLPack's `DLManagedTensor`. Include <dlpack/dlpack.h> to use the tensors themselves.

#include <kreg/array.hpp>
#include <kreg/types.hpp>

#include <cstdint>
#include <optional>

extern "C" {
struct DLManagedTensor;
}

namespace kreg {

/// When `from_dlpack` calls a GPU tensor's deleter, once kreg no longer uses the memory.
enum class DlpackRelease {
  /// After waiting for the array's stream, so that the producer may reuse the memory at
  /// once, from any stream. Safe with every producer; the wait blocks the thread that drops
  /// the last use (the end of an `eval`, typically).
  AfterStream,
  /// At once, without waiting: for producers whose allocator reuses freed memory only in the
  /// order of the stream kreg ran on (PyTorch's and CuPy's caching allocators, when kreg runs
  /// on the framework's current stream, as their own operations do).
  Immediately,
};

/// DLPack's `DLDataType` fields for a dtype, for code that builds `DLTensor`s itself: copy
/// them into the tensor's `dtype`. One lane; bool is DLPack's `kDLBool` (code 6).
struct DlpackDtype {
  std::uint8_t code = 0;
  std::uint8_t bits = 0;
  std::uint16_t lanes = 1;
};
DlpackDtype dlpack_dtype(Dtype dtype) noexcept;

/// An array over a GPU tensor's memory, without a copy. The array takes the tensor over
/// and calls its deleter once the last array (or view) using the memory is gone.
///
/// The tensor must be on a CUDA device (`kDLCUDA` or `kDLCUDAManaged`), with one lane, a
/// dtype kreg has (int/uint 8-64, float 16/32/64, bfloat16, complex64, bool), and at most 8
/// dimensions; otherwise this throws `InvalidArgument` and the caller keeps the tensor.
/// A host tensor (`kDLCPU`, `kDLCUDAHost`) is the exception: its elements are copied (in
/// row-major order, whatever its strides) into an array that keeps them on the host until
/// a kernel needs them, as `Array::from_bytes` does, and its deleter is called at once.
/// The array runs on the current stream when that is on the tensor's GPU, else on the
/// GPU's default stream; the producer must have finished writing the data, as seen from
/// that stream (the DLPack exchange protocol's job).
Array from_dlpack(DLManagedTensor* tensor, DlpackRelease release = DlpackRelease::AfterStream);

/// A tensor over the array's memory, without a copy (the array is evaluated first; views
/// keep their strides). The memory stays alive until the consumer calls the deleter.
///
/// With `consumer`, work the consumer queues on that stream is ordered after the array's
/// producer, and the memory is not reused before work queued there by the time of the
/// deleter call. Without it, this waits for the array's stream to finish.
DLManagedTensor* to_dlpack(const Array& array, std::optional<StreamRef> consumer = std::nullopt);

}  // namespace kreg
