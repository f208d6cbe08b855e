// A fresh process's way to its first result on the GPU, from the moment it was spawned:
// kreg against the best a program can do by hand with the driver API and NVRTC, for a user
// kernel (compiled at run time) and for a kernel compiled ahead of time (kreg's precompiled
// set; a cubin file by hand). Each measurement is one fresh process; the modes alternate
// within every round so that a slow lease or a warming page cache hits them all alike.
//
//   kreg_cold_start [--runs N] [--arch sm_XY]     the table (medians of N rounds, default 9)
//
// The parts of the sequence are timed in their own modes too: the driver's start (cuInit,
// then the primary context), NVRTC's first compile with and without the driver started first,
// and with no GPU visible (CUDA_VISIBLE_DEVICES empty). Needs a GPU. docs/performance.md,
// "Cold start on a GPU machine", has the figures and what they show.
#include <kreg/kreg.hpp>

#include <cuda.h>
#include <nvrtc.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

// The user's kernel: out[i] = v * i, so that the result is checked without an input.
const char* kUserKernel =
    "extern \"C\" __global__ void fill(float* out, float v, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) out[i] = v * static_cast<float>(i);\n"
    "}\n";
constexpr int kElements = 1024;

// Nanoseconds on the machine-wide monotonic clock, which parent and child share.
long long now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
      .count();
}

void check(CUresult r, const char* what) {
  if (r != CUDA_SUCCESS) {
    const char* text = nullptr;
    cuGetErrorString(r, &text);
    throw std::runtime_error(std::string(what) + ": " + (text != nullptr ? text : "?"));
  }
}

void check(nvrtcResult r, const char* what) {
  if (r != NVRTC_SUCCESS)
    throw std::runtime_error(std::string(what) + ": " + nvrtcGetErrorString(r));
}

// One child's marks, printed as "name=ms_since_spawn ..." on one line.
class Marks {
 public:
  explicit Marks(long long spawned_ns) : spawned_(spawned_ns) {}
  void mark(const std::string& name) { marks_.emplace_back(name, now_ns()); }
  void print() const {
    for (const auto& [name, ns] : marks_)
      std::printf("%s=%.3f ", name.c_str(), static_cast<double>(ns - spawned_) / 1e6);
    std::printf("\n");
  }

 private:
  long long spawned_;
  std::vector<std::pair<std::string, long long>> marks_;
};

std::vector<char> nvrtc_compile(const std::string& arch) {
  nvrtcProgram program = nullptr;
  check(nvrtcCreateProgram(&program, kUserKernel, "fill.cu", 0, nullptr, nullptr),
        "nvrtcCreateProgram");
  const std::string arch_option = "-arch=" + arch;
  const char* options[] = {arch_option.c_str(), "-minimal"};
  const nvrtcResult compiled = nvrtcCompileProgram(program, 2, options);
  if (compiled != NVRTC_SUCCESS) {
    nvrtcDestroyProgram(&program);
    check(compiled, "nvrtcCompileProgram");
  }
  std::size_t size = 0;
  check(nvrtcGetCUBINSize(program, &size), "nvrtcGetCUBINSize");
  std::vector<char> cubin(size);
  check(nvrtcGetCUBIN(program, cubin.data()), "nvrtcGetCUBIN");
  nvrtcDestroyProgram(&program);
  return cubin;
}

std::string device_arch(CUdevice device) {
  int major = 0;
  int minor = 0;
  check(cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device),
        "cuDeviceGetAttribute");
  check(cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device),
        "cuDeviceGetAttribute");
  return "sm_" + std::to_string(major * 10 + minor);
}

CUcontext start_driver(Marks* marks) {
  check(cuInit(0), "cuInit");
  if (marks != nullptr) marks->mark("driver");
  CUdevice device = 0;
  check(cuDeviceGet(&device, 0), "cuDeviceGet");
  CUcontext context = nullptr;
  check(cuDevicePrimaryCtxRetain(&context, device), "cuDevicePrimaryCtxRetain");
  check(cuCtxSetCurrent(context), "cuCtxSetCurrent");
  if (marks != nullptr) marks->mark("context");
  return context;
}

