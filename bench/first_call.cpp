// The first compile of a fresh process, which pays NVRTC's own start-up. One measurement
// per process; first_call.sh runs it repeatedly and reports medians.
//
//   kreg_first_call raw             raw NVRTC, trivial kernel, -minimal
//   kreg_first_call driver-first    dlopen of the driver, cuInit, then the same compile
//   kreg_first_call kreg            kreg, warm_compiler off
//   kreg_first_call kreg-warm MS    kreg, warm_compiler on, MS of other start-up work first
//   kreg_first_call first-launch    kreg get + launch + synchronize of a built-in (needs a GPU)
//   kreg_first_call disk DIR        prewarm_all of the built-ins from the disk cache in DIR
//   kreg_first_call precompiled     prewarm_all of the built-ins from the precompiled set
//   kreg_first_call precompiled-get [NAME [CONSTANTS]]
//                                   one get of a built-in from the precompiled set (axpy_f32,
//                                   or NAME with CONSTANTS such as 200:b1)
//   kreg_first_call image FILE      writes that built-in's precompiled image to FILE
//   kreg_first_call raw-load FILE   the baseline for precompiled-get: the same image loaded
//                                   by hand (cuLibraryLoadData, the kernel, its attributes)
//   kreg_first_call first-op-write MANIFEST
//   kreg_first_call first-op MANIFEST
//                                   a program whose arrays are another framework's: prewarm
//                                   of MANIFEST before the GPU's context exists, then its
//                                   first ops on its own memory (needs a GPU); -write runs the
//                                   op once and writes MANIFEST
#include "bench_support.hpp"

#include <kreg/dlpack.hpp>
#include <kreg/kreg.hpp>
#include <kreg/ops.hpp>

#include <cuda.h>
#include <dlfcn.h>
#include <dlpack/dlpack.h>
#include <nvrtc.h>
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

const char* kTrivial =
    "extern \"C\" __global__ void add(const float* a, const float* b, float* c, int n) {"
    " int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) c[i] = a[i] + b[i]; }\n";

long minor_faults() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt + usage.ru_majflt;
}

double since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

std::string arch() {
  const char* env = std::getenv("KREG_BENCH_ARCH");
  return env != nullptr ? env : "sm_90";
}

int raw(bool std17) {
  const auto start = Clock::now();
  nvrtcProgram program = nullptr;
  nvrtcCreateProgram(&program, kTrivial, "add.cu", 0, nullptr, nullptr);
  const std::string arch_option = "-arch=" + arch();
  const char* options[] = {arch_option.c_str(), "-minimal", "-std=c++17"};
  if (nvrtcCompileProgram(program, std17 ? 3 : 2, options) != NVRTC_SUCCESS) return 1;
  std::size_t size = 0;
  nvrtcGetCUBINSize(program, &size);
  std::vector<char> cubin(size);
  nvrtcGetCUBIN(program, cubin.data());
  nvrtcDestroyProgram(&program);
  std::printf("%s %.2f\n", std17 ? "raw-std" : "raw", since(start));
  return 0;
}

// What NVRTC's first compile spends on the driver: NVRTC loads libcuda.so.1 and starts it
// itself, so a GPU machine's first compile includes the driver's start. Done first by hand,
// that part is timed on its own.
int driver_first() {
  const auto start = Clock::now();
  void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (driver == nullptr) return 1;
  const double opened = since(start);
  using Init = int (*)(unsigned);
  auto* init = reinterpret_cast<Init>(dlsym(driver, "cuInit"));
  if (init == nullptr) return 1;
  const int initialized = init(0);
  const double started = since(start);
  const auto compile_start = Clock::now();
  nvrtcProgram program = nullptr;
  nvrtcCreateProgram(&program, kTrivial, "add.cu", 0, nullptr, nullptr);
  const std::string arch_option = "-arch=" + arch();
  const char* options[] = {arch_option.c_str(), "-minimal"};
  if (nvrtcCompileProgram(program, 2, options) != NVRTC_SUCCESS) return 1;
  nvrtcDestroyProgram(&program);
  std::printf("driver-first %.2f (dlopen %.2f, cuInit %.2f returning %d, compile %.2f)\n",
              since(start), opened, started - opened, initialized, since(compile_start));
  return 0;
}

int with_kreg(bool warm, int other_work_ms) {
  kreg::RegistryOptions options;
  options.arch = arch();
  options.warm_compiler = warm;
  options.disk_cache = false;
  options.precompiled = false;
  kreg::Registry reg(options);
  reg.register_source("add", kTrivial);
  // Stands for what an application does between creating the registry and its first
  // kernel (loading weights, parsing a config): the warm-up overlaps with it.
  std::this_thread::sleep_for(std::chrono::milliseconds(other_work_ms));
  const auto start = Clock::now();
  reg.compile("add");
  std::printf("%s %.2f\n", warm ? "kreg-warm" : "kreg", since(start));
  return 0;
}

