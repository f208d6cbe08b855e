#include "cuda/driver_api.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <mutex>

namespace kreg::cuda {
namespace {

struct Loaded {
  DriverApi api;
  bool ok = false;
  std::string why;
};

using GetProcAddress = CUresult (*)(const char*, void**, int, cuuint64_t,
                                    CUdriverProcAddressQueryResult*);

std::string describe_with(const DriverApi& api, CUresult result) {
  const char* name = nullptr;
  const char* text = nullptr;
  if (api.cuGetErrorName != nullptr) api.cuGetErrorName(result, &name);
  if (api.cuGetErrorString != nullptr) api.cuGetErrorString(result, &text);
  std::string out =
      name != nullptr ? name : "CUDA error " + std::to_string(static_cast<int>(result));
  if (text != nullptr) {
    out += " (";
    out += text;
    out += ")";
  }
  return out;
}

template <class Fn>
bool resolve(GetProcAddress get, int version, const char* name, Fn& out, bool required,
             std::string& why) {
  void* pointer = nullptr;
  CUdriverProcAddressQueryResult status{};
  CUresult result = get(name, &pointer, version, CU_GET_PROC_ADDRESS_DEFAULT, &status);
  if (result != CUDA_SUCCESS || pointer == nullptr) {
    if (required) why = std::string("the driver has no ") + name;
    return !required;
  }
  out = reinterpret_cast<Fn>(pointer);
  return true;
}

Loaded load() {
  Loaded loaded;
  // Never linked: machines that build or only compile kernels have no driver at all.
  void* handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    // Runs once, inside the static initializer of loaded(), so no other thread calls it.
    const char* error = dlerror();  // NOLINT(concurrency-mt-unsafe)
    loaded.why = std::string("cannot load the CUDA driver (libcuda.so.1): ") +
                 (error != nullptr ? error : "unknown error");
    return loaded;
  }
  auto get = reinterpret_cast<GetProcAddress>(dlsym(handle, "cuGetProcAddress_v2"));
  auto get_version =
      reinterpret_cast<decltype(&::cuDriverGetVersion)>(dlsym(handle, "cuDriverGetVersion"));
  if (get == nullptr || get_version == nullptr) {
    loaded.why = "the CUDA driver is too old (kreg needs 12.4 or newer)";
    return loaded;
  }
  int version = 0;
  if (get_version(&version) != CUDA_SUCCESS || version < 12040) {
    loaded.why = "the CUDA driver is too old (kreg needs 12.4 or newer, found " +
                 std::to_string(version) + ")";
    return loaded;
  }
  // Ask for the entry points as of the older of the driver and the headers we built with,
  // so each pointer matches the signature decltype() gave it.
  const int want = std::min(version, CUDA_VERSION);
  DriverApi& a = loaded.api;
  a.version = version;
  bool ok = true;
#define KREG_RESOLVE(name) ok = ok && resolve(get, want, #name, a.name, true, loaded.why)
  KREG_RESOLVE(cuInit);
  KREG_RESOLVE(cuDriverGetVersion);
  KREG_RESOLVE(cuGetErrorName);
  KREG_RESOLVE(cuGetErrorString);
  KREG_RESOLVE(cuDeviceGetCount);
  KREG_RESOLVE(cuDeviceGet);
  KREG_RESOLVE(cuDeviceGetName);
  KREG_RESOLVE(cuDeviceGetAttribute);
  KREG_RESOLVE(cuDevicePrimaryCtxRetain);
  KREG_RESOLVE(cuDevicePrimaryCtxGetState);
  KREG_RESOLVE(cuDevicePrimaryCtxRelease);
  KREG_RESOLVE(cuCtxGetCurrent);
  KREG_RESOLVE(cuCtxSetCurrent);
  KREG_RESOLVE(cuLibraryLoadData);
  KREG_RESOLVE(cuLibraryUnload);
  KREG_RESOLVE(cuLibraryGetKernel);
  KREG_RESOLVE(cuKernelGetAttribute);
  KREG_RESOLVE(cuLaunchKernel);
  KREG_RESOLVE(cuCtxPushCurrent);
  KREG_RESOLVE(cuCtxPopCurrent);
  KREG_RESOLVE(cuCtxSynchronize);
  KREG_RESOLVE(cuStreamCreate);
  KREG_RESOLVE(cuStreamDestroy);
  KREG_RESOLVE(cuStreamSynchronize);
  KREG_RESOLVE(cuStreamIsCapturing);
  KREG_RESOLVE(cuThreadExchangeStreamCaptureMode);
  KREG_RESOLVE(cuStreamWaitEvent);
  KREG_RESOLVE(cuEventCreate);
  KREG_RESOLVE(cuEventDestroy);
  KREG_RESOLVE(cuEventRecord);
  KREG_RESOLVE(cuEventSynchronize);
  KREG_RESOLVE(cuEventElapsedTime);
  KREG_RESOLVE(cuMemPoolCreate);
  KREG_RESOLVE(cuMemPoolDestroy);
  KREG_RESOLVE(cuMemPoolSetAttribute);
  KREG_RESOLVE(cuMemAllocFromPoolAsync);
  KREG_RESOLVE(cuMemFreeAsync);
  KREG_RESOLVE(cuMemcpyHtoDAsync);
  KREG_RESOLVE(cuMemcpyDtoHAsync);
  KREG_RESOLVE(cuMemsetD8Async);
  KREG_RESOLVE(cuMemsetD16Async);
  KREG_RESOLVE(cuMemsetD32Async);
  KREG_RESOLVE(cuMemsetD2D32Async);
  KREG_RESOLVE(cuPointerGetAttribute);
  KREG_RESOLVE(cuKernelSetAttribute);
  KREG_RESOLVE(cuKernelGetFunction);
  KREG_RESOLVE(cuTensorMapEncodeTiled);
#undef KREG_RESOLVE
  if (!ok) return loaded;
  resolve(get, want, "cuKernelGetParamInfo", a.cuKernelGetParamInfo, false, loaded.why);
  resolve(get, want, "cuFuncLoad", a.cuFuncLoad, false, loaded.why);
  resolve(get, want, "cuLaunchKernelEx", a.cuLaunchKernelEx, false, loaded.why);

  CUresult init = a.cuInit(0);
  if (init != CUDA_SUCCESS) {
    loaded.why = "cuInit failed: " + describe_with(a, init);
    return loaded;
  }
  loaded.ok = true;
  return loaded;
}

const Loaded& loaded() noexcept {
  // Loaded once; the table is immutable afterwards, so readers need no lock. Never
  // destroyed: kernels and devices held by static objects release their driver handles
  // during static destruction, in an order nothing here controls.
  static const Loaded* const instance = []() -> const Loaded* {
    try {
      return new Loaded(load());
    } catch (...) {
      static const Loaded failed{{}, false, "loading the CUDA driver failed"};
      return &failed;
    }
  }();
  return *instance;
}

}  // namespace

const DriverApi* driver_api(std::string* why) noexcept {
  const Loaded& l = loaded();
  if (!l.ok) {
    if (why != nullptr) *why = l.why;
    return nullptr;
  }
  return &l.api;
}

const DriverApi& driver() {
  std::string why;
  const DriverApi* api = driver_api(&why);
  if (api == nullptr) throw Error(ErrorCode::NoDevice, "no GPU available: " + why);
  return *api;
}

std::string describe(CUresult result) {
  return describe_with(loaded().api, result);
}

void check(CUresult result, ErrorCode code, std::string_view what) {
  if (result == CUDA_SUCCESS) return;
  throw Error(code, std::string(what) + ": " + describe(result));
}

}  // namespace kreg::cuda
