// The parts of Metal that real metal_kernel bodies use beyond its math: address-space words,
// threadgroup arrays, <metal_stdlib>, helpers without __device__, SIMD-group scans and votes,
// atomics under metal::, `half`, conditionals mixing `half` and `float`, and Metal's vector
// types. The rewriting is checked as text; each
// construct also compiles through CustomKernel with NVRTC for sm_90. Needs no GPU.
#include "custom/codegen.hpp"
#include "custom/rewrite_text.hpp"
#include "test_support.hpp"

#include <algorithm>
#include <string>
#include <vector>

namespace kreg {
namespace {

using custom::TextScope;
using test::contains;
using test::custom_compile_error;

std::string body_text(std::string_view text) {
  return test::address_spaces(text, TextScope::Function);
}

std::string header_text(std::string_view text) {
  return test::address_spaces(text, TextScope::Program);
}

TEST(AddressSpaces, ThreadgroupObjectsBecomeSharedMemory) {
  EXPECT_EQ(body_text("threadgroup float buf[256];"), "__shared__ float buf[256];");
  EXPECT_EQ(body_text("threadgroup atomic<uint> n;"), "__shared__ atomic<uint> n;");
  EXPECT_EQ(body_text("  threadgroup\n  float4 tile[4][4];"), "  __shared__ float4 tile[4][4];");
}

TEST(AddressSpaces, ADigitSeparatorIsNotACharacterLiteral) {
  // Read as the start of a character literal, 1'000 would hide the rest of the body from
  // every rewrite, and `threadgroup` would reach NVRTC.
  EXPECT_EQ(body_text("int n = 1'000; threadgroup float t[4];"),
            "int n = 1'000; __shared__ float t[4];");
  EXPECT_EQ(body_text("uint m = 0xFF'FFu; float x = 1'0.2'5f; threadgroup int c;"),
            "uint m = 0xFF'FFu; float x = 1'0.2'5f; __shared__ int c;");
  // u8'a' is a character literal, whose prefix only ends in a digit.
  EXPECT_EQ(body_text("char c = u8'x'; threadgroup int d;"), "char c = u8'x'; __shared__ int d;");
  EXPECT_EQ(body_text("char q = 'threadgroup'; threadgroup int e;"),
            "char q = 'threadgroup'; __shared__ int e;");
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

TEST(MetalSurface, DigitSeparatorsBeforeMetalWords) {
  EXPECT_EQ(compile_error("const uint n = 1'000;\n"
                          "threadgroup float buf[256];\n"
                          "const uint t = thread_position_in_threadgroup.x;\n"
                          "buf[t] = a[thread_position_in_grid.x] * 0x1'0;\n"
                          "threadgroup_barrier(mem_flags::mem_threadgroup);\n"
                          "out[thread_position_in_grid.x] = buf[255 - t] + n;\n"),
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

TEST(MetalVectors, ConstructorsOfEveryKind) {
  EXPECT_EQ(compile_error("uint i = thread_position_in_grid.x;\n"
                          "float x = a[i];\n"
                          "float4 v = float4(x, 1, 2.0f, 3u);\n"
                          "float4 w = float4(v.xy, 0, 1);\n"
                          "float3 t = float3(w.x, v.zw);\n"
                          "float4 b = float4(x);\n"
                          "float4 z = 0;\n"
                          "int4 k = int4(v);\n"
                          "float4 back = float4(k);\n"
                          "vec<float, 2> p = vec<float, 2>(x, x);\n"
                          "float2 q = {1.0f, 2.0f};\n"
                          "uchar4 c = uchar4(1, 2, 3, 4);\n"
                          "short2 s = short2(ushort2(7, 8));\n"
                          "out[i] = w.w + t.z + b.y + z.x + back.x + p.y + q.x + c.w + s.y;\n"),
            "");
}

TEST(MetalVectors, SwizzleReadsAndWrites) {
  EXPECT_EQ(compile_error("uint i = thread_position_in_grid.x;\n"
                          "float4 v = float4(a[i], 1, 2, 3);\n"
                          "float3 r = v.zyx;\n"
                          "float2 s = v.yx + v.xx;\n"
                          "float4 c = v.rgba * v.bgra;\n"
                          "v.xy = v.yx;\n"
                          "v.zw = float2(5, 6);\n"
                          "v.xyz += 1.0f;\n"
                          "v.w = r.x + s.y + c.a + v.g;\n"
                          "out[i] = v[3] + v.w;\n"),
            "");
  // A swizzle that repeats a component is read-only, as in Metal.
  EXPECT_TRUE(
      contains(compile_error("float4 v = 0; v.xx = float2(1, 2); out[0] = v.x;"), "read-only"));
}

TEST(MetalVectors, ArithmeticComparisonsAndIndexing) {
  EXPECT_EQ(compile_error("uint i = thread_position_in_grid.x;\n"
                          "float4 v = float4(a[i]);\n"
                          "float4 w = (v + 1) * 2.0f - v / 3 + 1.5f * v;\n"
                          "w -= v; w *= 2; w /= float4(1, 2, 3, 4); w += v;\n"
                          "w = -w;\n"
                          "int4 k = int4(1, 2, 3, 4);\n"
                          "k = (k % 3) + (k << 1) + (k & 1) + (k | 2) + (k ^ k) + ~k;\n"
                          "bool4 m = v < w;\n"
                          "float4 picked = select(v, w, m);\n"
                          "for (int c = 0; c < 4; ++c) w[c] += k[c];\n"
                          "out[i] = w.x + picked.y + float(all(m)) + float(any(v == w));\n"),
            "");
}

TEST(MetalVectors, MathPerComponentAndGeometry) {
  EXPECT_EQ(compile_error(
                "uint i = thread_position_in_grid.x;\n"
                "float4 v = float4(a[i], 1, 2, 3);\n"
                "float3 d = v.xyz;\n"
                "float4 e = abs(v) + exp(v) + max(v, 0.0f) + min(v, v) + clamp(v, 0.0f, 1.0f) +\n"
                "  mix(v, v, 0.5f) + sqrt(v) + rsqrt(v) + floor(v) + fract(v) + step(0.5f, v) +\n"
                "  metal::exp(v) + fast::exp(v) + precise::sqrt(v) + pow(v, 2.0f) + tanh(v);\n"
                "float s = dot(v, e) + length(d) + length_squared(d) + distance(v.xy, e.xy) +\n"
                "  normalize(d).x + cross(d, d).z + dot(v.xyz, d);\n"
                "out[i] = e.x + s;\n"),
            "");
}

TEST(MetalVectors, LoadsAndStoresThroughCastPointers) {
  EXPECT_EQ(compile_error("uint i = thread_position_in_grid.x;\n"
                          "float4 v = ((const device float4*)a)[i];\n"
                          "((device float4*)out)[i] = v.wzyx;\n"
                          "const device float3* p = (const device float3*)a;\n"
                          "static_assert(sizeof(float3) == 16 && alignof(float3) == 16, \"\");\n"
                          "static_assert(sizeof(half3) == 8 && sizeof(uchar3) == 4, \"\");\n"
                          "static_assert(sizeof(float2) == 8 && alignof(float2) == 8, \"\");\n"
                          "out[i] += p[0].z;\n"),
            "");
}

TEST(MetalVectors, ThreadPositionsAsMetalVectors) {
  EXPECT_EQ(compile_error("uint3 pos = thread_position_in_grid;\n"
                          "uint2 xy = pos.xy;\n"
                          "uint3 size = threads_per_grid;\n"
                          "uint3 group = threads_per_threadgroup;\n"
                          "int64_t strides[2] = {1, 256};\n"
                          "uint k = elem_to_loc_2(pos, strides) + elem_to_loc(pos, a_shape, "
                          "a_strides, a_ndim);\n"
                          "float4 f = make_float4(1, 2, 3, 4);\n"
                          "::float4 cuda = f;\n"
                          "out[pos.x] = xy.x + size.x + group.x + k + cuda.w + "
                          "uint2(thread_position_in_grid.yx).x;\n"),
            "");
}

TEST(MetalVectors, HalfVectorsAndHeaderHelpers) {
  const std::vector<Array> halves = {Array::from_data(std::vector<half>(256, half(0.5f)), {256})};
  EXPECT_EQ(compile_error("uint i = thread_position_in_grid.x;\n"
                          "half4 h = ((const device half4*)a)[i / 4];\n"
                          "half2 g = h.xy * h.zw + half2(1.0f, 2.0f);\n"
                          "bfloat4 b = bfloat4(float4(h));\n"
                          "out[i] = brighten(float4(h)).x + float(g.y) + float(b.x);\n",
                          "#include <metal_stdlib>\n"
                          "using namespace metal;\n"
                          "inline float4 brighten(float4 c) { return float4(c.rgb * 2, c.a); }\n",
                          halves),
            "");
}

// Code written for CUDA's vectors keeps working beside Metal's: the toolkit's half2 stays,
// and its float2 converts to and from Metal's.
TEST(MetalVectors, CudaVectorsFromTheToolkitHeaders) {
  EXPECT_EQ(compile_error("uint i = thread_position_in_grid.x;\n"
                          "half2 h = __floats2half2_rn(a[i], 1.0f);\n"
                          "float2 f = __half22float2(h);\n"
                          "out[i] = (f * 2.0f).x + f.y;\n",
                          "#include <cuda_fp16.h>\n"),
            "");
}

TEST(MetalVectors, PackedVectorsKeepTheirElementsLayout) {
  EXPECT_EQ(compile_error("uint i = thread_position_in_grid.x;\n"
                          "static_assert(sizeof(packed_float3) == 12, \"\");\n"
                          "static_assert(alignof(packed_float3) == 4, \"\");\n"
                          "static_assert(sizeof(packed_half4) == 8 && sizeof(packed_uchar3) == 3, "
                          "\"\");\n"
                          "const device packed_float3* p = (const device packed_float3*)a;\n"
                          "packed_float3 q = p[i];\n"
                          "float3 f = q;\n"
                          "q = f * 2.0f;\n"
                          "q.yz = float2(q.x, 1.0f);\n"
                          "q += 1.0f;\n"
                          "packed_int2 n = packed_int2(int2(q.xy));\n"
                          "out[i] = q[0] + float3(q).z + metal::dot(q, f) + n.y + length(f - q);\n",
                          "using namespace metal;\n"),
            "");
}

TEST(MetalVectors, QualifiedVectorNames) {
  EXPECT_EQ(compile_error("uint i = thread_position_in_grid.x;\n"
                          "metal::float4 v = metal::float4(a[i]);\n"
                          "::metal::half2 h = ::metal::half2(v.xy);\n"
                          "metal::packed_float3 p = v.xyz;\n"
                          "metal::vec<float, 2> w = v.zw;\n"
                          "out[i] = v.w + float(h.y) + p.z + w.x + twice(v).x;\n",
                          "metal::float4 twice(metal::float4 v) { return v * 2; }\n"),
            "");
}

TEST(MetalVectorsText, QualifiedVectorNamesLoseTheirNamespace) {
  const auto unqualify_vectors = test::unqualified;
  EXPECT_EQ(unqualify_vectors("metal::float4 v = ::metal::packed_half3(x); metal::uint3 u;"),
            "float4 v = packed_half3(x); uint3 u;");
  EXPECT_EQ(unqualify_vectors("metal::exp(x) + metal::vec<float, 2>(1) + metal::float5"),
            "metal::exp(x) + metal::vec<float, 2>(1) + metal::float5");
  EXPECT_EQ(unqualify_vectors("kreg_metal::float4 a; my::metal::float2 b; xmetal::float4 c;"),
            "kreg_metal::float4 a; my::metal::float2 b; xmetal::float4 c;");
  EXPECT_EQ(unqualify_vectors("// metal::float4\n\"metal::float4\" metal::float4"),
            "// metal::float4\n\"metal::float4\" float4");
  EXPECT_TRUE(test::vector_use("packed_float3 p;", "").any);
  EXPECT_TRUE(test::vector_use("packed_uint3 p;", "").any);
}

TEST(MetalVectorsText, SwizzlesOfSwizzlesBecomeOneSwizzle) {
  const auto composed = [](std::string_view body, std::string_view header = "") {
    return test::composed(body, header);
  };
  EXPECT_EQ(composed("v.xyz.yx + v.zw.x + v.wzyx.xy.y + p->rgba.bgr + f(v).yx.x + a[i].xy.y"),
            "v.yx + v.z + v.z + p->bgr + f(v).y + a[i].y");
  EXPECT_EQ(composed("v.xy; v.xy.x.y; v.xy.z; v.xy.data; v.xy .x; // v.xy.x\n"),
            "v.xy; v.x.y; v.xy.z; v.xy.data; v.xy .x; // v.xy.x\n");
  // A struct member named like a swizzle keeps its meaning.
  EXPECT_EQ(composed("p.xy.x + q.zw.y", "struct P { float2 xy; };"), "p.xy.x + q.w");
  EXPECT_EQ(composed("float2 xy = v.xy; out = s.xy.x;"), "float2 xy = v.xy; out = s.xy.x;");
  EXPECT_EQ(composed("1.5f + x.xyzwx.y"), "1.5f + x.xyzwx.y");
  // A text that ends in a swizzle, or in a member access after one (the compiler reports
  // what is missing).
  EXPECT_EQ(composed("v.xyz"), "v.xyz");
  EXPECT_EQ(composed("a.xy."), "a.xy.");
}

TEST(MetalVectors, SwizzlesOfSwizzlesAndCopiedSwizzles) {
  EXPECT_EQ(compile_error("uint i = thread_position_in_grid.x;\n"
                          "float4 v = float4(a[i], 1, 2, 3);\n"
                          "auto s = v.zx;\n"
                          "float2 t = s;\n"
                          "v.xyz.zx = float2(5, 6);\n"
                          "out[i] = v.xy.x + v.xyz.yx.y + t.y + v.wzyx.xy.y;\n"),
            "");
}

TEST(MetalVectorsText, ScansTypesAndSwizzles) {
  using test::vector_use;
  EXPECT_FALSE(vector_use("out[i] = a[i] * 4; float x4 = 1; int float5 = 2;", "").any);
  EXPECT_FALSE(vector_use("uint3 p = thread_position_in_grid; out[p.x] = 1.5f;", "").any);
  EXPECT_TRUE(vector_use("float4 v;", "").any);
  EXPECT_TRUE(vector_use("", "vec <float, 2> v;").any);
  const custom::VectorUse use = vector_use("v.zyx + p->xy + c.rgba + s.x + q.xx", "w.xy");
  EXPECT_TRUE(use.any);
  EXPECT_EQ(use.swizzles, (std::vector<std::string>{"rgba", "xx", "xy", "zyx"}));
  EXPECT_EQ(custom::swizzle_macro(use.swizzles),
            "#define KREG_METAL_SWIZZLES(S) S(rgba, 0, 1, 2, 3) S(xx, 0, 0) S(xy, 0, 1) "
            "S(zyx, 2, 1, 0)\n");
  const test::Hoisted h =
      test::hoisted("#include <metal_stdlib>\n  # include \"x.h\"\nusing namespace metal;\n");
  EXPECT_EQ(h.includes, "#include <metal_stdlib>\n  # include \"x.h\"\n");
  EXPECT_EQ(h.rest, "\n\nusing namespace metal;\n");
}

// A kernel "k" from input a (of `dtype`) to a float output.
custom::KernelSpec copy_spec(Dtype dtype) {
  custom::KernelSpec spec;
  spec.name = "k";
  spec.body = "out[0] = a[0];";
  spec.inputs.push_back({"a", dtype, custom::InputKind::Pointer, 0});
  spec.outputs.emplace_back("out", Dtype::Float32);
  return spec;
}

TEST(MetalVectorsCodegen, OnlyKernelsWithVectorsMoveIntoTheNamespace) {
  custom::KernelSpec spec = copy_spec(Dtype::Float32);
  const custom::Generated plain = custom::generate(spec);
  EXPECT_FALSE(contains(plain.source, "custom_vector"));
  EXPECT_EQ(plain.expression, "kreg_custom_k");

  spec.body = "float4 v = float4(a[0]); out[0] = v.w;";
  const custom::Generated vectors = custom::generate(spec);
  EXPECT_TRUE(contains(vectors.source, "#include <kreg/device/custom_vector.cuh>"));
  EXPECT_FALSE(contains(vectors.source, "custom_vector_math"));
  EXPECT_TRUE(contains(vectors.source, "const ::uint3 kreg_grid"));
  EXPECT_EQ(vectors.expression, "kreg_metal::kreg_custom_k");

  spec.body = "float4 v = float4(a[0]); out[0] = dot(v, v);";
  EXPECT_TRUE(contains(custom::generate(spec).source, "custom_vector_math"));

  // Metal's half vectors, unless a header brings cuda_fp16.h and its own half2.
  spec.body = "half2 h = half2(a[0], 1.0f); out[0] = float(h.x);";
  EXPECT_TRUE(contains(custom::generate(spec).source, "custom_vector_float16"));
  spec.header = "#include <cuda_fp16.h>\n";
  EXPECT_FALSE(contains(custom::generate(spec).source, "custom_vector_float16"));
}

TEST(MetalSurfaceCodegen, DefaultDeviceAndHalfOnlyWhereTheyApply) {
  custom::KernelSpec spec = copy_spec(Dtype::Float16);
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

std::string wrapped(std::string_view operand, std::string_view other) {
  return "::kreg::detail::ternary_operand<decltype((" + std::string(other) + "))>((" +
         std::string(operand) + "))";
}

TEST(Ternaries, BothOperandsPassThroughTheHelper) {
  const auto rewrite_ternaries = test::ternaries;
  EXPECT_EQ(rewrite_ternaries("x = c ? f : h;"),
            "x = c ? " + wrapped(" f ", " h") + " : " + wrapped(" h", " f ") + ";");
  // The third operand ends at a comma, a closing bracket, or the `:` of an enclosing one.
  EXPECT_EQ(rewrite_ternaries("g(c ? a : b, d)"),
            "g(c ? " + wrapped(" a ", " b") + " : " + wrapped(" b", " a ") + ", d)");
  EXPECT_EQ(rewrite_ternaries("(c?a:b)+1"),
            "(c? " + wrapped("a", "b") + " : " + wrapped("b", "a") + ")+1");
  // Scope operators are not the colon, and calls inside an operand stay whole.
  EXPECT_EQ(rewrite_ternaries("c ? metal::max(a, b) : k::v;"),
            "c ? " + wrapped(" metal::max(a, b) ", " k::v") + " : " +
                wrapped(" k::v", " metal::max(a, b) ") + ";");
}

TEST(Ternaries, NestedConditionalsAreRewrittenInside) {
  const auto rewrite_ternaries = test::ternaries;
  const std::string inner = "b ? " + wrapped(" x ", " y ") + " : " + wrapped(" y ", " x ");
  EXPECT_EQ(rewrite_ternaries("r = a ? b ? x : y : z;"),
            "r = a ? " + wrapped(" " + inner, " z") + " : " + wrapped(" z", " " + inner) + ";");
  const std::string tail = "b ? " + wrapped(" y ", " z") + " : " + wrapped(" z", " y ");
  EXPECT_EQ(rewrite_ternaries("r = a ? x : b ? y : z;"),
            "r = a ? " + wrapped(" x ", " " + tail) + " : " + wrapped(" " + tail, " x ") + ";");
}

TEST(Ternaries, LineBreaksStayAndCommentsLeaveTheDecltype) {
  const std::string text = "r = c ? a // first\n : b;\nnext();";
  const std::string rewritten = test::ternaries(text);
  EXPECT_EQ(std::count(rewritten.begin(), rewritten.end(), '\n'), 2);
  EXPECT_TRUE(contains(rewritten, "decltype(( a    ))"));  // the comment is a blank there
  EXPECT_TRUE(contains(rewritten, "next();"));
}

TEST(Ternaries, TextWithoutConditionalsStays) {
  const std::vector<std::string> untouched = {
      "out[i] = a[i];",
      "// is it? yes: it is\n",
      "const char* s = \"a ? b : c\"; char q = '?';",
      "#define PICK(c, a, b) ((c) ? (a) : (b))\nint k;",
      "x = y ? z;",  // no colon: left for the compiler to report
  };
  for (const std::string& text : untouched) EXPECT_EQ(test::ternaries(text), text);
}

TEST(MetalSurface, ConditionalsMixingHalfAndFloat) {
  const std::vector<Array> halves = {Array::from_data(std::vector<half>(256, half(0.5f)), {256})};
  EXPECT_EQ(compile_error("uint i = thread_position_in_grid.x;\n"
                          "half h = a[i];\n"
                          "float f = 2.0f;\n"
                          "float r = i % 2 ? f : h;\n"
                          "half s = i % 3 ? h : 0.5f;\n"
                          "half t = i % 5 ? h : 0;\n"
                          "auto u = i % 7 == 0 ? h : i % 7 == 1 ? 1.0f : h * h;\n"
                          "bfloat16_t b = bfloat16_t(f);\n"
                          "float v = i & 1 ? h : b;\n"
                          "half& w = i ? h : s;\n"
                          "w = 1;\n"
                          "out[i] = r + s + t + u + v;\n",
                          "", halves),
            "");
  // In a helper of the header too.
  EXPECT_EQ(compile_error("out[thread_position_in_grid.x] = pick(a[thread_position_in_grid.x]);",
                          "float pick(half h) { return h > 0 ? h : 0.0f; }\n", halves),
            "");
}

TEST(MetalSurfaceCodegen, ConditionalsAreRewrittenOnlyWith16BitFloats) {
  custom::KernelSpec spec = copy_spec(Dtype::Float32);
  spec.body = "out[0] = a[0] > 0 ? a[0] : 0.0f;";
  EXPECT_FALSE(contains(custom::generate(spec).source, "ternary_operand"));
  spec.body = "half h = a[0]; out[0] = h > 0 ? h : 0.0f;";
  const std::string rewritten = custom::generate(spec).source;
  EXPECT_TRUE(contains(rewritten, "#include <kreg/device/custom_ternary.cuh>"));
  EXPECT_TRUE(contains(rewritten, "ternary_operand"));
}

// Each level of rewritten nesting copies its operands into the other's decltype, so a chain
// n deep renders 2^n copies of its innermost operand: past a bound the kernel is refused, at
// once, instead of rendering (40 levels would be a terabyte).
TEST(MetalSurfaceCodegen, ConditionalsNestedTooDeeplyAreRefused) {
  const auto nested = [](int depth) {
    std::string e = "h";
    for (int d = 0; d < depth; ++d) e = "(h > " + std::to_string(d) + " ? " + e + " : h)";
    return "half h = a[0]; out[0] = " + e + ";";
  };
  custom::KernelSpec spec = copy_spec(Dtype::Float16);
  const std::string shallow = nested(4);  // the spec views its body
  spec.body = shallow;
  EXPECT_TRUE(contains(custom::generate(spec).source, "ternary_operand"));
  for (const int depth : {40, 70}) {
    const std::string deep = nested(depth);
    spec.body = deep;
    const std::string message =
        test::expect_error(ErrorCode::InvalidArgument, [&] { custom::generate(spec); });
    EXPECT_TRUE(contains(message, "nested too deeply")) << message;
  }
}

TEST(MetalSurface, SimdgroupMatrices) {
  EXPECT_EQ(compile_error("uint lane = thread_index_in_simdgroup;\n"
                          "simdgroup_half8x8 h;\n"
                          "simdgroup_load(h, a, 8, ulong2(0, 0), true);\n"
                          "metal::simdgroup_matrix<float, 8, 8> f = simdgroup_float8x8(0);\n"
                          "simdgroup_multiply_accumulate(f, h, h, f);\n"
                          "simdgroup_multiply(f, f, h);\n"
                          "threadgroup float tile[64];\n"
                          "simdgroup_store(f, tile, 8);\n"
                          "out[lane] = tile[lane] + f.thread_elements()[1];\n",
                          "#include <metal_simdgroup_matrix>\nusing namespace metal;\n"),
            "");
  // Without vector types.
  EXPECT_EQ(compile_error("simdgroup_bfloat8x8 m = make_filled_simdgroup_matrix<bfloat16_t, 8, "
                          "8>(1);\nsimdgroup_store(m, out, 16);\n"),
            "");
}

TEST(MetalSurface, UsingNamespaceMetalAlone) {
  EXPECT_EQ(compile_error("using namespace metal;\nout[thread_position_in_grid.x] = 1;"), "");
}

TEST(MetalSurface, BodiesWrittenForMlxCudaKernels) {
  std::vector<Array> inputs = {floats(), Array::from_data(std::vector<float>{2.0f}, {})};
  CustomKernelOptions options;
  const CustomKernel kernel(
      "cuda_style", {"a", "d"}, {"out"},
      "auto elem = cooperative_groups::this_grid().thread_rank();\n"
      "auto block = cg::this_thread_block();\n"
      "auto loc = elem_to_loc(elem, a_shape.data(), a_strides.data(), a_ndim);\n"
      "out[elem] = a[loc] * d[0] + WARP_SIZE + block.thread_rank();\n",
      options);
  EXPECT_EQ(custom_compile_error(kernel, inputs, {OutputSpec{{256}, Dtype::Float32}}), "");
}

TEST(MetalSurfaceCodegen, AScalarTheBodySubscriptsIsAOneElementArray) {
  const auto source = [](const std::string& body) {
    const CustomKernel kernel("scalar", {"a", "d"}, {"out"}, body);
    return kernel.generated_source({floats(), Array::from_data(std::vector<float>{2.0f}, {})},
                                   {OutputSpec{{256}, Dtype::Float32}});
  };
  EXPECT_TRUE(contains(source("out[0] = a[0] * d;"), "const float d"));
  EXPECT_TRUE(contains(source("out[0] = a[0] * d [0];"), "const kreg::value_array<float, 1> d"));
  // Naming another word that ends in d does not count.
  EXPECT_TRUE(
      contains(source("float bd[2] = {1, 2}; out[0] = a[0] * d * bd[1];"), "const float d"));
}

TEST(MetalSurface, MlxLimitsAndMetalsBfloat) {
  EXPECT_EQ(
      compile_error("uint i = thread_position_in_grid.x;\n"
                    "float m = Limits<float>::finite_min;\n"
                    "bfloat b = bfloat(a[i]);\n"
                    "half h = Limits<half>::max;\n"
                    "int k = Limits<int>::min + int(Limits<uint8_t>::max);\n"
                    "out[i] = max(m, float(b)) + float(h) + k + Limits<bfloat>::finite_max;\n"),
      "");
}

// Metal passes a small input as a pointer (`const constant T*`): a body hands it to helpers
// that take one, offsets it and indexes it with any integer type.
TEST(MetalSurface, ASmallInputIsAPointerToo) {
  std::vector<Array> inputs = {floats(), Array::from_data(std::vector<float>{1, 2, 3}, {3})};
  CustomKernelOptions options;
  options.header =
      "inline float first(constant const float* box) { return box[0]; }\n"
      "inline float second(const device float* v) { return *(v + 1); }\n";
  const CustomKernel kernel("small_pointer", {"a", "box"}, {"out"},
                            "uint i = thread_position_in_grid.x;\n"
                            "int64_t j = 2; long k = 1; size_t m = 0; int n = 2; uint u = 1;\n"
                            "const float* p = box;\n"
                            "out[i] = a[i] * first(box) + second(box) + box[j] + box[k] + box[m]\n"
                            "    + box[n] + box[u] + p[2] + *(box + 2);\n",
                            options);
  const std::vector<OutputSpec> out = {OutputSpec{{256}, Dtype::Float32}};
  ASSERT_TRUE(contains(kernel.generated_source(inputs, out), "kreg::value_array<float, 3> box"));
  EXPECT_EQ(custom_compile_error(kernel, inputs, out), "");
}

// Metal's numeric_limits, qualified or not, for the float and integer types, and only for a
// body that names it.
TEST(MetalSurface, MetalNumericLimits) {
  EXPECT_EQ(
      compile_error("uint i = thread_position_in_grid.x;\n"
                    "float f = metal::numeric_limits<float>::infinity();\n"
                    "half h = -metal::numeric_limits<half>::max();\n"
                    "bfloat b = numeric_limits<bfloat>::lowest();\n"
                    "int k = numeric_limits<int>::min() + int(numeric_limits<uint8_t>::max());\n"
                    "constexpr float e = metal::numeric_limits<float>::epsilon();\n"
                    "static_assert(metal::numeric_limits<uint>::digits == 32, \"digits\");\n"
                    "out[i] = min(f, a[i]) + float(h) + float(b) + k + e;\n"),
      "");
  const auto source = [](const std::string& body, const std::string& header = "") {
    CustomKernelOptions options;
    options.header = header;
    const CustomKernel kernel("limits", {"a"}, {"out"}, body, options);
    return kernel.generated_source({floats()}, {OutputSpec{{256}, Dtype::Float32}});
  };
  EXPECT_TRUE(contains(source("out[0] = metal::numeric_limits<float>::max();"),
                       "custom_numeric_limits.cuh"));
  EXPECT_FALSE(contains(source("float numeric_limits = 1; out[0] = numeric_limits;"),
                        "custom_numeric_limits.cuh"));
  EXPECT_FALSE(contains(source("out[0] = 1; // numeric_limits<float>"), "custom_numeric_limits"));
}

TEST(MetalSurface, AHeadersOwnLimitsAndBfloatWin) {
  EXPECT_EQ(compile_error("out[thread_position_in_grid.x] = Limits<float>::lowest + bfloat(1);",
                          "template <class T> struct Limits { static constexpr T lowest = -1; };\n"
                          "typedef float bfloat;\n"),
            "");
}

}  // namespace
}  // namespace kreg
