// Register a kernel source, get it from the registry, and launch it.
//
// kreg compiles the source with NVRTC on the first `get` and caches the result; later
// `get`s are lock-free lookups. Without a GPU, the example compiles the kernel for sm_90
// to show that the source is valid, and skips the launch.
#include <kreg/kreg.hpp>

#include <cuda_runtime.h>

#include <cstdio>
#include <vector>

static const char* kSaxpy = R"(
extern "C" __global__ void saxpy(float a, const float* x, float* y, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
)";

int main() {
  try {
    kreg::Registry reg;  // built-in kernels registered, nothing compiled yet
    reg.register_source("saxpy", kSaxpy);

    if (reg.arch().empty()) {
      kreg::Registry offline(kreg::RegistryOptions{.arch = "sm_90"});
      offline.register_source("saxpy", kSaxpy);
      const kreg::Binary& binary = offline.compile("saxpy");
      std::printf("no GPU: compiled %s for %s (%zu bytes, %.1f ms); launch skipped\n",
                  binary.key().c_str(), binary.arch().c_str(), binary.size(),
                  binary.milliseconds());
      return 0;
    }

    const unsigned n = 1 << 20;
    std::vector<float> x(n, 1.0f), y(n, 2.0f);
    float *dx = nullptr, *dy = nullptr;
    cudaMalloc(&dx, n * sizeof(float));
    cudaMalloc(&dy, n * sizeof(float));
    cudaMemcpy(dx, x.data(), n * sizeof(float), cudaMemcpyHostToDevice);
    cudaMemcpy(dy, y.data(), n * sizeof(float), cudaMemcpyHostToDevice);

    const kreg::Kernel& saxpy = reg.get("saxpy");  // compiles, loads, caches
    // Arguments are checked against the kernel's parameters: count and sizes must match.
    saxpy.launch(kreg::Dim3{(n + 255) / 256}, kreg::Dim3{256}, 0, nullptr, 3.0f,
                 static_cast<const float*>(dx), dy, n);
    cudaMemcpy(y.data(), dy, n * sizeof(float), cudaMemcpyDeviceToHost);
    cudaFree(dx);
    cudaFree(dy);

    std::printf("y[0] = %.1f (expected 5.0); %s: %d registers\n", y[0], saxpy.label().c_str(),
                saxpy.attributes().registers);
    return y[0] == 5.0f ? 0 : 1;
  } catch (const kreg::Error& e) {
    std::fprintf(stderr, "%s: %s\n", kreg::to_string(e.code()), e.what());
    return 1;
  }
}
