// Batched transpose: out[b][j][i] = in[b][i][j] for in of shape batch x rows x cols, which is
// the 2-D transpose (batch 1) and the 0-2-1 permute. Tiles go through shared memory so that
// both the reads and the writes are coalesced. Elements move as opaque words of their size,
// so one instantiation per size serves every dtype.
//
// Elements move P at a time, in packs of eight bytes (four for 1-byte elements, whose tiles
// would not fit shared memory), over tiles of 32P x 32P: a thread reads P rows of P elements,
// transposes them in registers, and keeps each column's P elements as one pack in shared
// memory, so every global and shared access is a whole pack. Without whole packs (a
// dimension not a multiple of P, or a pointer off the pack) the same tiles move element by
// element.
// kreg:entry transpose_1=transpose<unsigned char, 4>
// kreg:entry transpose_2=transpose<unsigned short, 4>
// kreg:entry transpose_4=transpose<unsigned int, 2>
// kreg:entry transpose_8=transpose<unsigned long long, 1>
#include <kreg/kernel.cuh>

template <typename T, unsigned P>
struct alignas(sizeof(T) * P) Pack {
  T v[P];
};

// Blocks are 32 x 8 threads.
template <typename T, unsigned P>
__global__ void transpose(const T* __restrict__ in, T* __restrict__ out, unsigned rows,
                          unsigned cols) {
  constexpr unsigned kGroups = 32;    // groups of P rows in a tile
  constexpr unsigned kTile = 32 * P;  // the tile's edge, in elements
  // tile[g][slot(c)] holds rows gP .. gP + P - 1 of the tile's column c. A warp stores the
  // columns p, P + p, 2P + p, ...: the slots put those side by side, and the odd row length
  // puts a warp's reads of one column (down the groups) in distinct banks.
  __shared__ Pack<T, P> tile[kGroups][kTile + 1];
  auto slot = [](unsigned c) { return (c % P) * 32 + c / P; };
  const unsigned long long plane = static_cast<unsigned long long>(rows) * cols;
  const T* src = in + blockIdx.z * plane;
  T* dst = out + blockIdx.z * plane;
  const bool packed =
      P == 1 || (rows % P == 0 && cols % P == 0 &&
                 reinterpret_cast<unsigned long long>(src) % sizeof(Pack<T, P>) == 0 &&
                 reinterpret_cast<unsigned long long>(dst) % sizeof(Pack<T, P>) == 0);

  const unsigned col = blockIdx.x * kTile + threadIdx.x * P;  // this thread's first column
  for (unsigned g = threadIdx.y; g < kGroups; g += blockDim.y) {
    const unsigned row = blockIdx.y * kTile + g * P;
    if (row >= rows) break;
    T v[P][P];  // v[q][p]: row + q, col + p
#pragma unroll
    for (unsigned q = 0; q < P; ++q) {
      const T* from = src + static_cast<unsigned long long>(row + q) * cols + col;
      if (packed) {
        if (row + q < rows && col < cols) {
          const Pack<T, P> word = *reinterpret_cast<const Pack<T, P>*>(from);
#pragma unroll
          for (unsigned p = 0; p < P; ++p) v[q][p] = word.v[p];
        }
      } else {
#pragma unroll
        for (unsigned p = 0; p < P; ++p) {
          v[q][p] = row + q < rows && col + p < cols ? from[p] : T{};
        }
      }
    }
#pragma unroll
    for (unsigned p = 0; p < P; ++p) {
      Pack<T, P> column;
#pragma unroll
      for (unsigned q = 0; q < P; ++q) column.v[q] = v[q][p];
      tile[g][slot(threadIdx.x * P + p)] = column;
    }
  }
  __syncthreads();

  const unsigned out_col = blockIdx.y * kTile + threadIdx.x * P;  // rows of the input
  for (unsigned c = threadIdx.y; c < kTile; c += blockDim.y) {
    const unsigned out_row = blockIdx.x * kTile + c;  // a column of the input
    if (out_row >= cols) break;
    if (out_col >= rows) continue;
    const Pack<T, P> column = tile[threadIdx.x][slot(c)];
    T* to = dst + static_cast<unsigned long long>(out_row) * rows + out_col;
    if (packed) {
      *reinterpret_cast<Pack<T, P>*>(to) = column;
    } else {
#pragma unroll
      for (unsigned q = 0; q < P; ++q) {
        if (out_col + q < rows) to[q] = column.v[q];
      }
    }
  }
}
