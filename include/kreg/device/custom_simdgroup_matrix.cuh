#pragma once
/// \file
/// Metal's `simdgroup_matrix<T, 8, 8>` on a CUDA warp: an 8x8 matrix spread over the 32 lanes
/// of a SIMD-group, two elements a lane, with `simdgroup_load`, `simdgroup_store`,
/// `simdgroup_multiply` and `simdgroup_multiply_accumulate`.
///
/// A lane holds the elements Metal's hardware gives it (row and column pair below), so a body
/// that reads `thread_elements()` by position gets what it would on Metal. A product is
/// computed with warp shuffles in `float` (in `double` where an operand is double), each
/// element a sum of 8 products in order of k, then rounded to the destination's type; it
/// runs on the CUDA cores, not the tensor cores. Every lane of the warp must take part, as
/// in Metal.

#include <kreg/device/custom_float16.cuh>
#include <kreg/device/custom_simd.cuh>
#include <kreg/device/custom_traits.cuh>

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)

namespace kreg {
namespace detail {

// Lane bits 1, 2 and 4 give the row; bits 0 and 3 the first of the lane's two columns.
__device__ inline unsigned matrix_row(unsigned lane) {
  return ((lane >> 4) & 1u) * 4 + ((lane >> 1) & 3u);
}
__device__ inline unsigned matrix_column(unsigned lane) {
  return ((lane >> 3) & 1u) * 4 + (lane & 1u) * 2;
}
// The lane that holds element (row, column).
__device__ inline unsigned matrix_lane(unsigned row, unsigned column) {
  return ((column >> 1) & 1u) | ((row & 3u) << 1) | (((column >> 2) & 1u) << 3) |
         (((row >> 2) & 1u) << 4);
}

/// A lane's two elements, as Metal's `thread_elements()` gives them: `[0]` and `[1]`, or
/// `.x` and `.y`.
template <class T>
struct matrix_elements {
  T x, y;
  __device__ T& operator[](int i) { return i == 0 ? x : y; }
  __device__ const T& operator[](int i) const { return i == 0 ? x : y; }
};

template <class T, class U>
constexpr bool either_double = is_same<T, double> || is_same<U, double>;

}  // namespace detail
}  // namespace kreg

/// Metal's template order: element type, columns, rows. Only 8x8 exists, as in Metal.
template <class T, int Cols, int Rows>
struct simdgroup_matrix {
  static_assert(Cols == 8 && Rows == 8, "simdgroup_matrix is 8x8 only, as in Metal");

  kreg::detail::matrix_elements<T> elements;

  simdgroup_matrix() = default;
  /// A diagonal matrix: `diagonal` on it, zero elsewhere (so `simdgroup_float8x8(0)` is zero).
  __device__ simdgroup_matrix(T diagonal) {
    const unsigned lane = kreg::detail::lane_id();
    const unsigned row = kreg::detail::matrix_row(lane);
    const unsigned column = kreg::detail::matrix_column(lane);
    elements.x = row == column ? diagonal : T(0);
    elements.y = row == column + 1 ? diagonal : T(0);
  }

  __device__ kreg::detail::matrix_elements<T>& thread_elements() { return elements; }
  __device__ const kreg::detail::matrix_elements<T>& thread_elements() const { return elements; }
};

typedef simdgroup_matrix<float, 8, 8> simdgroup_float8x8;
typedef simdgroup_matrix<kreg::half, 8, 8> simdgroup_half8x8;
typedef simdgroup_matrix<kreg::bfloat16, 8, 8> simdgroup_bfloat8x8;

/// Every element `value`.
template <class T, int Cols, int Rows>
__device__ inline simdgroup_matrix<T, Cols, Rows> make_filled_simdgroup_matrix(T value) {
  simdgroup_matrix<T, Cols, Rows> m;
  m.elements.x = value;
  m.elements.y = value;
  return m;
}

namespace kreg {
namespace detail {

// Where element (row, column) of a matrix lies in memory of `stride` elements a row, from the
// block's top-left corner (x: column, y: row); a transposed block holds the matrix's columns in
// its rows.
__device__ inline long long matrix_offset(unsigned row, unsigned column, long long stride,
                                          long long x, long long y, bool transpose) {
  return transpose ? (y + column) * stride + x + row : (y + row) * stride + x + column;
}

template <class T, class U>
__device__ inline void load_matrix(simdgroup_matrix<T, 8, 8>& m, const U* source, long long stride,
                                   long long x, long long y, bool transpose) {
  const unsigned lane = lane_id();
  const unsigned row = matrix_row(lane);
  const unsigned column = matrix_column(lane);
  m.elements.x = T(source[matrix_offset(row, column, stride, x, y, transpose)]);
  m.elements.y = T(source[matrix_offset(row, column + 1, stride, x, y, transpose)]);
}

template <class T, class U>
__device__ inline void store_matrix(const simdgroup_matrix<T, 8, 8>& m, U* target,
                                    long long stride, long long x, long long y, bool transpose) {
  const unsigned lane = lane_id();
  const unsigned row = matrix_row(lane);
  const unsigned column = matrix_column(lane);
  target[matrix_offset(row, column, stride, x, y, transpose)] = U(m.elements.x);
  target[matrix_offset(row, column + 1, stride, x, y, transpose)] = U(m.elements.y);
}

}  // namespace detail
}  // namespace kreg

