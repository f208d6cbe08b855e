// Runs the built-in kernels on the GPU against float64 CPU references.
#include "commands.hpp"
#include "compare.hpp"

#include <cuda_runtime.h>

#include <cmath>
#include <functional>
#include <map>
#include <random>
#include <stdexcept>
#include <string>

namespace kreg::cli {
namespace {

void check(cudaError_t result, const char* what) {
  if (result != cudaSuccess)
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(result));
}

template <class T>
struct Buffer {
  T* data = nullptr;
  std::size_t n;
  explicit Buffer(const std::vector<T>& host) : n(host.size()) {
    check(cudaMalloc(reinterpret_cast<void**>(&data), n * sizeof(T)), "cudaMalloc");
    check(cudaMemcpy(data, host.data(), n * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy");
  }
  explicit Buffer(std::size_t count) : n(count) {
    check(cudaMalloc(reinterpret_cast<void**>(&data), n * sizeof(T)), "cudaMalloc");
    check(cudaMemset(data, 0xFF, n * sizeof(T)), "cudaMemset");  // NaN until written
  }
  ~Buffer() { cudaFree(data); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  std::vector<T> read() const {
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    std::vector<T> host(n);
    check(cudaMemcpy(host.data(), data, n * sizeof(T), cudaMemcpyDeviceToHost), "cudaMemcpy");
    return host;
  }
};

constexpr unsigned kN = 1'000'003;  // odd, and larger than one grid pass below
const Dim3 kGrid{512};
const Dim3 kBlock{256};

template <class T>
std::vector<T> random(std::mt19937& rng, double lo = -2, double hi = 2) {
  std::uniform_real_distribution<double> d(lo, hi);
  std::vector<T> v(kN);
  for (T& x : v) x = static_cast<T>(d(rng));
  return v;
}

using Check = std::function<std::string(Registry&, const KernelRequest&, std::mt19937&, bool&)>;

std::string elementwise(Registry& reg, const KernelRequest& r, std::mt19937& rng, bool& ok) {
  auto a = random<float>(rng);
  auto b = random<float>(rng);
  const Buffer<float> da(a);
  const Buffer<float> db(b);
  const Buffer<float> out(kN);
  reg.get(r.name, r.constants)
      .launch(kGrid, kBlock, 0, nullptr, static_cast<const float*>(da.data),
              static_cast<const float*>(db.data), out.data, kN);
  const bool add = r.name == "elementwise_add_f32";
  std::vector<double> want(kN);
  for (unsigned i = 0; i < kN; ++i) want[i] = add ? double(a[i]) + b[i] : double(a[i]) * b[i];
  return compare(out.read(), want, 1e-6, ok);
}

std::string powi(Registry& reg, const KernelRequest& r, std::mt19937& rng, bool& ok) {
  int exponent = 0;
  bool negate = false;
  for (const auto& [index, value] : r.constants.ints) exponent = index == 300 ? value : exponent;
  for (const auto& [index, value] : r.constants.bools) negate = index == 200 ? value : negate;
  auto x = random<float>(rng, -1.5, 1.5);
  const Buffer<float> dx(x);
  const Buffer<float> out(kN);
  reg.get(r.name, r.constants)
      .launch(kGrid, kBlock, 0, nullptr, static_cast<const float*>(dx.data), out.data, kN);
  std::vector<double> want(kN);
  for (unsigned i = 0; i < kN; ++i) want[i] = (negate ? -1 : 1) * std::pow(double(x[i]), exponent);
  return compare(out.read(), want, 1e-5, ok);
}

template <class T>
std::string axpy(Registry& reg, const KernelRequest& r, std::mt19937& rng, bool& ok) {
  auto x = random<T>(rng);
  auto y = random<T>(rng);
  const T alpha = static_cast<T>(0.625);
  const Buffer<T> dx(x);
  const Buffer<T> dy(y);
  reg.get(r.name, r.constants)
      .launch(kGrid, kBlock, 0, nullptr, alpha, static_cast<const T*>(dx.data), dy.data, kN);
  std::vector<double> want(kN);
  for (unsigned i = 0; i < kN; ++i) want[i] = double(alpha) * x[i] + y[i];
  return compare(dy.read(), want, sizeof(T) == 4 ? 1e-6 : 1e-14, ok);
}

}  // namespace

GpuCheck run_check(std::string label, const std::function<std::string(bool&)>& check) {
  GpuCheck result;
  result.label = std::move(label);
  try {
    result.detail = check(result.ok);
  } catch (const Error& e) {
    result.ok = false;
    result.detail = e.message();
  } catch (const std::exception& e) {
    result.ok = false;
    result.detail = e.what();
  }
  return result;
}

std::vector<GpuCheck> run_gpu_checks(Registry& reg) {
  const std::map<std::string, Check> checks = {
      {"elementwise_add_f32", elementwise},
      {"elementwise_mul_f32", elementwise},
      {"powi_f32", powi},
      {"axpy_f32", axpy<float>},
      {"axpy_f64", axpy<double>},
  };
  std::mt19937 rng(2026);
  std::vector<GpuCheck> results;
  for (const KernelRequest& request : reg.prewarm_all_requests()) {
    const std::string label = kernel_label(request.name, request.constants);
    auto it = checks.find(request.name);
    if (it == checks.end()) {
      results.push_back({label, true, "loaded; no reference check for this kernel"});
      continue;
    }
    results.push_back(
        run_check(label, [&](bool& ok) { return it->second(reg, request, rng, ok); }));
  }
  return results;
}

}  // namespace kreg::cli
