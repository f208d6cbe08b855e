#pragma once
// A fixed-size array passed to a kernel by value, in the parameter space (constant bank 0).
// Custom kernels receive small inputs and the shapes and strides of their inputs this way,
// so reading them costs no global-memory load and needs no allocation. Indexed like a
// pointer: `a[i]`.

namespace kreg {

template <class T, int N>
struct value_array {
  T values[N];

  __device__ const T& operator[](long long i) const { return values[i]; }
  __device__ const T* data() const { return values; }
  __device__ static constexpr int size() { return N; }
};

}  // namespace kreg
