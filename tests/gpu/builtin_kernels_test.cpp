// Every built-in kernel on random data against a float64 CPU reference, with outputs
// poisoned before each launch. Sizes include odd ones and ones past a full grid.
#include "gpu/device_buffer.hpp"
#include "test_support.hpp"

#include <cmath>

namespace kreg {
namespace {

using test::close_to;
using test::DeviceBuffer;
using test::random_vector;

class BuiltinKernels : public test::WithGpuRegistry<::testing::TestWithParam<unsigned>> {
 protected:
  // Deliberately few blocks for large n, so the grid-stride loops are exercised.
  static Dim3 grid_for(unsigned n) { return Dim3{std::min((n + 255) / 256, 64U)}; }

  std::mt19937 rng_{1234};
};

TEST_P(BuiltinKernels, ElementwiseAddAndMul) {
  const unsigned n = GetParam();
  auto a = random_vector<float>(n, rng_);
  auto b = random_vector<float>(n, rng_);
  DeviceBuffer<float> da(a), db(b), dout(n);
  for (const char* name : {"elementwise_add_f32", "elementwise_mul_f32"}) {
    const bool add = std::string(name).find("add") != std::string::npos;
    std::vector<double> want(n);
    for (unsigned i = 0; i < n; ++i) {
      want[i] = add ? double(a[i]) + double(b[i]) : double(a[i]) * double(b[i]);
    }
    dout.poison();
    reg_->get(name).launch(grid_for(n), Dim3{256}, 0, nullptr, da.get(), db.get(), dout.get(), n);
    EXPECT_TRUE(close_to(dout.download(), want, 1e-6)) << name << " n=" << n;
  }
}

TEST_P(BuiltinKernels, PowiForEveryConstantCombination) {
  const unsigned n = GetParam();
  auto x = random_vector<float>(n, rng_, -1.5, 1.5);
  DeviceBuffer<float> dx(x), dout(n);
  for (int exponent : {0, 1, 3, 4, 8}) {
    for (int negate = -1; negate <= 1; ++negate) {  // -1: constant left at its default
      Constants c{.ints = {{300, exponent}}};
      if (negate >= 0) c.bools.emplace_back(200, negate == 1);
      std::vector<double> want(n);
      for (unsigned i = 0; i < n; ++i) {
        const double r = std::pow(double(x[i]), exponent);
        want[i] = negate == 1 ? -r : r;
      }
      dout.poison();
      reg_->get("powi_f32", c).launch(grid_for(n), Dim3{128}, 0, nullptr, dx.get(), dout.get(), n);
      EXPECT_TRUE(close_to(dout.download(), want, 1e-5))
          << kernel_label("powi_f32", c) << " n=" << n;
    }
  }
}

TEST_P(BuiltinKernels, AxpyTemplateInstantiations) {
  const unsigned n = GetParam();
  {
    auto x = random_vector<float>(n, rng_);
    auto y = random_vector<float>(n, rng_);
    const float alpha = 0.75f;
    DeviceBuffer<float> dx(x), dy(y);
    reg_->get("axpy_f32").launch(grid_for(n), Dim3{256}, 0, nullptr, alpha, dx.get(), dy.get(), n);
    std::vector<double> want(n);
    for (unsigned i = 0; i < n; ++i) want[i] = double(alpha) * x[i] + y[i];
    EXPECT_TRUE(close_to(dy.download(), want, 1e-6)) << "n=" << n;
  }
  {
    auto x = random_vector<double>(n, rng_);
    auto y = random_vector<double>(n, rng_);
    const double alpha = -1.25;
    DeviceBuffer<double> dx(x), dy(y);
    reg_->get("axpy_f64").launch(grid_for(n), Dim3{256}, 0, nullptr, alpha, dx.get(), dy.get(), n);
    std::vector<double> want(n);
    for (unsigned i = 0; i < n; ++i) want[i] = alpha * x[i] + y[i];
    EXPECT_TRUE(close_to(dy.download(), want, 1e-14)) << "n=" << n;
  }
}

INSTANTIATE_TEST_SUITE_P(Sizes, BuiltinKernels,
                         ::testing::Values(1u, 7u, 256u, 1000003u, 20000000u));

}  // namespace
}  // namespace kreg