// prewarm_all of the built-ins in a fresh process, the driver started before the clock.
// Prints "<label> <ms> (...)" with the hits of each origin and the compiles.
int time_prewarm_all(const char* label, const kreg::RegistryOptions& options) {
  kreg::Registry reg(options);
  if (reg.arch().empty()) return 1;
  const auto start = Clock::now();
  const kreg::PrewarmReport report = reg.prewarm_all();
  const double ms = since(start);
  const kreg::Stats s = reg.stats();
  std::printf(
      "%s %.2f (%zu kernels, %.3f ms each; %llu disk hits, %llu precompiled hits, %llu "
      "compiles)\n",
      label, ms, report.warmed, ms / static_cast<double>(report.warmed),
      static_cast<unsigned long long>(s.disk_hits),
      static_cast<unsigned long long>(s.precompiled_hits),
      static_cast<unsigned long long>(s.compiles));
  return report.failures.empty() ? 0 : 1;
}

// From a warm disk cache in DIR (filled by an earlier run of this mode).
int from_disk(const char* dir) {
  kreg::RegistryOptions options;
  options.cache_dir = dir;
  options.precompiled = false;
  options.warm_compiler = false;
  return time_prewarm_all("disk", options);
}

// From the embedded precompiled set, with the disk cache off.
int from_precompiled() {
  kreg::RegistryOptions options;
  options.disk_cache = false;
  options.warm_compiler = false;
  return time_prewarm_all("precompiled", options);
}

// One `get` of a built-in from the precompiled set in a fresh process, the driver started
// first: the lookup, the load and the attribute reads. `name` and `constants` (a key text
// such as "200:b1") pick the built-in; by default axpy_f32.
int precompiled_get(const std::string& name, const std::string& constants) {
  kreg::RegistryOptions options;
  options.disk_cache = false;
  options.warm_compiler = false;
  kreg::Registry reg(options);
  if (reg.arch().empty()) return 1;
  const long faults = minor_faults();
  const auto start = Clock::now();
  const kreg::Kernel& k = reg.get(name, kreg::parse_constants(constants));
  const double ms = since(start);
  const long first_faults = minor_faults() - faults;
  const kreg::Stats s = reg.stats();
  // A second binary's get in the same process: the same work, on code already paged in.
  const auto second_start = Clock::now();
  reg.get("elementwise_add_f32");
  const double second = since(second_start);
  std::printf(
      "precompiled-get %.3f (%s; lookup %.3f ms, library load %.3f ms, %ld page faults; another "
      "binary's get then %.3f ms)\n",
      ms, kreg::to_string(k.binary().origin()), s.precompiled_ms, s.load_ms, first_faults, second);
  return k.binary().origin() == kreg::Origin::Precompiled ? 0 : 1;
}

// The precompiled image precompiled_get loads, for raw_load to load by hand, and the
// symbol of its kernel in PATH.symbol.
int write_image(const char* path) {
  kreg::RegistryOptions options;
  options.disk_cache = false;
  options.warm_compiler = false;
  kreg::Registry reg(options);
  if (reg.arch().empty()) return 1;
  const kreg::Binary& binary = reg.compile("axpy_f32");
  if (binary.origin() != kreg::Origin::Precompiled) return 1;
  std::ofstream out(path, std::ios::binary);
  out.write(binary.image().data(), static_cast<std::streamsize>(binary.image().size()));
  std::ofstream symbol(std::string(path) + ".symbol");
  symbol << binary.symbol("axpy_f32");
  return out && symbol ? 0 : 1;
}

