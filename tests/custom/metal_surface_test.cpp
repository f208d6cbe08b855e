// The parts of Metal that real metal_kernel bodies use beyond its math: address-space words,
// threadgroup arrays, <metal_stdlib>, helpers without __device__, SIMD-group scans and votes,
// atomics under metal::, and `half`. The rewriting is checked as text; each construct also
// compiles through CustomKernel with NVRTC for sm_90. Needs no GPU.
#include "custom/address_spaces.hpp"
#include "custom/codegen.hpp"
#include "test_support.hpp"

#include <string>
#include <vector>

namespace kreg {
namespace {

using custom::rewrite_address_spaces;
using custom::TextScope;
using test::contains;
using test::custom_compile_error;

std::string body_text(std::string_view text) {
  return rewrite_address_spaces(text, TextScope::Function);
}

std::string header_text(std::string_view text) {
  return rewrite_address_spaces(text, TextScope::Program);
}

TEST(AddressSpaces, ThreadgroupObjectsBecomeSharedMemory) {
  EXPECT_EQ(body_text("threadgroup float buf[256];"), "__shared__ float buf[256];");
  EXPECT_EQ(body_text("threadgroup atomic<uint> n;"), "__shared__ atomic<uint> n;");
  EXPECT_EQ(body_text("  threadgroup\n  float4 tile[4][4];"), "  __shared__ float4 tile[4][4];");
}

TEST(AddressSpaces, PointersReferencesAndCastsLoseTheWord) {
  EXPECT_EQ(body_text("threadgroup float* p = buf;"), "float* p = buf;");
  EXPECT_EQ(body_text("auto q = (threadgroup int*)p;"), "auto q = (int*)p;");
  EXPECT_EQ(header_text("float f(const device float* p, thread float& r);"),
            "float f(const float* p, float& r);");
  EXPECT_EQ(header_text("float g(device const half* __restrict__ p);"),
            "float g(const half* __restrict__ p);");
  EXPECT_EQ(body_text("thread float v = a[i];"), "float v = a[i];");
  EXPECT_EQ(header_text("struct S { device atomic<int>* counts; };"),
            "struct S { atomic<int>* counts; };");
}

TEST(AddressSpaces, ConstantTablesAtProgramScopeAreConstantMemory) {
  EXPECT_EQ(header_text("constant float table[2] = {1.0f, 2.0f};"),
            "__constant__ float table[2] = {1.0f, 2.0f};");
  // Inside a function, a read-only object.
  EXPECT_EQ(header_text("inline float f() { constant float k[2] = {1, 2}; return k[0]; }"),
            "inline float f() { const float k[2] = {1, 2}; return k[0]; }");
  EXPECT_EQ(body_text("constant int n = 3;"), "const int n = 3;");
  // constexpr already makes it usable on the device.
  EXPECT_EQ(header_text("constant constexpr int kN = 4;"), "constexpr int kN = 4;");
  EXPECT_EQ(header_text("constexpr constant int kN = 4;"), "constexpr int kN = 4;");
}

TEST(AddressSpacesText, NamesThatAreNotQualifiersStay) {
  const std::vector<std::string> untouched = {
      "int device = 0; device += 1;",
      "float thread = x; out[i] = thread * 2;",
      "threadgroup_barrier(mem_flags::mem_threadgroup);",
      "uint3 p = thread_position_in_grid; uint t = thread_index_in_threadgroup;",
      "// a threadgroup float buf[4] in a comment\n",
      "/* device float* p */ int k;",
      "const char* s = \"threadgroup float x\";",
      "auto d = device_id; my_device float x;",
      "x = cond ? device : thread;",
  };
  for (const std::string& text : untouched) {
    EXPECT_EQ(body_text(text), text);
    EXPECT_EQ(header_text(text), text);
  }
}

Array floats(std::int64_t n = 256) {
  return Array::from_data(std::vector<float>(n, 0.5f), {n});
}

std::string compile_error(const std::string& body, const std::string& header = "",
                          std::vector<Array> inputs = {}, Dtype out = Dtype::Float32,
                          bool atomic = false) {
  if (inputs.empty()) inputs.push_back(floats());
  CustomKernelOptions options;
  options.header = header;
  options.atomic_outputs = atomic;
  const CustomKernel kernel("metal_surface", {"a"}, {"out"}, body, options);
  return custom_compile_error(kernel, inputs, {OutputSpec{{256}, out}});
}

TEST(MetalSurface, ThreadgroupArrayWithBarriers) {
  EXPECT_EQ(compile_error("threadgroup float buf[256];\n"
                          "threadgroup uint count;\n"
                          "const uint t = thread_position_in_threadgroup.x;\n"
                          "if (t == 0) count = 0;\n"
                          "buf[t] = a[thread_position_in_grid.x];\n"
                          "threadgroup_barrier(mem_flags::mem_threadgroup);\n"
                          "threadgroup float* view = buf;\n"
                          "out[thread_position_in_grid.x] = view[255 - t] + count;\n"),
            "");
}

TEST(MetalSurface, HeaderHelpersNeedNoDeviceAnnotation) {
  EXPECT_EQ(
      compile_error("out[thread_position_in_grid.x] = twice(a[thread_position_in_grid.x]);",
                    "inline float twice(float x) { return 2 * x; }\n"
                    "template <typename T> T square(T x) { return x * x; }\n"
                    "struct Scale { float s; float apply(float x) const { return s * x; } };\n"),
      "");
}

TEST(MetalSurface, MetalStandardHeadersAndUsingNamespaceMetal) {
  for (const char* include : {"metal_stdlib", "metal_math", "metal_simdgroup", "metal_atomic",
                              "metal_compute", "metal_integer"}) {
    EXPECT_EQ(compile_error("out[thread_position_in_grid.x] = a[thread_position_in_grid.x];",
                            std::string("#include <") + include + ">\nusing namespace metal;\n"),
              "")
        << include;
  }
  EXPECT_EQ(compile_error("uint i = thread_position_in_grid.x;\n"
                          "out[i] = exp(a[i]) + max(a[i], 1.0f) + simd_sum(a[i]) + M_PI_F + "
                          "clamp(a[i], 0.0f, 1.0f) + ceildiv(i, 2u);\n",
                          "#include <metal_stdlib>\nusing namespace metal;\n"),
            "");
}

TEST(MetalSurface, AddressSpaceWordsInHelpersAndTables) {
  EXPECT_EQ(compile_error("uint i = thread_position_in_grid.x;\n"
                          "thread float v = load(a, i);\n"
                          "out[i] = v + table[i % 2] + kScale;\n",
                          "constant float table[2] = {1.0f, 2.0f};\n"
                          "constant constexpr float kScale = 0.5f;\n"
                          "inline float load(const device float* p, uint i) {\n"
                          "  thread float v = p[i];\n"
                          "  return v;\n"
                          "}\n"),
            "");
}

TEST(MetalSurface, SimdScansShufflesAndVotes) {
  EXPECT_EQ(compile_error(
                "uint i = thread_position_in_grid.x;\n"
                "float x = a[i];\n"
                "uint k = i;\n"
                "out[i] = simd_prefix_exclusive_sum(x) + simd_prefix_inclusive_sum(x) +\n"
                "  simd_prefix_inclusive_product(x) + simd_prefix_exclusive_product(x) +\n"
                "  simd_shuffle_xor(x, 1) + simd_shuffle_up(x, 1) + simd_shuffle_down(x, 2) +\n"
                "  simd_shuffle_rotate_down(x, 3) + simd_shuffle_rotate_up(x, 3) +\n"
                "  simd_max(x) + simd_min(x) + simd_product(x) + metal::simd_sum(x) +\n"
                "  simd_and(k) + simd_or(k) + simd_xor(k) + simd_all(x > 0) + simd_any(x > 1) +\n"
                "  float(simd_ballot(x > 0) & 1);\n"
                "simdgroup_barrier(mem_flags::mem_none);\n"),
            "");
}

TEST(MetalSurface, AtomicsUnderMetalNamespace) {
  EXPECT_EQ(compile_error("uint i = thread_position_in_grid.x;\n"
                          "metal::atomic_store_explicit(&out[i], uint(a[i]), "
                          "metal::memory_order_relaxed);\n"
                          "uint v = atomic_load_explicit(&out[i], memory_order_relaxed);\n"
                          "atomic_fetch_add_explicit(&out[0], v, metal::memory_order_relaxed);\n",
                          "", {}, Dtype::UInt32, true),
            "");
}

TEST(MetalSurface, HalfInBodiesAndConversions) {
  const std::vector<Array> halves = {Array::from_data(std::vector<half>(256, half(0.5f)), {256})};
  EXPECT_EQ(compile_error("uint i = thread_position_in_grid.x;\n"
                          "half y = a[i];\n"
                          "bfloat16_t b = bfloat16_t(y);\n"
                          "half z = half(float(b) * 2.0f);\n"
                          "out[i] = float(y) + float(z);\n",
                          "", halves),
            "");
}

TEST(MetalSurface, AsTypeReadsBits) {
  EXPECT_EQ(compile_error("uint i = thread_position_in_grid.x;\n"
                          "uint bits = as_type<uint>(a[i]);\n"
                          "ushort2 halves = as_type<ushort2>(a[i]);\n"
                          "out[i] = metal::as_type<float>(bits ^ 0x80000000u) + halves.x;\n"),
            "");
  EXPECT_TRUE(contains(compile_error("out[0] = as_type<double>(a[0]);"), "differ in size"));
}

TEST(MetalSurfaceCodegen, DefaultDeviceAndHalfOnlyWhereTheyApply) {
  custom::KernelSpec spec;
  spec.name = "k";
  spec.body = "out[0] = a[0];";
  spec.inputs.push_back({"a", Dtype::Float16, custom::InputKind::Pointer, 0});
  spec.outputs.emplace_back("out", Dtype::Float32);
  const std::string plain = custom::generate(spec).source;
  EXPECT_FALSE(contains(plain, "-default-device"));
  EXPECT_FALSE(contains(plain, "typedef kreg::half half;"));

  spec.header = "inline float f(float x) { return x; }\n";
  spec.body = "half h = a[0]; out[0] = f(h);";
  const std::string with_header = custom::generate(spec).source;
  EXPECT_TRUE(contains(with_header, "// kreg:options -default-device"));
  EXPECT_TRUE(contains(with_header, "typedef kreg::half half;"));

  // A header that brings cuda_fp16.h has its own `half`.
  spec.header = "#include <cuda_fp16.h>\n";
  EXPECT_FALSE(contains(custom::generate(spec).source, "typedef kreg::half half;"));
}

}  // namespace
}  // namespace kreg
