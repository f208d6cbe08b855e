#pragma once
// A fixed-size array passed to a kernel by value, in the parameter space (constant bank 0).
// Custom kernels receive small inputs and the shapes and strides of their inputs this way,
// so reading them costs no global-memory load and needs no allocation. Indexed like a
// pointer: `a[i]`, and converts to one.

namespace kreg {

template <class T, int N>
struct value_array {
  T values[N];

  // Any integer index, so that `a[i]` is this and not the pointer's subscript.
  template <class I>
  __device__ const T& operator[](I i) const {
    return values[i];
  }
  __device__ const T* data() const { return values; }
  // Metal has a small input as a pointer (`const constant T*`), so a body may hand it to a
  // helper that takes one, or offset it: it converts to a pointer to its elements.
  __device__ operator const T*() const { return values; }
  __device__ static constexpr int size() { return N; }
};

}  // namespace kreg
