// Batched transpose: out[b][j][i] = in[b][i][j] for in of shape batch x rows x cols, which is
// the 2-D transpose (batch 1) and the 0-2-1 permute. Tiles of 32 x 32 go through shared memory
// so that both the reads and the writes are coalesced. Elements move as opaque words of their
// size, so one instantiation per size serves every dtype.
// kreg:entry transpose_1=transpose<unsigned char>
// kreg:entry transpose_2=transpose<unsigned short>
// kreg:entry transpose_4=transpose<unsigned int>
// kreg:entry transpose_8=transpose<unsigned long long>
#include <kreg/kernel.cuh>

template <typename T>
__global__ void transpose(const T* __restrict__ in, T* __restrict__ out, unsigned rows,
                          unsigned cols) {
  constexpr unsigned kTile = 32;
  __shared__ T tile[kTile][kTile + 1];  // +1: column reads do not all hit one bank
  const unsigned long long plane = static_cast<unsigned long long>(rows) * cols;
  const T* src = in + blockIdx.z * plane;
  T* dst = out + blockIdx.z * plane;
  const unsigned col = blockIdx.x * kTile + threadIdx.x;
  for (unsigned k = threadIdx.y; k < kTile; k += blockDim.y) {
    const unsigned row = blockIdx.y * kTile + k;
    if (row < rows && col < cols)
      tile[k][threadIdx.x] = src[static_cast<unsigned long long>(row) * cols + col];
  }
  __syncthreads();
  const unsigned out_col = blockIdx.y * kTile + threadIdx.x;  // a row of the input
  for (unsigned k = threadIdx.y; k < kTile; k += blockDim.y) {
    const unsigned out_row = blockIdx.x * kTile + k;  // a column of the input
    if (out_row < cols && out_col < rows) {
      dst[static_cast<unsigned long long>(out_row) * rows + out_col] = tile[threadIdx.x][k];
    }
  }
}
