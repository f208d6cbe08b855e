#include "cuda/memory.hpp"
#include "cuda/device.hpp"

#include "core/log.hpp"
#include "cuda/capture.hpp"
#include "cuda/context.hpp"
#include "cuda/driver_api.hpp"
#include "cuda/launch_journal.hpp"

#include <array>
#include <atomic>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace kreg::cuda {
namespace {

// One pool per GPU, kept for the life of the process (buffers may be freed during static
// destruction). Its own pool rather than the device's default one, so that its release
// threshold can be raised without changing the default pool other libraries share: with
// the default threshold of zero, every synchronization hands freed memory back to the OS,
// and the next allocation pays to map it again.
CUmemoryPool pool_for(int device) {
  static std::mutex mutex;
  static std::array<CUmemoryPool, kMaxDevices> pools{};
  std::lock_guard lock(mutex);
  if (pools[device] != nullptr) return pools[device];
  const DriverApi& api = driver();
  CUmemPoolProps props{};
  props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  props.handleTypes = CU_MEM_HANDLE_TYPE_NONE;
  props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  props.location.id = device;
  CUmemoryPool pool = nullptr;
  check(api.cuMemPoolCreate(&pool, &props), ErrorCode::CudaError, "cuMemPoolCreate");
  cuuint64_t threshold = std::numeric_limits<cuuint64_t>::max();
  check(api.cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &threshold),
        ErrorCode::CudaError, "cuMemPoolSetAttribute");
  pools[device] = pool;
  return pool;
}

// Released buffers kept per (device, stream, size) for the next allocation there. Bounded
// per stream in blocks and in bytes, so a program that churns through many sizes does not
// hoard memory.
class ReuseCache {
 public:
  static constexpr std::size_t kPerStream = 64;
  static constexpr std::size_t kBytesPerStream = std::size_t{4} << 30;

  std::uint64_t take(int device, void* stream, std::size_t bytes) {
    std::lock_guard lock(mutex_);
    auto it = blocks_.find(Key{device, stream, bytes});
    if (it == blocks_.end() || it->second.empty()) return 0;
    const std::uint64_t address = it->second.back();
    it->second.pop_back();
    Held& held = held_[{device, stream}];
    --held.blocks;
    held.bytes -= bytes;
    return address;
  }
  // False when the stream already holds its share: the caller frees the block.
  bool keep(int device, void* stream, std::size_t bytes, std::uint64_t address) {
    std::lock_guard lock(mutex_);
    Held& held = held_[{device, stream}];
    if (held.blocks >= kPerStream || held.bytes + bytes > kBytesPerStream) return false;
    blocks_[Key{device, stream, bytes}].push_back(address);
    ++held.blocks;
    held.bytes += bytes;
    return true;
  }
  std::vector<std::uint64_t> drop(int device, void* stream) {
    std::lock_guard lock(mutex_);
    std::vector<std::uint64_t> out;
    for (auto it = blocks_.begin(); it != blocks_.end();) {
      if (it->first.device == device && it->first.stream == stream) {
        out.insert(out.end(), it->second.begin(), it->second.end());
        it = blocks_.erase(it);
      } else {
        ++it;
      }
    }
    held_.erase({device, stream});
    return out;
  }

 private:
  struct Key {
    int device;
    void* stream;
    std::size_t bytes;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    std::size_t operator()(const Key& k) const noexcept {
      return std::hash<void*>()(k.stream) ^ (k.bytes * 0x9e3779b97f4a7c15ULL) ^
             static_cast<std::size_t>(k.device);
    }
  };
  std::mutex mutex_;
  std::unordered_map<Key, std::vector<std::uint64_t>, KeyHash> blocks_;
  struct Held {
    std::size_t blocks = 0;
    std::size_t bytes = 0;
  };
  std::map<std::pair<int, void*>, Held> held_;
};

ReuseCache& reuse_cache() {
  // Never destroyed: buffers are released during static destruction too.
  static auto* const cache = new ReuseCache();
  return *cache;
}

void warn(const char* what, CUresult result) noexcept {
  try {
    core::log_write(core::LogLevel::Warn, std::string(what) + " failed: " + describe(result));
  } catch (...) {
    // Nothing to report with: callers are destructors.
  }
}

}  // namespace