// The primary context current on this thread, as the runtime API's first call makes it.
void use_primary_context() {
  CUdevice device = 0;
  check(cuDeviceGet(&device, 0), "cuDeviceGet");
  CUcontext context = nullptr;
  check(cuDevicePrimaryCtxRetain(&context, device), "cuDevicePrimaryCtxRetain");
  check(cuCtxSetCurrent(context), "cuCtxSetCurrent");
}

// Launches `function` (fill) on a fresh buffer and checks what comes back: the result.
void run_and_check(CUfunction function) {
  CUdeviceptr out = 0;
  check(cuMemAlloc(&out, kElements * sizeof(float)), "cuMemAlloc");
  float v = 0.5F;
  int n = kElements;
  void* args[] = {&out, &v, &n};
  check(cuLaunchKernel(function, kElements / 256, 1, 1, 256, 1, 1, 0, nullptr, args, nullptr),
        "cuLaunchKernel");
  std::vector<float> host(kElements, -1.0F);
  check(cuMemcpyDtoH(host.data(), out, kElements * sizeof(float)), "cuMemcpyDtoH");
  cuMemFree(out);
  for (int i = 0; i < kElements; ++i) {
    if (host[i] != v * static_cast<float>(i)) throw std::runtime_error("wrong result");
  }
}

CUfunction load(const std::vector<char>& cubin, CUmodule* module) {
  check(cuModuleLoadData(module, cubin.data()), "cuModuleLoadData");
  CUfunction function = nullptr;
  check(cuModuleGetFunction(&function, *module, "fill"), "cuModuleGetFunction");
  return function;
}

// By hand, one step after another: the driver, then NVRTC for the device's arch.
void hand_serial(Marks& marks) {
  start_driver(&marks);
  CUdevice device = 0;
  check(cuDeviceGet(&device, 0), "cuDeviceGet");
  const std::vector<char> cubin = nvrtc_compile(device_arch(device));
  marks.mark("compiled");
  CUmodule module = nullptr;
  run_and_check(load(cubin, &module));
  marks.mark("result");
}

// By hand at its best: the arch known ahead, NVRTC on a thread of its own while the driver
// and the context start.
void hand_overlap(Marks& marks, const std::string& arch) {
  std::vector<char> cubin;
  std::thread compiler([&] { cubin = nvrtc_compile(arch); });
  start_driver(&marks);
  compiler.join();
  marks.mark("compiled");
  CUmodule module = nullptr;
  run_and_check(load(cubin, &module));
  marks.mark("result");
}

// By hand, a kernel compiled ahead of time: read the cubin, start the driver, load, run.
void hand_ahead(Marks& marks, const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  const std::vector<char> cubin((std::istreambuf_iterator<char>(in)), {});
  if (cubin.empty()) throw std::runtime_error("cannot read " + file);
  start_driver(&marks);
  CUmodule module = nullptr;
  run_and_check(load(cubin, &module));
  marks.mark("result");
}

template <class T>
T* as_pointer(CUdeviceptr p) {
  return reinterpret_cast<T*>(p);  // NOLINT(performance-no-int-to-ptr): a device address
}

// kreg as a user writes it: a registry, a source, a get, a launch; fresh cache folder.
void kreg_user(Marks& marks, const std::string& cache, const std::string& arch) {
  kreg::RegistryOptions options;
  options.cache_dir = cache;
  options.arch = arch;  // empty: the GPU's
  kreg::Registry reg(options);
  reg.register_source("fill", kUserKernel);
  marks.mark("registry");
  const kreg::Kernel& kernel = reg.get("fill");
  marks.mark("got");
  use_primary_context();
  CUdeviceptr out = 0;
  check(cuMemAlloc(&out, kElements * sizeof(float)), "cuMemAlloc");
  kernel.launch(kreg::Dim3{kElements / 256}, kreg::Dim3{256}, 0, nullptr, as_pointer<float>(out),
                0.5F, kElements);
  std::vector<float> host(kElements, -1.0F);
  check(cuMemcpyDtoH(host.data(), out, kElements * sizeof(float)), "cuMemcpyDtoH");
  cuMemFree(out);
  for (int i = 0; i < kElements; ++i) {
    if (host[i] != 0.5F * static_cast<float>(i)) throw std::runtime_error("wrong result");
  }
  marks.mark("result");
}

