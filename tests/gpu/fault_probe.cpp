// Runs a custom kernel that reads through a wild pointer, then waits for its result, and
// prints what kreg reported. A faulting kernel leaves the process's context unusable, so
// this runs as its own process (see launch_test.cpp's KernelFaultIsLaunchErrorWithLabel).
#include <kreg/kreg.hpp>

#include <cstdio>

int main() {
  try {
    const kreg::CustomKernel wild("reads_wild_pointer", {"a"}, {"out"}, R"(
      const float* nowhere = (const float*)(0x10ull + (unsigned long long)a[0]);
      out[thread_position_in_grid.x] = nowhere[thread_position_in_grid.x * 1024];
    )");
    const kreg::Array a = kreg::Array::from_data<int>({0}, {1});
    auto out = wild.apply({a}, {{{64}, kreg::Dtype::Float32}}, {64}, {64});
    const auto values = out[0].to_vector<float>();
    std::printf("no error; first value %g\n", values[0]);
    return 1;
  } catch (const kreg::Error& e) {
    std::printf("%s\n%s\n", kreg::to_string(e.code()), e.what());
    return 0;
  }
}
