// Gathers a strided view into a row-major buffer. Arrays use it to make non-contiguous
// inputs contiguous and to read views back to the host. Elements are moved as opaque
// words of their size, so one instantiation per size serves every dtype.
// kreg:entry strided_copy_1=strided_copy<unsigned char>
// kreg:entry strided_copy_2=strided_copy<unsigned short>
// kreg:entry strided_copy_4=strided_copy<unsigned int>
// kreg:entry strided_copy_8=strided_copy<unsigned long long>
#include <kreg/device/kernel.cuh>

struct CopyLayout {
  int ndim;
  long long shape[8];
  long long strides[8];  // in elements
};

template <typename T>
__global__ void strided_copy(const T* __restrict__ src, T* __restrict__ dst, CopyLayout layout,
                             unsigned long long n) {
  const unsigned long long step = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
  for (unsigned long long i =
           static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < n; i += step) {
    unsigned long long rest = i;
    long long at = 0;
    for (int d = layout.ndim - 1; d >= 0; --d) {
      const unsigned long long extent = static_cast<unsigned long long>(layout.shape[d]);
      at += static_cast<long long>(rest % extent) * layout.strides[d];
      rest /= extent;
    }
    dst[i] = src[at];
  }
}