// kreg, a built-in from the precompiled set: out = in + in.
void kreg_builtin(Marks& marks, const std::string& cache) {
  kreg::RegistryOptions options;
  options.cache_dir = cache;
  kreg::Registry reg(options);
  marks.mark("registry");
  const kreg::Kernel& kernel = reg.get("elementwise_add_f32");
  marks.mark("got");
  if (kernel.binary().origin() != kreg::Origin::Precompiled)
    throw std::runtime_error("elementwise_add_f32 did not come from the precompiled set");
  use_primary_context();
  CUdeviceptr in = 0;
  CUdeviceptr out = 0;
  check(cuMemAlloc(&in, kElements * sizeof(float)), "cuMemAlloc");
  check(cuMemAlloc(&out, kElements * sizeof(float)), "cuMemAlloc");
  check(cuMemsetD32(in, 0x3f800000U, kElements), "cuMemsetD32");  // 1.0f
  kernel.launch(kreg::Dim3{kElements / 256}, kreg::Dim3{256}, 0, nullptr,
                as_pointer<const float>(in), as_pointer<const float>(in), as_pointer<float>(out),
                static_cast<unsigned>(kElements));
  std::vector<float> host(kElements, -1.0F);
  check(cuMemcpyDtoH(host.data(), out, kElements * sizeof(float)), "cuMemcpyDtoH");
  cuMemFree(in);
  cuMemFree(out);
  for (float x : host) {
    if (x != 2.0F) throw std::runtime_error("wrong result");
  }
  marks.mark("result");
}

