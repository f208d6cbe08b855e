#include "custom/custom_call.hpp"

#include <kreg/registry.hpp>

#include "array/launch_support.hpp"
#include "cuda/capture.hpp"
#include "cuda/stream.hpp"
#include "lex/text.hpp"

#include <algorithm>
#include <cstdlib>
#include <string>
#include <string_view>

namespace kreg::custom {
namespace {

// The static shared memory ptxas refused a kernel (its log's "uses too much shared data
// (0x10000 bytes, 0xc000 max)"), or 0.
std::size_t refused_shared_bytes(const Error& e) {
  if (e.compile_failure() == nullptr) return 0;
  const std::string& log = e.compile_failure()->log;
  constexpr std::string_view kSaid = "uses too much shared data (0x";
  const std::size_t at = log.find(kSaid);
  if (at == std::string::npos) return 0;
  return static_cast<std::size_t>(std::strtoull(log.c_str() + at + kSaid.size(), nullptr, 16));
}

const Kernel& compiled(Registry& registry, const Generated& generated) {
  SourceOptions options;
  options.entries.push_back(generated.entry + "=" + generated.expression);
  registry.register_source(generated.entry, generated.source, options);
  return registry.get(generated.entry);
}

}  // namespace

const Kernel& Variant::kernel(int device, const std::string& kernel_name) {
  const Kernel* ready = kernels_[device].load(std::memory_order_acquire);
  if (ready != nullptr) return *ready;
  std::lock_guard lock(mutex_);
  ready = kernels_[device].load(std::memory_order_relaxed);
  if (ready != nullptr) return *ready;
  Registry& registry = device_registry(device);
  const std::string* shown = &generated.source;
  try {
    try {
      ready = &compiled(registry, generated);
    } catch (const Error& e) {
      // Threadgroup arrays past what a kernel may hold statically: the same body with them
      // in dynamic shared memory, as much as the static ones asked for, and room to align.
      const std::size_t refused = refused_shared_bytes(e);
      if (e.code() != ErrorCode::CompileError || refused == 0 || dynamic.source.empty()) throw;
      shown = &dynamic.source;
      ready = &compiled(registry, dynamic);
      carved_bytes_[device].store(((refused + 15) & ~std::size_t{15}) + 16 * dynamic.carved_arrays,
                                  std::memory_order_release);
    }
  } catch (const Error& e) {
    if (e.code() != ErrorCode::CompileError) throw;
    throw e.with_message("custom kernel '" + kernel_name + "' does not compile.\n" +
                         std::string(e.message()) + "\ngenerated source:\n" +
                         lex::numbered(*shown));
  }
  kernels_[device].store(ready, std::memory_order_release);
  return *ready;
}

void CustomCall::run(const std::vector<std::shared_ptr<array::ArrayNode>>& live) {
  const int device = stream.device();
  array::ArrayLaunch launch(stream, variant->output_dtypes.size());
  const Kernel& kernel = [&]() -> const Kernel& {
    // A binary that is not ready is refused during capture, before it is compiled or loaded.
    const cuda::LaunchStreamHint hint(stream.native().native);
    return variant->kernel(device, kernel_name);
  }();
  // Threadgroup arrays carved from dynamic shared memory sit above the caller's own.
  const std::size_t carved = variant->carved_bytes(device);
  const std::size_t shared =
      carved == 0 ? shared_memory : ((shared_memory + 15) & ~std::size_t{15}) + carved;

  array::Parameters& params = launch.parameters();
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const std::shared_ptr<array::ArrayNode>& input = array::ArrayAccess::node(inputs[i]);
    const array::ArrayNode* node = input.get();
    Shape packed;  // strides of a by-value input, which is always packed row-major
    const Shape* strides = nullptr;
    if (variant->kinds[i] == InputKind::Pointer) {
      node = &launch.input(input, ensure_row_contiguous);
      strides = &node->strides;
      params.add(array::element_address(*node));
    } else {
      // By value: the launch copies the elements, row-major, into the parameter space.
      const std::vector<unsigned char> values = array::host_values(input);
      params.add(values.data(), values.size(), size_of(node->dtype));
      packed = array::row_major_strides(node->shape);
      strides = &packed;
    }
    const InputParams& wanted = variant->params[i];
    if (wanted.shape) {
      int shape[8] = {};
      std::transform(node->shape.begin(), node->shape.end(), shape,
                     [](std::int64_t extent) { return static_cast<int>(extent); });
      params.add(shape, sizeof(shape), alignof(int));
    }
    if (wanted.strides) {
      std::int64_t values[8] = {};
      std::copy(strides->begin(), strides->end(), values);
      params.add(values, sizeof(values), alignof(std::int64_t));
    }
    if (wanted.ndim) params.add(static_cast<int>(node->shape.size()));
  }

  for (std::size_t i = 0; i < variant->output_dtypes.size(); ++i) {
    const Dtype dtype = variant->output_dtypes[i];
    // Outputs nobody holds any more are still written by the kernel.
    cuda::Buffer& buffer = launch.output(output_sizes[i], dtype);
    if (init_value.has_value()) {
      unsigned char value[8] = {};
      write_element(*init_value, dtype, value);
      cuda::fill(buffer.address(), value, size_of(dtype), static_cast<std::size_t>(output_sizes[i]),
                 stream.native().native);
    }
    params.add(buffer.address());
  }
  params.add(grid);  // the kernel's uint3 kreg_grid: three 32-bit unsigned

  const Dim3 blocks{(grid.x + threadgroup.x - 1) / threadgroup.x,
                    (grid.y + threadgroup.y - 1) / threadgroup.y,
                    (grid.z + threadgroup.z - 1) / threadgroup.z};
  launch.launch(kernel, blocks, threadgroup, shared);
  launch.publish(live);
}

}  // namespace kreg::custom