void warm_pool(int device, bool only_if_live) noexcept {
  // Set once a device's pool holds its first memory; a second warming would only churn it.
  static std::array<std::atomic<bool>, kMaxDevices> warm{};
  try {
    const DriverApi* api = driver_api();
    if (api == nullptr || device < 0 || device >= kMaxDevices) return;
    if (warm[device].load(std::memory_order_acquire)) return;
    if (only_if_live) {
      CUdevice native = 0;
      unsigned flags = 0;
      int active = 0;
      if (api->cuDeviceGet(&native, device) != CUDA_SUCCESS ||
          api->cuDevicePrimaryCtxGetState(native, &flags, &active) != CUDA_SUCCESS || active == 0) {
        return;
      }
    }
    ContextScope context(device);
    CUmemoryPool pool = pool_for(device);
    CUstream stream = nullptr;
    if (api->cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS) return;
    // Freed once its stream is done, the block serves any stream's next allocation, and
    // the pool keeps it mapped (its release threshold is unbounded).
    constexpr std::size_t kBytes = std::size_t{2} << 20;
    CUdeviceptr address = 0;
    if (api->cuMemAllocFromPoolAsync(&address, kBytes, pool, stream) == CUDA_SUCCESS) {
      if (const CUresult r = api->cuMemFreeAsync(address, stream); r != CUDA_SUCCESS) {
        warn("freeing the memory pool's warm-up block", r);
      }
    }
    if (const CUresult r = api->cuStreamSynchronize(stream); r != CUDA_SUCCESS) {
      warn("warming the memory pool", r);
    } else {
      warm[device].store(true, std::memory_order_release);
    }
    if (const CUresult r = api->cuStreamDestroy(stream); r != CUDA_SUCCESS) {
      warn("cuStreamDestroy", r);
    }
  } catch (...) {
    // Warming is an optimization: the first allocation maps the memory itself.
  }
}

std::shared_ptr<Buffer> Buffer::allocate(std::size_t bytes, int device, void* stream,
                                         bool reusable) {
  ContextScope context(device);
  std::shared_ptr<Buffer> buffer(new Buffer());
  buffer->bytes_ = bytes;
  buffer->device_ = device;
  buffer->stream_ = stream;
  buffer->reusable_ = reusable;
  if (bytes == 0) return buffer;
  if (is_capturing(stream)) {
    // Captured as the graph's own allocation, with an address fixed for the graph's life.
    // Never taken from or kept for reuse: memory the graph writes on every replay must not
    // be handed to other work.
    buffer->captured_ = true;
    buffer->reusable_ = false;
  } else if (reusable) {
    buffer->address_ = reuse_cache().take(device, stream, bytes);
    if (buffer->address_ != 0) return buffer;
  }
  CUmemoryPool pool = pool_for(device);
  CUdeviceptr address = 0;
  const CUresult result =
      driver().cuMemAllocFromPoolAsync(&address, bytes, pool, static_cast<CUstream>(stream));
  if (result != CUDA_SUCCESS) {  // the message is built only when needed
    check(result, ErrorCode::CudaError,
          "allocating " + std::to_string(bytes) + " bytes on GPU " + std::to_string(device));
  }
  buffer->address_ = address;
  return buffer;
}

std::shared_ptr<Buffer> Buffer::borrow(std::uint64_t address, std::size_t bytes, int device,
                                       void* stream, std::function<void()> release, bool wait) {
  std::shared_ptr<Buffer> buffer(new Buffer());
  buffer->wait_ = wait;
  buffer->stream_ = stream;
  buffer->address_ = address;
  buffer->bytes_ = bytes;
  buffer->device_ = device;
  buffer->release_ = std::move(release);
  return buffer;
}