/// Loads the 8x8 block at `source`, rows `elements_per_row` apart, from its corner
/// `matrix_origin` (x: column, y: row); with `transpose_matrix`, the block's transpose.
template <class T, class U, class Stride = long long>
__device__ inline void simdgroup_load(simdgroup_matrix<T, 8, 8>& m, const U* source,
                                      Stride elements_per_row = 8) {
  kreg::detail::load_matrix(m, source, static_cast<long long>(elements_per_row), 0, 0, false);
}
template <class T, class U, class Stride, class Origin>
__device__ inline void simdgroup_load(simdgroup_matrix<T, 8, 8>& m, const U* source,
                                      Stride elements_per_row, Origin matrix_origin,
                                      bool transpose_matrix = false) {
  kreg::detail::load_matrix(m, source, static_cast<long long>(elements_per_row),
                            static_cast<long long>(matrix_origin.x),
                            static_cast<long long>(matrix_origin.y), transpose_matrix);
}

/// Stores the matrix as `simdgroup_load` would read it back.
template <class T, class U, class Stride = long long>
__device__ inline void simdgroup_store(const simdgroup_matrix<T, 8, 8>& m, U* target,
                                       Stride elements_per_row = 8) {
  kreg::detail::store_matrix(m, target, static_cast<long long>(elements_per_row), 0, 0, false);
}
template <class T, class U, class Stride, class Origin>
__device__ inline void simdgroup_store(const simdgroup_matrix<T, 8, 8>& m, U* target,
                                       Stride elements_per_row, Origin matrix_origin,
                                       bool transpose_matrix = false) {
  kreg::detail::store_matrix(m, target, static_cast<long long>(elements_per_row),
                             static_cast<long long>(matrix_origin.x),
                             static_cast<long long>(matrix_origin.y), transpose_matrix);
}

/// d = a * b + c. Any of them may be the same matrix.
template <class TD, class TA, class TB, class TC>
__device__ inline void simdgroup_multiply_accumulate(simdgroup_matrix<TD, 8, 8>& d,
                                                     const simdgroup_matrix<TA, 8, 8>& a,
                                                     const simdgroup_matrix<TB, 8, 8>& b,
                                                     const simdgroup_matrix<TC, 8, 8>& c) {
  using kreg::detail::matrix_lane;
  using kreg::detail::shuffle;
  using kreg::detail::shuffle_kind;
  using Acc = typename kreg::detail::pick<
      kreg::detail::either_double<TA, TB> || kreg::detail::either_double<TC, TD>, double,
      float>::type;
  const unsigned lane = kreg::detail::lane_id();
  const unsigned row = kreg::detail::matrix_row(lane);
  const unsigned column = kreg::detail::matrix_column(lane);
  Acc sum0 = static_cast<Acc>(c.elements.x);
  Acc sum1 = static_cast<Acc>(c.elements.y);
#pragma unroll
  for (unsigned k = 0; k < 8; k += 2) {
    const unsigned from_a = matrix_lane(row, k);
    const auto a0 = static_cast<Acc>(shuffle<shuffle_kind::index>(a.elements.x, from_a));
    const auto a1 = static_cast<Acc>(shuffle<shuffle_kind::index>(a.elements.y, from_a));
    const unsigned from_b0 = matrix_lane(k, column);
    const unsigned from_b1 = matrix_lane(k + 1, column);
    const auto b00 = static_cast<Acc>(shuffle<shuffle_kind::index>(b.elements.x, from_b0));
    const auto b01 = static_cast<Acc>(shuffle<shuffle_kind::index>(b.elements.y, from_b0));
    const auto b10 = static_cast<Acc>(shuffle<shuffle_kind::index>(b.elements.x, from_b1));
    const auto b11 = static_cast<Acc>(shuffle<shuffle_kind::index>(b.elements.y, from_b1));
    sum0 = a1 * b10 + (a0 * b00 + sum0);
    sum1 = a1 * b11 + (a0 * b01 + sum1);
  }
  d.elements.x = TD(sum0);
  d.elements.y = TD(sum1);
}

/// d = a * b.
template <class TD, class TA, class TB>
__device__ inline void simdgroup_multiply(simdgroup_matrix<TD, 8, 8>& d,
                                          const simdgroup_matrix<TA, 8, 8>& a,
                                          const simdgroup_matrix<TB, 8, 8>& b) {
  simdgroup_multiply_accumulate(d, a, b, make_filled_simdgroup_matrix<TD, 8, 8>(TD(0)));
}

/// The same names under `metal::`.
namespace metal {
using ::make_filled_simdgroup_matrix;
using ::simdgroup_bfloat8x8;
using ::simdgroup_float8x8;
using ::simdgroup_half8x8;
using ::simdgroup_load;
using ::simdgroup_matrix;
using ::simdgroup_multiply;
using ::simdgroup_multiply_accumulate;
using ::simdgroup_store;
}  // namespace metal

#endif  // __CUDACC__ || __CUDACC_RTC__
