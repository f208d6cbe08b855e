#pragma once
/// \file
/// `Array`: an n-dimensional GPU array that is evaluated lazily.

#include <kreg/dtype.hpp>
#include <kreg/error.hpp>
#include <kreg/stream.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

namespace kreg {

namespace array {
struct ArrayNode;    // kreg's record of an array, shared by its copies
struct ArrayAccess;  // how kreg's own code reaches it
}  // namespace array

/// Dimensions (or strides) of an array. At most 8.
using Shape = std::vector<std::int64_t>;

/// An n-dimensional array of one dtype, stored on a GPU in memory from the driver's
/// stream-ordered allocator, and shared between copies of the `Array` (copies are cheap
/// handles, like `std::shared_ptr`).
///
/// Arrays are lazy: `Array::from_data` keeps its values on the host until a kernel needs
/// them, and the outputs of `CustomKernel::apply` are pending until `eval()`. Reading an
/// array (`to_vector`, `data`) evaluates it first.
///
/// Strides count elements, not bytes, and may describe a non-contiguous view
/// (`transpose`, `slice`) of another array's memory.
///
/// Threads: evaluated arrays may be read from any thread. A pending array (and the graph
/// behind it) must be evaluated by one thread at a time.
class Array {
 public:
  /// An empty handle; every accessor but `valid()` throws `InvalidArgument` on it.
  Array() = default;

  /// A row-major array holding `values`, whose count must match `shape` (an empty shape is
  /// a 0-d scalar). The values stay on the host until a kernel needs them, so this needs no
  /// GPU. Throws `InvalidArgument` for a count mismatch, a negative dimension or more than
  /// 8 dimensions.
  template <class T>
  static Array from_data(const std::vector<T>& values, Shape shape) {
    if constexpr (std::is_same_v<T, bool>) {
      const std::vector<std::uint8_t> bytes(values.begin(), values.end());
      return from_bytes(bytes.data(), bytes.size(), Dtype::Bool, std::move(shape));
    } else {
      return from_bytes(values.data(), values.size(), dtype_v<T>, std::move(shape));
    }
  }
  /// The same, from `count` elements of type `dtype` at `data` (copied).
  static Array from_bytes(const void* data, std::size_t count, Dtype dtype, Shape shape);
  /// An uninitialized row-major array, allocated when it is first evaluated.
  static Array empty(Shape shape, Dtype dtype);

  bool valid() const noexcept { return node_ != nullptr; }
  const Shape& shape() const;
  /// Element strides.
  const Shape& strides() const;
  Dtype dtype() const;
  /// Elements: the product of the shape (1 for a 0-d array).
  std::int64_t size() const;
  int ndim() const;
  /// `size() * size_of(dtype())`.
  std::size_t nbytes() const;
  /// Whether the strides are those of a row-major array of this shape.
  bool is_row_contiguous() const;
  /// Whether the array has its data (no pending work).
  bool is_evaluated() const;
  /// The device and stream the array is, or will be, computed on.
  const Stream& stream() const;

  /// Computes the array (and whatever it depends on). Throws what the work throws; the
  /// array then stays pending and a later `eval` tries again.
  void eval() const;

  /// The elements in row-major order, copied to the host once the stream has produced them.
  /// Throws `InvalidArgument` if `T` is not the array's dtype.
  template <class T>
  std::vector<T> to_vector() const {
    check_dtype(dtype_v<T>);
    if constexpr (std::is_same_v<T, bool>) {
      std::vector<std::uint8_t> bytes(static_cast<std::size_t>(size()));
      copy_to_host(bytes.data());
      return std::vector<bool>(bytes.begin(), bytes.end());
    } else {
      std::vector<T> out(static_cast<std::size_t>(size()));
      copy_to_host(out.data());
      return out;
    }
  }

  /// Copies the elements in row-major order to host memory at `out`, which must hold
  /// `nbytes()` bytes, once the stream has produced them. `to_vector` is the typed form.
  void copy_to_host(void* out) const;

  /// The device address of element 0 (after `eval`), for use with other CUDA code. Work
  /// queued on `stream()` may still be writing it.
  void* data() const;

  /// A view with the axes reversed.
  Array transpose() const;
  /// A view with the axes permuted: axis i of the result is axis `axes[i]` of this one.
  Array transpose(const std::vector<int>& axes) const;
  /// A view of `[start, stop)` along `axis`, every `step`th element (step > 0). Negative
  /// `start`/`stop` count from the end, as in Python; both are clamped to the dimension.
  Array slice(int axis, std::int64_t start, std::int64_t stop, std::int64_t step = 1) const;
  /// The same elements, in row-major order, with another shape of the same size: a view of a
  /// row-contiguous array (pending or not); a non-contiguous one is first evaluated and
  /// copied to row-major order. Throws `InvalidArgument` for a size that differs.
  Array reshape(Shape shape) const;

 private:
  friend struct array::ArrayAccess;
  explicit Array(std::shared_ptr<array::ArrayNode> node) : node_(std::move(node)) {}
  void check_dtype(Dtype wanted) const;
  const array::ArrayNode& checked() const;

  std::shared_ptr<array::ArrayNode> node_;
};

/// Evaluates several arrays; work they share is done once.
void eval(const std::vector<Array>& arrays);

}  // namespace kreg