Buffer::~Buffer() {
  if (release_) {
    const DriverApi* api = wait_ ? driver_api() : nullptr;
    if (api != nullptr) {
      try {
        ContextScope context(device_);
        const CUresult result = api->cuStreamSynchronize(static_cast<CUstream>(stream_));
        if (result != CUDA_SUCCESS && result != CUDA_ERROR_DEINITIALIZED) {
          warn("cuStreamSynchronize", result);
        }
      } catch (...) {
        // No context (the driver is shutting down): nothing is running any more.
      }
    }
    release_();
    return;
  }
  if (address_ == 0) return;
  try {
    if (reusable_ && reuse_cache().keep(device_, stream_, bytes_, address_)) return;
  } catch (...) {
    // No memory to remember it in: free it instead.
  }
  const DriverApi* api = driver_api();
  if (api == nullptr) return;
  try {
    ContextScope context(device_);
    if (!captured_ && is_capturing(stream_)) {
      // A free during capture becomes part of the graph, which may free only what it
      // allocated: the driver would invalidate the capture. The memory stays allocated.
      core::log_write(core::LogLevel::Warn,
                      "an array made before a CUDA graph capture was released during it, on "
                      "the capturing stream; its memory is kept until the process exits");
      return;
    }
    const CUresult result = api->cuMemFreeAsync(address_, static_cast<CUstream>(stream_));
    // At process exit the driver may be gone already; the memory goes with it. A graph's
    // allocation is live only from a launch of the graph until it is freed: one freed
    // before any launch has nothing to free, and the driver says so.
    if (result != CUDA_SUCCESS && result != CUDA_ERROR_DEINITIALIZED &&
        !(captured_ && result == CUDA_ERROR_INVALID_VALUE))
      warn("cuMemFreeAsync", result);
  } catch (...) {
    // No context to free in (the driver is shutting down): the memory goes with the process.
  }
}

void release_cached(int device, void* stream) noexcept {
  const DriverApi* api = driver_api();
  if (api == nullptr) return;
  try {
    const std::vector<std::uint64_t> blocks = reuse_cache().drop(device, stream);
    if (blocks.empty()) return;
    ContextScope context(device);
    for (std::uint64_t address : blocks) {
      const CUresult result = api->cuMemFreeAsync(address, static_cast<CUstream>(stream));
      if (result != CUDA_SUCCESS && result != CUDA_ERROR_DEINITIALIZED) {
        warn("cuMemFreeAsync", result);
      }
    }
  } catch (...) {
    // The driver is going away with the process, and the memory with it.
  }
}

void copy_to_device(std::uint64_t dst, const void* host, std::size_t bytes, void* stream) {
  if (bytes == 0) return;
  check(driver().cuMemcpyHtoDAsync(dst, host, bytes, static_cast<CUstream>(stream)),
        ErrorCode::CudaError, "copying to the GPU");
}

void copy_to_host(void* host, std::uint64_t src, std::size_t bytes, void* stream) {
  const DriverApi& api = driver();
  // It waits on the host for the stream, which a capture refuses.
  refuse_during_capture(stream, "reading an array back to the host");
  if (bytes > 0) {
    // An earlier kernel's fault can surface here already.
    check_stream(api.cuMemcpyDtoHAsync(host, src, bytes, static_cast<CUstream>(stream)), stream,
                 "copying from the GPU");
  }
  check_stream(api.cuStreamSynchronize(static_cast<CUstream>(stream)), stream,
               "waiting for the stream");
}

void fill(std::uint64_t dst, const void* value, std::size_t element_bytes, std::size_t count,
          void* stream) {
  if (count == 0) return;
  const DriverApi& api = driver();
  auto* s = static_cast<CUstream>(stream);
  switch (element_bytes) {
    case 1: {
      unsigned char v = 0;
      std::memcpy(&v, value, 1);
      check(api.cuMemsetD8Async(dst, v, count, s), ErrorCode::CudaError, "cuMemsetD8Async");
      return;
    }
    case 2: {
      unsigned short v = 0;
      std::memcpy(&v, value, 2);
      check(api.cuMemsetD16Async(dst, v, count, s), ErrorCode::CudaError, "cuMemsetD16Async");
      return;
    }
    case 4: {
      unsigned v = 0;
      std::memcpy(&v, value, 4);
      check(api.cuMemsetD32Async(dst, v, count, s), ErrorCode::CudaError, "cuMemsetD32Async");
      return;
    }
    case 8: {
      // No 64-bit memset: write the low and the high words as two 2-D fills of one 32-bit
      // column with an 8-byte pitch.
      unsigned words[2] = {};
      std::memcpy(words, value, 8);
      for (unsigned half = 0; half < 2; ++half) {
        check(api.cuMemsetD2D32Async(dst + std::uint64_t{4} * half, 8, words[half], 1, count, s),
              ErrorCode::CudaError, "cuMemsetD2D32Async");
      }
      return;
    }
    default:
      throw Error(ErrorCode::InvalidArgument,
                  "cannot fill elements of " + std::to_string(element_bytes) + " bytes");
  }
}

}  // namespace kreg::cuda
