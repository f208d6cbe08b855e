#include <kreg/kernel.hpp>

#include "cuda/context.hpp"
#include "cuda/kernel_factory.hpp"
#include "cuda/launch_context.hpp"
#include "cuda/launch_journal.hpp"
#include "cuda/launch_limits.hpp"
#include "cuda/library.hpp"
#include "cuda/selection.hpp"

#include <nvtx3/nvToolsExt.h>

#include <limits>
#include <string>

namespace kreg {
namespace {

std::string dims(Dim3 d) {
  return "(" + std::to_string(d.x) + ", " + std::to_string(d.y) + ", " + std::to_string(d.z) + ")";
}

[[noreturn]] void invalid(const std::string& label, const std::string& what) {
  throw Error(ErrorCode::InvalidArgument, "cannot launch '" + label + "': " + what);
}

}  // namespace

Kernel::Kernel(std::string name, std::string label, std::shared_ptr<const Binary> binary,
               std::shared_ptr<const void> library, void* handle, KernelAttributes attributes,
               std::shared_ptr<const cuda::LaunchContext> context)
    : name_(std::move(name)),
      label_(std::move(label)),
      binary_(std::move(binary)),
      library_(std::move(library)),
      handle_(handle),
      attributes_(attributes),
      context_(std::move(context)) {}

Kernel::~Kernel() = default;

const Kernel::Parameters& Kernel::parameters() const noexcept {
  try {
    std::call_once(parameters_once_, [this] {
      const cuda::DriverApi& api = *context_->api;
      if (api.cuKernelGetParamInfo == nullptr) return;
      try {
        // The driver answers only with a context current, and a thread that launched
        // nothing yet has none.
        const cuda::ContextScope on(context_->device->info().ordinal);
        std::vector<std::size_t> sizes;
        // The driver answers CUDA_ERROR_INVALID_VALUE once the index passes the last one.
        for (std::size_t i = 0;; ++i) {
          std::size_t offset = 0;
          std::size_t size = 0;
          const CUresult result =
              api.cuKernelGetParamInfo(static_cast<CUkernel>(handle_), i, &offset, &size);
          if (result == CUDA_ERROR_INVALID_VALUE) break;
          if (result != CUDA_SUCCESS) return;
          sizes.push_back(size);
        }
        parameters_.sizes = std::move(sizes);
        parameters_.known = true;
      } catch (const Error&) {
        // No context to ask in: launches go unchecked, as without the query.
      }
    });
  } catch (...) {
    // call_once itself failed (it may, in theory): unknown, and asked again next time.
  }
  return parameters_;
}

void Kernel::launch_checked(Dim3 grid, Dim3 block, std::size_t shared_bytes, StreamRef stream,
                            void** args, const std::size_t* sizes, std::size_t count) const {
  check_arguments(sizes, count);
  launch_native(grid, block, shared_bytes, stream, args, false);
}

void Kernel::check_arguments(const std::size_t* sizes, std::size_t count) const {
  if (const Parameters& p = parameters(); p.known) {
    if (count != p.sizes.size()) {
      invalid(label_, "the kernel takes " + std::to_string(p.sizes.size()) + " parameters but " +
                          std::to_string(count) + " arguments were given");
    }
    for (std::size_t i = 0; i < count; ++i) {
      if (sizes[i] != p.sizes[i]) {
        invalid(label_, "parameter " + std::to_string(i) + " is " + std::to_string(p.sizes[i]) +
                            " bytes but the argument is " + std::to_string(sizes[i]) + " bytes");
      }
    }
  }
}

void Kernel::launch_raw(Dim3 grid, Dim3 block, std::size_t shared_bytes, StreamRef stream,
                        void** args) const {
  launch_native(grid, block, shared_bytes, stream, args, false);
}

void Kernel::launch_native(Dim3 grid, Dim3 block, std::size_t shared_bytes, StreamRef stream,
                           void** args, bool dependent) const {
  const std::uint64_t threads = std::uint64_t{block.x} * block.y * block.z;
  if (threads == 0 || grid.x == 0 || grid.y == 0 || grid.z == 0) {
    invalid(label_, "empty grid " + dims(grid) + " or block " + dims(block));
  }
  if (threads > static_cast<std::uint64_t>(attributes_.max_threads_per_block)) {
    invalid(label_, "block " + dims(block) + " has " + std::to_string(threads) +
                        " threads; this kernel allows at most " +
                        std::to_string(attributes_.max_threads_per_block));
  }
  if (shared_bytes > std::numeric_limits<unsigned>::max()) {
    invalid(label_, std::to_string(shared_bytes) + " bytes of shared memory do not fit a launch");
  }
  const cuda::LaunchContext& context = *context_;
  const cuda::DriverApi& api = *context.api;
  auto launch = [&] {
    if (dependent) {
      CUlaunchAttribute overlap{};
      overlap.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
      overlap.value.programmaticStreamSerializationAllowed = 1;
      CUlaunchConfig config{};
      config.gridDimX = grid.x;
      config.gridDimY = grid.y;
      config.gridDimZ = grid.z;
      config.blockDimX = block.x;
      config.blockDimY = block.y;
      config.blockDimZ = block.z;
      config.sharedMemBytes = static_cast<unsigned>(shared_bytes);
      config.hStream = static_cast<CUstream>(stream.native);
      config.attrs = &overlap;
      config.numAttrs = 1;
      return api.cuLaunchKernelEx(&config, reinterpret_cast<CUfunction>(handle_), args, nullptr);
    }
    return api.cuLaunchKernel(reinterpret_cast<CUfunction>(handle_), grid.x, grid.y, grid.z,
                              block.x, block.y, block.z, static_cast<unsigned>(shared_bytes),
                              static_cast<CUstream>(stream.native), args, nullptr);
  };
  struct NvtxRange {
    bool on;
    ~NvtxRange() {
      if (on) nvtxRangePop();
    }
  };
  const int scoped = cuda::selection().scoped_gpu();
  // Past 48 KiB of shared memory a kernel must opt in, once per GPU: the scope's GPU, else
  // the registry's (a launch into another GPU's current context is refused by the driver).
  cuda::allow_dynamic_shared_memory(*this, shared_bytes,
                                    scoped >= 0 ? scoped : context.device->info().ordinal);
  if (context.nvtx) nvtxRangePushA(label_.c_str());
  const NvtxRange range{context.nvtx};  // popped however the launch ends
  CUresult result = CUDA_SUCCESS;
  if (scoped >= 0) {
    // A DeviceScope or StreamScope chose the GPU: launch in its primary context.
    const cuda::ContextScope on(scoped);
    result = launch();
  } else {
    result = launch();
  }
  if (result == CUDA_ERROR_INVALID_CONTEXT) {
    // This thread has no current context. Checking before every launch would cost a
    // driver call on the hot path; recovering here costs it once per thread.
    CUcontext current = nullptr;
    if (api.cuCtxGetCurrent(&current) == CUDA_SUCCESS && current == nullptr) {
      cuda::check(api.cuCtxSetCurrent(static_cast<CUcontext>(context.device->context())),
                  ErrorCode::CudaError, "making the primary context current");
      result = launch();
    }
  }
  if (result == CUDA_SUCCESS) {
    cuda::note_launch(stream.native, label_);
    return;
  }
  // An earlier kernel's fault also refuses this launch; the error names that kernel.
  if (cuda::is_kernel_fault(result)) {
    cuda::check_stream(result, stream.native, "launching '" + label_ + "'");
  }
  throw Error(ErrorCode::LaunchError,
              "launching '" + label_ + "' with grid " + dims(grid) + ", block " + dims(block) +
                  ", " + std::to_string(shared_bytes) +
                  " bytes of shared memory failed: " + cuda::describe(result));
}

void* Kernel::function(int device) const {
  const cuda::ContextScope on(device);  // InvalidArgument for a GPU that does not exist
  CUfunction function = nullptr;
  cuda::check(context_->api->cuKernelGetFunction(&function, static_cast<CUkernel>(handle_)),
              ErrorCode::LoadError, "loading '" + label_ + "' on GPU " + std::to_string(device));
  return function;
}

namespace cuda {

void launch_dependent(const Kernel& kernel, Dim3 grid, Dim3 block, std::size_t shared_bytes,
                      StreamRef stream, void** args, const std::size_t* sizes, std::size_t count) {
  kernel.check_arguments(sizes, count);
  // Programmatic dependent launch exists from sm_90 on, with a driver that has the call.
  const bool dependent = kernel.context_->api->cuLaunchKernelEx != nullptr &&
                         kernel.context_->device->info().major >= 9;
  kernel.launch_native(grid, block, shared_bytes, stream, args, dependent);
}

void make_resident(const Kernel& kernel, int device) {
  const DriverApi& api = driver();
  const ContextScope on(device);
  auto* function = static_cast<CUfunction>(kernel.function(device));
  if (api.cuFuncLoad != nullptr) {
    check(api.cuFuncLoad(function), ErrorCode::LoadError,
          "loading '" + kernel.label() + "' on GPU " + std::to_string(device));
  }
}

std::shared_ptr<const LaunchContext> KernelFactory::make_context(
    std::shared_ptr<const cuda::Device> device, bool nvtx) {
  auto context = std::make_shared<LaunchContext>();
  context->api = &cuda::driver();
  context->device = std::move(device);
  context->nvtx = nvtx;
  return context;
}

std::unique_ptr<Kernel> KernelFactory::make(std::string name, std::string label,
                                            std::shared_ptr<const Binary> binary,
                                            std::shared_ptr<const cuda::Library> library,
                                            std::string_view symbol,
                                            std::shared_ptr<const LaunchContext> context) {
  const cuda::DriverApi& api = *context->api;
  auto* handle = static_cast<CUkernel>(library->kernel(symbol, label));
  const auto device = static_cast<CUdevice>(context->device->native_device());
  auto attribute = [&](CUfunction_attribute which) {
    int value = 0;
    cuda::check(api.cuKernelGetAttribute(&value, which, handle, device), ErrorCode::LoadError,
                "reading attributes of '" + label + "'");
    return value;
  };
  KernelAttributes attributes;
  attributes.registers = attribute(CU_FUNC_ATTRIBUTE_NUM_REGS);
  attributes.static_shared_bytes = attribute(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
  attributes.local_bytes = attribute(CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES);
  attributes.constant_bytes = attribute(CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES);
  attributes.max_threads_per_block = attribute(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK);

  std::shared_ptr<const void> keep_alive = std::move(library);
  return std::unique_ptr<Kernel>(new Kernel(std::move(name), std::move(label), std::move(binary),
                                            std::move(keep_alive), handle, attributes,
                                            std::move(context)));
}

}  // namespace cuda
}  // namespace kreg
