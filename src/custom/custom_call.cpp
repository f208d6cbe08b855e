#include "custom/custom_call.hpp"

#include <kreg/registry.hpp>

#include "array/launch_support.hpp"
#include "cuda/capture.hpp"
#include "cuda/launch_limits.hpp"
#include "cuda/stream.hpp"

#include <algorithm>
#include <string>

namespace kreg::custom {
namespace {

struct Uint3 {
  unsigned x, y, z;
};

}  // namespace

const Kernel& Variant::kernel(int device, const std::string& kernel_name) {
  const Kernel* ready = kernels_[device].load(std::memory_order_acquire);
  if (ready != nullptr) return *ready;
  std::lock_guard lock(mutex_);
  ready = kernels_[device].load(std::memory_order_relaxed);
  if (ready != nullptr) return *ready;
  Registry& registry = device_registry(device);
  SourceOptions options;
  options.entries.push_back(entry + "=" + expression);
  registry.register_source(entry, source, options);
  try {
    ready = &registry.get(entry);
  } catch (const Error& e) {
    if (e.code() != ErrorCode::CompileError) throw;
    throw e.with_message("custom kernel '" + kernel_name + "' does not compile.\n" +
                         std::string(e.message()) + "\ngenerated source:\n" + numbered(source));
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
  if (shared_memory > std::size_t{48} * 1024) {
    cuda::allow_dynamic_shared_memory(kernel.native_handle(), shared_memory, device);
  }

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
      for (std::size_t d = 0; d < node->shape.size(); ++d) {
        shape[d] = static_cast<int>(node->shape[d]);
      }
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
  params.add(Uint3{grid.x, grid.y, grid.z});

  const Dim3 blocks{(grid.x + threadgroup.x - 1) / threadgroup.x,
                    (grid.y + threadgroup.y - 1) / threadgroup.y,
                    (grid.z + threadgroup.z - 1) / threadgroup.z};
  launch.launch(kernel, blocks, threadgroup, shared_memory);
  launch.publish(live);
}

}  // namespace kreg::custom
