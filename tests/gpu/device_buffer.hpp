#pragma once
// Device memory for GPU tests, through the CUDA runtime (which shares the primary context
// with kreg). Every call is checked.

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace kreg::test {

inline void cuda_check(cudaError_t result, const char* what) {
  if (result != cudaSuccess) {
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(result));
  }
}

template <class T>
class DeviceBuffer {
 public:
  explicit DeviceBuffer(std::size_t count) : count_(count) {
    cuda_check(cudaMalloc(reinterpret_cast<void**>(&data_), count * sizeof(T) + 1), "cudaMalloc");
  }
  explicit DeviceBuffer(const std::vector<T>& host) : DeviceBuffer(host.size()) { upload(host); }
  ~DeviceBuffer() { cudaFree(data_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  T* get() const { return data_; }
  std::size_t size() const { return count_; }
  void upload(const std::vector<T>& host) {
    cuda_check(cudaMemcpy(data_, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice),
               "cudaMemcpy H2D");
  }
  std::vector<T> download() const {
    cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    std::vector<T> host(count_);
    cuda_check(cudaMemcpy(host.data(), data_, count_ * sizeof(T), cudaMemcpyDeviceToHost),
               "cudaMemcpy D2H");
    return host;
  }
  // All bits set: NaN for floats, -1 for integers, so an unwritten element shows.
  void poison() { cuda_check(cudaMemset(data_, 0xFF, count_ * sizeof(T)), "cudaMemset"); }

 private:
  T* data_ = nullptr;
  std::size_t count_;
};

template <class T>
std::vector<T> random_vector(std::size_t n, std::mt19937& rng, double lo = -2.0, double hi = 2.0) {
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<T> out(n);
  for (T& v : out) v = static_cast<T>(dist(rng));
  return out;
}

// Max relative error of `got` against a float64 reference, with NaN counted as failure.
template <class T>
::testing::AssertionResult close_to(const std::vector<T>& got, const std::vector<double>& want,
                                    double tolerance) {
  if (got.size() != want.size()) return ::testing::AssertionFailure() << "size mismatch";
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double g = static_cast<double>(got[i]);
    const double scale = std::max(1.0, std::abs(want[i]));
    if (!(std::abs(g - want[i]) <= tolerance * scale)) {
      return ::testing::AssertionFailure()
             << "element " << i << ": got " << g << ", want " << want[i];
    }
  }
  return ::testing::AssertionSuccess();
}

}  // namespace kreg::test
