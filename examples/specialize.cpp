// Specialize one source with compile-time constants, and prewarm the variants an
// application will need, in parallel, before its first request.
#include <kreg/kreg.hpp>

#include <cstdio>

// A softmax-style row scale whose row width and masking are compile-time constants, so the
// loop unrolls and the untaken branch disappears.
static const char* kRowScale = R"(
#include <kreg/kernel.cuh>
KREG_CONSTANT(int, width, 300);                 // required
KREG_CONSTANT_DEFAULT(bool, masked, 200, false);  // optional

extern "C" __global__ void row_scale(const float* x, const unsigned char* mask, float* out,
                                     float scale) {
  const unsigned row = blockIdx.x;
#pragma unroll
  for (int j = 0; j < width; ++j) {
    const unsigned i = row * width + j;
    out[i] = (masked && mask[i] == 0) ? 0.0f : x[i] * scale;
  }
}
)";

int main() {
  try {
    kreg::RegistryOptions options;
    if (kreg::Registry(kreg::RegistryOptions{.warm_compiler = false}).arch().empty()) {
      options.arch = "sm_90";  // no GPU: compile only
    }
    kreg::Registry reg(options);
    reg.register_source("row_scale", kRowScale);

    // The same set in any order is the same kernel.
    kreg::Constants wide_masked{.bools = {{200, true}}, .ints = {{300, 128}}};
    std::printf("label: %s\n", kreg::kernel_label("row_scale", wide_masked).c_str());

    const std::size_t ready = reg.prewarm(std::vector<kreg::KernelRequest>{
        {"row_scale", {.ints = {{300, 64}}}},
        {"row_scale", {.ints = {{300, 128}}}},
        {"row_scale", wide_masked},
    });
    std::printf("%zu variants ready; %llu compiles in %.1f ms\n", ready,
                static_cast<unsigned long long>(reg.stats().compiles), reg.stats().compile_ms);

    // A missing required constant is a compile error that names it.
    try {
      reg.compile("row_scale");
    } catch (const kreg::Error& e) {
      std::printf("as expected, %s: %.60s...\n", kreg::to_string(e.code()), e.what());
    }
    return ready == 3 ? 0 : 1;
  } catch (const kreg::Error& e) {
    std::fprintf(stderr, "%s: %s\n", kreg::to_string(e.code()), e.what());
    return 1;
  }
}
