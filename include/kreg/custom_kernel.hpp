#pragma once
/// \file
/// `CustomKernel`: a CUDA kernel written as a body string over named arrays.

#include <kreg/array.hpp>
#include <kreg/dtype.hpp>
#include <kreg/types.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace kreg {

class Registry;

namespace custom {
struct CustomKernelState;  // what a custom kernel's copies share
}  // namespace custom

/// How a custom kernel is built, beyond its body.
struct CustomKernelOptions {
  /// Code placed before the kernel: helper functions, includes, constants.
  std::string header;
  /// Copy non-contiguous inputs to row-major order before the launch, so that the body may
  /// index them as flat arrays. Off: inputs are passed as they are, and the body must read
  /// them through `<name>_shape` and `<name>_strides`.
  bool ensure_row_contiguous = true;
  /// Outputs are `kreg::atomic<T>*`, for `atomic_fetch_add_explicit` and CUDA atomics.
  bool atomic_outputs = false;
};

/// A template argument: a dtype becomes a `typename`, an `int` an `int`, a `bool` a `bool`.
using TemplateArg = std::variant<Dtype, int, bool>;

/// Options of one `apply`.
struct ApplyOptions {
  /// Template parameters of the kernel, by name, in order.
  std::vector<std::pair<std::string, TemplateArg>> template_args;
  /// Fill every output with this value before the launch (converted to its dtype).
  /// Without it, outputs start uninitialized and the body must write every element.
  std::optional<double> init_value;
  /// Print the generated source to stdout at `apply`.
  bool verbose = false;
  /// Dynamic shared memory per threadgroup, in bytes.
  std::size_t shared_memory = 0;
};

/// The shape and dtype of one output.
struct OutputSpec {
  Shape shape;
  Dtype dtype = Dtype::Float32;
};

/// A custom kernel in the style of MLX's `metal_kernel`, on CUDA. kreg writes the kernel's
/// signature from the input and output names; the body uses them, and Metal's thread attributes
/// (`thread_position_in_grid`, `threads_per_threadgroup`, `thread_index_in_simdgroup`, ...)
/// where it names them:
///
///     kreg::CustomKernel kernel("double", {"a"}, {"out"},
///                               "uint i = thread_position_in_grid.x; out[i] = 2 * a[i];");
///     auto out = kernel.apply({a}, {{{4}, kreg::Dtype::Float32}}, {4}, {4});
///     std::vector<float> v = out[0].to_vector<float>();
///
/// In the body, an input `a` is `const T* __restrict__ a`; with fewer than 8 elements it
/// is passed by value (still read as `a[i]`); a 0-d input is a plain value `a`.
/// `a_shape` (int[]), `a_strides` (int64_t[], in elements) and `a_ndim` (int) exist when
/// the body names them. An output `out` is `T* __restrict__ out` (row-major, contiguous),
/// or `kreg::atomic<T>*` with `atomic_outputs`. Metal names with a CUDA counterpart work as
/// they are: `uint`, `float16_t`, `bfloat16_t`, `simd_sum`, `simd_max`,
/// `simd_shuffle_down`, `threadgroup_barrier(mem_flags::mem_threadgroup)`, ... (see
/// docs/custom_kernels.md).
///
/// `grid` counts threads, as Metal's `dispatchThreads` does: kreg launches
/// ceil(grid / threadgroup) blocks and threads past `grid` do not run the body. A body that
/// uses barriers or simd functions should use a grid that is a multiple of the threadgroup.
///
/// The kernel compiles when an output is first evaluated, through the registry of the GPU's
/// arch (`device_registry`), so its binary is cached in memory and on disk like any
/// other, and compiled once for all GPUs of one arch. Copies share state; the object may be
/// destroyed before its outputs are evaluated. `apply` may be called from many threads at once.
class CustomKernel {
 public:
  /// Throws `InvalidArgument` if there are no outputs, or a name is not a C++ identifier,
  /// repeats, or clashes with a name kreg generates.
  CustomKernel(std::string name, std::vector<std::string> input_names,
               std::vector<std::string> output_names, std::string source,
               CustomKernelOptions options = {});

  /// Runs the kernel over `grid` threads in threadgroups (blocks) of `threadgroup`, on the
  /// current stream (see `StreamScope`), and returns one pending array per output. Checks
  /// everything it can now and throws `InvalidArgument`: input and output counts, output
  /// shapes (no negative dimension, at most 8), a zero grid, a threadgroup over the device
  /// limit, template argument names; under a CPU `DeviceScope` it refuses to run.
  /// Compile errors surface from `eval`, with the generated source, numbered.
  ///
  /// The body must stay inside the buffers it is given, must not write inputs, and must
  /// write every output element unless `init_value` is set.
  std::vector<Array> apply(const std::vector<Array>& inputs, const std::vector<OutputSpec>& outputs,
                           Dim3 grid, Dim3 threadgroup, const ApplyOptions& options = {}) const;

  /// The CUDA C++ that `apply` would compile for these inputs and options, without running
  /// anything. Checks as `apply` does.
  std::string generated_source(const std::vector<Array>& inputs,
                               const std::vector<OutputSpec>& outputs,
                               const ApplyOptions& options = {}) const;

  /// The registry entry `apply` compiles for these arguments, "custom_<name>_<hash>": the
  /// hash covers the generated source and its template instantiation, so two kernels that
  /// differ in anything that changes the source never share an entry or a binary.
  std::string cache_key(const std::vector<Array>& inputs, const std::vector<OutputSpec>& outputs,
                        const ApplyOptions& options = {}) const;

  const std::string& name() const noexcept;

 private:
  std::shared_ptr<custom::CustomKernelState> state_;
};

/// Deprecated: the same registry as `device_registry(device)`, under its former name.
[[deprecated("use kreg::device_registry")]] Registry& custom_kernel_registry(int device = 0);

}  // namespace kreg
