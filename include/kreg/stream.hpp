#pragma once
/// \file
/// Where arrays live and custom kernels run: devices, streams, and the scopes that select
/// them for the calling thread.

#include <kreg/types.hpp>

#include <memory>

namespace kreg {

namespace cuda {
struct StreamState;   // kreg's record of a stream, shared by a Stream's copies
struct StreamAccess;  // how kreg's launch path reaches it
}  // namespace cuda

/// A processor: the CPU, or a GPU by ordinal.
struct Device {
  enum class Type { Cpu, Gpu };
  Type type = Type::Gpu;
  int index = 0;

  static constexpr Device cpu() noexcept { return {Type::Cpu, 0}; }
  static constexpr Device gpu(int index = 0) noexcept { return {Type::Gpu, index}; }
  friend constexpr bool operator==(Device, Device) noexcept = default;
};

/// A CUDA stream on one GPU. Copies share the stream. A stream made with the constructor is
/// owned and destroyed with its last copy; `Stream::wrap` borrows one.
class Stream {
 public:
  /// A new non-blocking stream on GPU `device`. Throws `NoDevice` without a driver, and
  /// `InvalidArgument` for an ordinal that does not exist.
  explicit Stream(int device = 0);

  /// GPU `device`'s legacy default stream (the `0` stream), which orders against every
  /// blocking stream of the device. Needs no driver until something runs on it.
  static Stream default_stream(int device = 0);
  /// A stream someone else owns, such as a framework's current stream. kreg never destroys
  /// it; the owner must keep it alive while arrays use it.
  static Stream wrap(StreamRef native, int device = 0);

  int device() const noexcept;
  StreamRef native() const noexcept;
  /// Waits until everything queued on the stream has finished.
  void synchronize() const;

  friend bool operator==(const Stream& a, const Stream& b) noexcept {
    return a.native().native == b.native().native && a.device() == b.device();
  }

 private:
  friend struct cuda::StreamAccess;
  explicit Stream(std::shared_ptr<const cuda::StreamState> state) noexcept
      : state_(std::move(state)) {}
  std::shared_ptr<const cuda::StreamState> state_;
};

/// Selects a stream (and its GPU) for custom kernels applied by this thread while the scope
/// lives, like MLX's `with_stream`. Scopes nest; the innermost wins.
class StreamScope {
 public:
  explicit StreamScope(const Stream& stream);
  ~StreamScope();
  StreamScope(const StreamScope&) = delete;
  StreamScope& operator=(const StreamScope&) = delete;

 private:
  // The selection this scope replaced, restored when it ends.
  std::shared_ptr<const cuda::StreamState> previous_;
  int previous_device_;
  bool previous_cpu_;
};

/// Selects a device for this thread while the scope lives, like MLX's `with_device`: a GPU
/// (custom kernels then run on its default stream) or the CPU (where custom kernels refuse
/// to run: `apply` throws `InvalidArgument`). Throws `InvalidArgument` for a GPU ordinal that
/// does not exist, when a driver is present to tell.
///
/// Registry kernels honour the scope too: under a GPU scope (or a `StreamScope`),
/// `Kernel::launch` runs on that GPU's primary context, whatever context is current.
class DeviceScope {
 public:
  explicit DeviceScope(Device device);
  ~DeviceScope();
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  // The selection this scope replaced, restored when it ends.
  std::shared_ptr<const cuda::StreamState> previous_;
  int previous_device_;
  bool previous_cpu_;
};

/// The device selected for this thread: the innermost scope's, else GPU 0.
Device current_device() noexcept;
/// The stream custom kernels use on this thread now: the innermost `StreamScope`'s, else the
/// default stream of the selected GPU. Throws `InvalidArgument` under a CPU scope.
Stream current_stream();

}  // namespace kreg
