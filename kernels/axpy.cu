// y[i] = alpha * x[i] + y[i], as a template instantiated for each element type.
// kreg:entry axpy_f32=axpy<float>
// kreg:entry axpy_f64=axpy<double>
#include <kreg/device/kernel.cuh>

template <typename T>
__global__ void axpy(T alpha, const T* __restrict__ x, T* __restrict__ y, unsigned n) {
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    y[i] = alpha * x[i] + y[i];
  }
}