// What precompiled_get does, by hand and with nothing else: with the primary context made
// and the image in memory before the clock, load it (context-independently, with no context
// current, as kreg does), find the kernel and read its five attributes. (kreg reads the
// parameter sizes later, at the first checked launch.)
int raw_load(const char* path) {
  std::ifstream in(path, std::ios::binary);
  const std::string image((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::string symbol;
  std::ifstream(std::string(path) + ".symbol") >> symbol;
  CUdevice device = 0;
  CUcontext context = nullptr;
  if (image.empty() || symbol.empty() || cuInit(0) != CUDA_SUCCESS ||
      cuDeviceGet(&device, 0) != CUDA_SUCCESS ||
      cuDevicePrimaryCtxRetain(&context, device) != CUDA_SUCCESS) {
    return 1;
  }
  const auto start = Clock::now();
  CUlibrary library = nullptr;
  CUkernel kernel = nullptr;
  if (cuLibraryLoadData(&library, image.data(), nullptr, nullptr, 0, nullptr, nullptr, 0) !=
          CUDA_SUCCESS ||
      cuLibraryGetKernel(&kernel, library, symbol.c_str()) != CUDA_SUCCESS) {
    std::fprintf(stderr, "raw-load: cannot load %s from %s\n", symbol.c_str(), path);
    return 1;
  }
  int sum = 0;
  for (CUfunction_attribute a :
       {CU_FUNC_ATTRIBUTE_NUM_REGS, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES,
        CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES,
        CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK}) {
    int value = 0;
    if (cuKernelGetAttribute(&value, a, kernel, device) != CUDA_SUCCESS) return 1;
    sum += value;
  }
  const double ms = since(start);
  std::printf("raw-load %.3f (attributes %d)\n", ms, sum);
  return 0;
}

int first_launch() {
  const auto start = Clock::now();
  kreg::Registry reg(
      kreg::RegistryOptions{.disk_cache = false, .precompiled = false, .warm_compiler = false});
  const kreg::Kernel& k = reg.get("elementwise_add_f32");
  k.launch(kreg::Dim3{1}, kreg::Dim3{32}, 0, nullptr, static_cast<const float*>(nullptr),
           static_cast<const float*>(nullptr), static_cast<float*>(nullptr), 0u);
  std::printf("first-launch %.2f (compile %.2f, load %.2f)\n", since(start), reg.stats().compile_ms,
              reg.stats().load_ms);
  return 0;
}

// Memory of another framework, handed to kreg as DLPack does (kreg takes the wrapper's
// ownership; the memory stays the caller's).
kreg::Array foreign(CUdeviceptr address, std::int64_t* shape, int ndim, DLDataType dtype) {
  auto* tensor = new DLManagedTensor{};
  tensor->dl_tensor.data = reinterpret_cast<void*>(address);  // NOLINT(performance-no-int-to-ptr)
  tensor->dl_tensor.device = {kDLCUDA, 0};
  tensor->dl_tensor.ndim = ndim;
  tensor->dl_tensor.dtype = dtype;
  tensor->dl_tensor.shape = shape;
  tensor->deleter = [](DLManagedTensor* self) { delete self; };
  return kreg::from_dlpack(tensor, kreg::DlpackRelease::Immediately);
}

// As examples/llm/model.py runs: the manifest prewarmed before torch has touched the GPU,
// then the model's memory made, then its first op (an embedding of 512 tokens).
int first_op(const std::string& manifest, bool write) {
  kreg::Registry& reg = kreg::device_registry(0);
  std::size_t prewarmed = 0;
  double prewarm_ms = 0;
  if (!write) {
    const auto start = Clock::now();
    prewarmed = reg.prewarm_manifest(manifest);
    prewarm_ms = since(start);
  }
  kreg::bench::start_driver();
  static std::int64_t table_shape[2] = {32000, 2048};
  static std::int64_t ids_shape[1] = {512};
  const auto table_elements = static_cast<std::size_t>(table_shape[0] * table_shape[1]);
  const auto id_count = static_cast<std::size_t>(ids_shape[0]);
  CUdeviceptr table = 0;
  CUdeviceptr ids = 0;
  kreg::bench::require(cuMemAlloc(&table, table_elements * 2), "cuMemAlloc");
  kreg::bench::require(cuMemsetD16(table, 0x3f80, table_elements), "cuMemsetD16");  // bf16 1.0
  kreg::bench::require(cuMemAlloc(&ids, id_count * 4), "cuMemAlloc");
  kreg::bench::require(cuMemsetD32(ids, 7, id_count), "cuMemsetD32");
  kreg::bench::require(cuCtxSynchronize(), "cuCtxSynchronize");
  auto run = [&] {
    const auto start = Clock::now();
    kreg::Array out = kreg::ops::embedding(foreign(table, table_shape, 2, {kDLBfloat, 16, 1}),
                                           foreign(ids, ids_shape, 1, {kDLInt, 32, 1}));
    out.eval();
    kreg::bench::require(cuCtxSynchronize(), "cuCtxSynchronize");
    return since(start);
  };
  if (write) {
    run();
    reg.write_manifest(manifest);
    std::printf("first-op-write %s\n", manifest.c_str());
  } else {
    const double first = run();
    const double second = run();
    const double third = run();
    std::printf("first-op %.3f (then %.3f, %.3f; prewarm of %zu kernels %.1f)\n", first, second,
                third, prewarmed, prewarm_ms);
  }
  kreg::bench::require(cuMemFree(ids), "cuMemFree");
  kreg::bench::require(cuMemFree(table), "cuMemFree");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "raw";
  try {
    if (mode == "raw") return raw(false);
    if (mode == "raw-std") return raw(true);
    if (mode == "driver-first") return driver_first();
    if (mode == "kreg") return with_kreg(false, argc > 2 ? std::atoi(argv[2]) : 0);
    if (mode == "kreg-warm") return with_kreg(true, argc > 2 ? std::atoi(argv[2]) : 0);
    if (mode == "first-launch") return first_launch();
    if (mode == "disk" && argc > 2) return from_disk(argv[2]);
    if (mode == "precompiled") return from_precompiled();
    if (mode == "precompiled-get") {
      return precompiled_get(argc > 2 ? argv[2] : "axpy_f32", argc > 3 ? argv[3] : "");
    }
    if (mode == "image" && argc > 2) return write_image(argv[2]);
    if (mode == "raw-load" && argc > 2) return raw_load(argv[2]);
    if (mode == "first-op" && argc > 2) return first_op(argv[2], false);
    if (mode == "first-op-write" && argc > 2) return first_op(argv[2], true);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  std::fprintf(stderr, "unknown mode '%s'\n", mode.c_str());
  return 2;
}
