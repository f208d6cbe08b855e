#pragma once
// Device memory for arrays: kreg's own stream-ordered pool per GPU, buffers that free
// themselves on their stream, and the copies and fills arrays need. No driver types leak out.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

namespace kreg::cuda {

// A span of device memory. Either allocated from kreg's pool (freed on `stream` when the
// last owner lets go, so work already queued there finishes first) or borrowed from another
// owner (`release` runs instead, e.g. a DLPack deleter).
class Buffer {
 public:
  // Allocates `bytes` on `device`, ordered on `stream`. Zero bytes allocate nothing.
  // Throws CudaError (out of memory included).
  //
  // `reusable`: the stream lives as long as the process or is kreg's own (and calls
  // `release_cached` before it is destroyed). Then a released buffer is kept for the next
  // allocation of the same size on the same stream, which stream order makes safe, and
  // which saves the driver's stream-ordered free and allocation on every launch.
  static std::shared_ptr<Buffer> allocate(std::size_t bytes, int device, void* stream,
                                          bool reusable = false);
  // Wraps memory kreg does not own. `release` must not throw. With `wait`, kreg waits for
  // `stream`, which every use of the memory is ordered before, before `release` runs: the
  // owner may then reuse it at once. Without, `release` runs at once, for owners that reuse
  // memory only in the order of `stream` (stream-ordered caching allocators).
  static std::shared_ptr<Buffer> borrow(std::uint64_t address, std::size_t bytes, int device,
                                        void* stream, std::function<void()> release,
                                        bool wait = true);
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  std::uint64_t address() const noexcept { return address_; }
  std::size_t bytes() const noexcept { return bytes_; }
  int device() const noexcept { return device_; }
  void* stream() const noexcept { return stream_; }

 private:
  Buffer() = default;
  std::uint64_t address_ = 0;
  std::size_t bytes_ = 0;
  int device_ = 0;
  void* stream_ = nullptr;
  std::function<void()> release_;  // set for borrowed memory
  bool wait_ = true;               // borrowed: wait for the stream before `release_`
  bool reusable_ = false;
  bool captured_ = false;  // allocated while `stream_` captured a graph: the graph's memory
};

// Maps the first memory of kreg's pool on `device`, so that the first array allocation there
// does not pay for it: about 8 ms on an H200 host. Waits for it; meant for a background
// thread. With `only_if_live`, does nothing unless the device's primary context is already
// live (another library, or kreg's own loads, made it): registries are made in programs that
// may never use the GPU, and a context costs far more than the pool. Once a device's pool is
// warm, does nothing. Does nothing without a driver; never throws.
void warm_pool(int device, bool only_if_live) noexcept;

// Frees the buffers kept for reuse on `stream`; call before destroying it.
void release_cached(int device, void* stream) noexcept;

// Asynchronous on `stream`; `host` must stay valid until the stream reaches the copy.
void copy_to_device(std::uint64_t dst, const void* host, std::size_t bytes, void* stream);
// Returns once the bytes are on the host: waits for `stream`.
void copy_to_host(void* host, std::uint64_t src, std::size_t bytes, void* stream);
// Fills `count` elements of `element_bytes` (1, 2, 4 or 8) with the pattern at `value`.
void fill(std::uint64_t dst, const void* value, std::size_t element_bytes, std::size_t count,
          void* stream);

}  // namespace kreg::cuda
