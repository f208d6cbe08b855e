// A custom kernel written as a body string, run lazily over arrays.
//
// kreg writes the kernel's signature from the input and output names, compiles it when an
// output is first read, and caches the binary like any other kernel. Without a GPU the
// example prints the source kreg generates and skips the run.
#include <kreg/kreg.hpp>

#include <cstdio>
#include <vector>

int main() {
  try {
    // The seed's example: double every element.
    kreg::CustomKernel twice("double", {"a"}, {"out"},
                             "uint i = thread_position_in_grid.x; out[i] = 2 * a[i];");
    const kreg::Array a = kreg::Array::from_data<float>({1, 2, 3, 4}, {4});
    const std::vector<kreg::OutputSpec> outputs{{{4}, kreg::Dtype::Float32}};

    // A body written for Metal: one sum per SIMD-group (warp), through a template argument.
    kreg::CustomKernel sums("warp_sums", {"x"}, {"out"},
                            "T v = x[thread_position_in_grid.x];\n"
                            "T total = simd_sum(v);\n"
                            "if (thread_index_in_simdgroup == 0)\n"
                            "  out[thread_position_in_grid.x / 32] = total;");
    kreg::ApplyOptions options;
    options.template_args = {{"T", kreg::Dtype::Float32}};
    const kreg::Array x = kreg::Array::from_data(std::vector<float>(128, 0.5f), {128});

    if (kreg::devices().empty()) {
      std::printf("no GPU: kreg would compile this for the doubling kernel:\n%s\nrun skipped\n",
                  twice.generated_source({a}, outputs).c_str());
      return 0;
    }

    // apply returns at once: the outputs are pending until they are read.
    std::vector<kreg::Array> doubled = twice.apply({a}, outputs, {4}, {4});
    std::vector<kreg::Array> totals =
        sums.apply({x}, {{{4}, kreg::Dtype::Float32}}, {128}, {128}, options);
    kreg::eval({doubled[0], totals[0]});  // compiles both kernels, then launches them

    const std::vector<float> d = doubled[0].to_vector<float>();
    const std::vector<float> t = totals[0].to_vector<float>();
    std::printf("double: %g %g %g %g (expected 2 4 6 8)\n", d[0], d[1], d[2], d[3]);
    std::printf("warp sums: %g %g %g %g (expected 16 each)\n", t[0], t[1], t[2], t[3]);
    const bool ok = d == std::vector<float>{2, 4, 6, 8} && t == std::vector<float>(4, 16.0f);
    return ok ? 0 : 1;
  } catch (const kreg::Error& e) {
    std::fprintf(stderr, "%s: %s\n", kreg::to_string(e.code()), e.what());
    return 1;
  }
}