int child(const std::string& mode, long long spawned, const std::string& arg,
          const std::string& arch) {
  Marks marks(spawned);
  marks.mark("main");
  try {
    if (mode == "hand-serial") {
      hand_serial(marks);
    } else if (mode == "hand-overlap") {
      hand_overlap(marks, arch);
    } else if (mode == "hand-ahead") {
      hand_ahead(marks, arg);
    } else if (mode == "kreg-user") {
      kreg_user(marks, arg, "");
    } else if (mode == "kreg-user-arch") {
      kreg_user(marks, arg, arch);
    } else if (mode == "kreg-builtin") {
      kreg_builtin(marks, arg);
    } else if (mode == "driver") {
      start_driver(&marks);
    } else if (mode == "nvrtc" || mode == "nvrtc-no-gpu") {
      nvrtc_compile(arch);
      marks.mark("compiled");
    } else if (mode == "nvrtc-after-driver") {
      check(cuInit(0), "cuInit");
      marks.mark("driver");
      nvrtc_compile(arch);
      marks.mark("compiled");
    } else if (mode == "write-cubin") {
      const std::vector<char> cubin = nvrtc_compile(arch);
      std::ofstream(arg, std::ios::binary).write(cubin.data(), static_cast<long>(cubin.size()));
    } else {
      std::fprintf(stderr, "unknown mode %s\n", mode.c_str());
      return 2;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", mode.c_str(), e.what());
    return 1;
  }
  marks.print();
  return 0;
}

// Runs one child and parses its marks.
std::map<std::string, double> spawn(const std::string& self, const std::string& mode,
                                    const std::string& arg, const std::string& arch,
                                    bool hide_gpu) {
  int pipe_fds[2];
  if (::pipe(pipe_fds) != 0) throw std::runtime_error("pipe");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], 1);
  posix_spawn_file_actions_addclose(&actions, pipe_fds[0]);
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    if (hide_gpu && std::string_view(*e).starts_with("CUDA_VISIBLE_DEVICES=")) continue;
    env.emplace_back(*e);
  }
  if (hide_gpu) env.emplace_back("CUDA_VISIBLE_DEVICES=");
  std::vector<char*> envp;
  envp.reserve(env.size() + 1);
  for (std::string& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  const std::string spawned = std::to_string(now_ns());
  std::vector<std::string> args = {self, "--child", mode, spawned, arg.empty() ? "-" : arg, arch};
  std::vector<char*> argv;
  argv.reserve(args.size() + 1);
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int spawned_ok =
      ::posix_spawn(&pid, self.c_str(), &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  ::close(pipe_fds[1]);
  std::string text;
  std::array<char, 4096> buffer{};
  ssize_t got = 0;
  while ((got = ::read(pipe_fds[0], buffer.data(), buffer.size())) > 0)
    text.append(buffer.data(), static_cast<std::size_t>(got));
  ::close(pipe_fds[0]);
  int status = 0;
  if (spawned_ok == 0) ::waitpid(pid, &status, 0);
  if (spawned_ok != 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw std::runtime_error("mode " + mode + " failed");
  std::map<std::string, double> marks;
  std::istringstream in(text);
  std::string item;
  while (in >> item) {
    const auto eq = item.find('=');
    if (eq != std::string::npos) marks[item.substr(0, eq)] = std::stod(item.substr(eq + 1));
  }
  return marks;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 6 && std::string(argv[1]) == "--child") {
    const std::string arg = argv[4];
    return child(argv[2], std::atoll(argv[3]), arg == "-" ? "" : arg, argv[5]);
  }
  int runs = 9;
  std::string arch;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--runs") {
      runs = std::atoi(argv[i + 1]);
    } else if (flag == "--arch") {
      arch = argv[i + 1];
    } else {
      std::fprintf(stderr, "usage: kreg_cold_start [--runs N] [--arch sm_XY]\n");
      return 2;
    }
  }
  try {
    if (arch.empty()) {
      check(cuInit(0), "cuInit");
      CUdevice device = 0;
      check(cuDeviceGet(&device, 0), "cuDeviceGet");
      arch = device_arch(device);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "needs a GPU: %s\n", e.what());
    return 1;
  }
  const std::string self = fs::canonical("/proc/self/exe").string();
  const fs::path root =
      fs::temp_directory_path() / ("kreg_cold_start_" + std::to_string(::getpid()));
  fs::create_directories(root);
  const std::string cubin = (root / "fill.cubin").string();
  spawn(self, "write-cubin", cubin, arch, false);

  struct Mode {
    std::string name;
    std::string label;
    bool cache;  // a fresh cache folder each run
    bool hide_gpu;
  };
  const std::vector<Mode> modes = {
      {"driver", "cuInit, then the primary context", false, false},
      {"nvrtc", "NVRTC's first compile, nothing else", false, false},
      {"nvrtc-no-gpu", "NVRTC's first compile, no GPU visible", false, true},
      {"nvrtc-after-driver", "cuInit, then NVRTC's first compile", false, false},
      {"hand-serial", "by hand: driver, context, compile, load, run", false, false},
      {"hand-overlap", "by hand: compile on a thread beside the driver", false, false},
      {"kreg-user", "kreg: registry, source, get, launch", true, false},
      {"kreg-user-arch", "kreg, RegistryOptions::arch given", true, false},
      {"hand-ahead", "by hand: a cubin file, driver, load, run", false, false},
      {"kreg-builtin", "kreg: a built-in from the precompiled set", true, false},
  };
  std::map<std::string, std::map<std::string, std::vector<double>>> seen;
  for (int r = 0; r < runs; ++r) {
    for (const Mode& m : modes) {
      const fs::path cache = root / ("cache_" + std::to_string(r) + "_" + m.name);
      const auto marks = spawn(self, m.name, m.cache ? cache.string() : cubin, arch, m.hide_gpu);
      for (const auto& [name, ms] : marks) seen[m.name][name].push_back(ms);
      fs::remove_all(cache);
    }
  }
  std::printf("cold start on %s, medians of %d fresh processes, ms since spawn\n", arch.c_str(),
              runs);
  std::printf("%-52s %8s %8s %8s %8s %8s %8s\n", "mode", "main", "driver", "context", "compiled",
              "got", "result");
  for (const Mode& m : modes) {
    std::printf("%-52s", m.label.c_str());
    for (const char* mark : {"main", "driver", "context", "compiled", "got", "result"}) {
      const auto it = seen[m.name].find(mark);
      if (it == seen[m.name].end()) {
        std::printf(" %8s", "-");
      } else {
        std::printf(" %8.1f", median(it->second));
      }
    }
    std::printf("\n");
  }
  fs::remove_all(root);
  return 0;
}
