// Bodies written for MLX's metal_kernel that use more of Metal: an 8x8 product on a
// SIMD-group with simdgroup_matrix, and complex64 arrays with MLX's complex64_t.
//
// Without a GPU the example prints the source kreg generates for the product and skips
// the run.
#include <kreg/kreg.hpp>

#include <complex>
#include <cstdio>
#include <vector>

int main() {
  try {
    // One SIMD-group (32 threads) multiplies two 8x8 matrices on its lanes, as in Metal.
    kreg::CustomKernel matmul("matmul8", {"a", "b"}, {"c"},
                              "simdgroup_float8x8 x, y, acc = simdgroup_float8x8(0);\n"
                              "simdgroup_load(x, a, 8);\n"
                              "simdgroup_load(y, b, 8);\n"
                              "simdgroup_multiply_accumulate(acc, x, y, acc);\n"
                              "simdgroup_store(acc, c, 8);\n");
    std::vector<float> identity(64, 0.0f);
    for (int i = 0; i < 8; ++i) identity[i * 9] = 1.0f;
    std::vector<float> values(64);
    for (int i = 0; i < 64; ++i) values[i] = static_cast<float>(i);
    const kreg::Array a = kreg::Array::from_data(values, {8, 8});
    const kreg::Array b = kreg::Array::from_data(identity, {8, 8});
    const std::vector<kreg::OutputSpec> matrix{{{8, 8}, kreg::Dtype::Float32}};

    // complex64 in and out: each element times i, plus its conjugate.
    kreg::CustomKernel rotate("rotate", {"z"}, {"out"},
                              "uint k = thread_position_in_grid.x;\n"
                              "out[k] = z[k] * complex64_t(0.0f, 1.0f) + conj(z[k]);\n");
    const kreg::Array z = kreg::Array::from_data<std::complex<float>>({{1, 2}, {-3, 0.5f}}, {2});

    if (kreg::devices().empty()) {
      std::printf("no GPU: kreg would compile this for the product:\n%s\nrun skipped\n",
                  matmul.generated_source({a, b}, matrix).c_str());
      return 0;
    }

    const std::vector<kreg::Array> c = matmul.apply({a, b}, matrix, {32}, {32});
    const std::vector<kreg::Array> r = rotate.apply({z}, {{{2}, kreg::Dtype::Complex64}}, {2}, {2});
    const std::vector<float> product = c[0].to_vector<float>();  // a times the identity
    for (int i = 0; i < 64; ++i) {
      if (product[i] != values[i]) {
        std::printf("element %d: %g, expected %g\n", i, product[i], values[i]);
        return 1;
      }
    }
    const std::vector<std::complex<float>> rotated = r[0].to_vector<std::complex<float>>();
    std::printf("a x I == a; (1+2i)i + (1-2i) = %g%+gi, (-3+0.5i)i + (-3-0.5i) = %g%+gi\n",
                rotated[0].real(), rotated[0].imag(), rotated[1].real(), rotated[1].imag());
    return 0;
  } catch (const kreg::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
