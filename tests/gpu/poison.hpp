#pragma once
// Poisoned outputs for GPU tests of the ops: memory an op's output gets was filled with NaN
// bits just before, so an element the kernel leaves unwritten cannot pass as a result. And
// the random inputs those tests share.

#include <kreg/kreg.hpp>

#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

namespace kreg::test {

// Released memory is reused, last in first out, for the next allocation of the same size on
// the same stream; so filling `count` blocks of `bytes` and releasing them poisons the next
// outputs of that size.
inline void poison(std::size_t bytes, int count = 1) {
  static const CustomKernel fill("poison_bytes", {"a"}, {"out"},
                                 "uint i = thread_position_in_grid.x; out[i] = 0xff + a[0] * 0;");
  std::vector<Array> blocks;
  for (int i = 0; i < count; ++i) {
    ApplyOptions options;
    options.init_value = 255;
    blocks.push_back(fill.apply({Array::from_data<std::uint8_t>({0}, {1})},
                                {OutputSpec{{static_cast<std::int64_t>(bytes)}, Dtype::UInt8}},
                                Dim3{1}, Dim3{1}, options)[0]);
  }
  eval(blocks);
}

// n values uniform in [-1, 1), rounded to T, and the same values exactly as doubles, for a
// float64 reference computed from what the GPU reads.
template <class T>
void random_values(std::mt19937& rng, std::size_t n, std::vector<T>& values,
                   std::vector<double>& exact) {
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  values.resize(n);
  exact.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    values[i] = T(static_cast<float>(dist(rng)));
    exact[i] = static_cast<double>(static_cast<float>(values[i]));
  }
}

}  // namespace kreg::test
