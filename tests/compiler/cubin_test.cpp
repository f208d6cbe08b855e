// Reading the functions a CUBIN image defines.
#include "compiler/cubin.hpp"
#include "compiler/nvrtc_compiler.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace kreg::compiler {
namespace {

std::vector<char> compiled_image() {
  Request r;
  r.program_name = "symbols.cu";
  r.source =
      "extern \"C\" __global__ void first(int* p) { p[0] = 1; }\n"
      "template <class T> __global__ void second(T* p) { p[0] = 2; }\n"
      "template __global__ void second<float>(float*);\n"
      "__device__ int unused_helper(int x) { return x; }\n";
  r.arch = "sm_90";
  r.options = {"-minimal"};
  const Result result = compile(r);
  EXPECT_TRUE(result.ok) << result.log;
  return result.image;
}

TEST(Cubin, ListsTheKernelsAnImageDefines) {
  const std::vector<char> image = compiled_image();
  const std::vector<std::string> names = defined_functions(image);
  EXPECT_NE(std::find(names.begin(), names.end(), "first"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "_Z6secondIfEvPT_"), names.end());
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
}

TEST(Cubin, DamagedImagesGiveNoneOrFewerNeverACrash) {
  const std::vector<char> image = compiled_image();
  const std::size_t all = defined_functions(image).size();
  for (std::size_t n = 0; n < image.size(); n += 7) {
    EXPECT_LE(defined_functions(std::span<const char>(image.data(), n)).size(), all) << n;
  }
  std::vector<char> bad = image;
  for (std::size_t i = 0x28; i < 0x40; ++i) bad[i] = '\xff';  // section header table fields
  EXPECT_TRUE(defined_functions(bad).empty());
  EXPECT_TRUE(defined_functions(std::vector<char>(4096, '\x7f')).empty());
}

}  // namespace
}  // namespace kreg::compiler
