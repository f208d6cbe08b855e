#include "array/launch_support.hpp"

#include <kreg/kernel.hpp>

#include "cuda/capture.hpp"
#include "cuda/stream.hpp"
#include "cuda/stream_state.hpp"

namespace kreg::array {

void place_on_device(ArrayNode& node, const Stream& stream, std::string_view owner,
                     std::string_view input) {
  // A view's memory is its root's.
  ArrayNode& root = node.base != nullptr ? *node.base : node;
  if (root.stream.device() == stream.device()) return;
  if (!root.evaluated() && root.producer == nullptr) {
    root.stream = stream;
    node.stream = stream;
    return;
  }
  throw Error(ErrorCode::InvalidArgument,
              std::string(owner) + ": input '" + std::string(input) + "' is on GPU " +
                  std::to_string(root.stream.device()) + " but the kernel runs on GPU " +
                  std::to_string(stream.device()) + "; copy it there first");
}

Array pending_output(const std::shared_ptr<Primitive>& producer, Shape shape, Dtype dtype,
                     const Stream& stream) {
  auto node = std::make_shared<ArrayNode>();
  node->strides = row_major_strides(shape);
  node->shape = std::move(shape);
  node->dtype = dtype;
  node->stream = stream;
  node->producer = producer;
  producer->outputs.push_back(node);
  return ArrayAccess::make(std::move(node));
}

const ArrayNode& LaunchInputs::pointer(const std::shared_ptr<ArrayNode>& input, bool row_major) {
  const ArrayNode* node = input.get();
  if (row_major && !(node->evaluated() && node->row_contiguous())) {
    copies_.push_back(contiguous(input, stream_));
    node = copies_.back().get();
  } else {
    evaluate(input);
  }
  void* producer = node->stream.native().native;
  void* native = stream_.native().native;
  if (producer != native || node->stream.device() != stream_.device()) {
    // A capture may not wait for work outside it, nor pull another stream into its graph.
    cuda::refuse_during_capture(native, "an input made on another stream is read");
    cuda::order_after(native, producer);
    producers_.push_back(producer);
  }
  return *node;
}

void LaunchInputs::launched() {
  for (void* producer : producers_) cuda::order_after(producer, stream_.native().native);
}

std::uint64_t element_address(const ArrayNode& node) {
  if (node.size() == 0) return 0;
  return node.buffer->address() + static_cast<std::uint64_t>(node.offset) * size_of(node.dtype);
}

std::shared_ptr<cuda::Buffer> allocate_output(std::int64_t count, Dtype dtype,
                                              const Stream& stream) {
  return cuda::Buffer::allocate(static_cast<std::size_t>(count) * size_of(dtype), stream.device(),
                                stream.native().native,
                                cuda::StreamAccess::state(stream)->reusable());
}

ArrayLaunch::ArrayLaunch(const Stream& stream, std::size_t outputs)
    : stream_(stream), context_(stream.device()), inputs_(stream) {
  buffers_.reserve(outputs);
}

cuda::Buffer& ArrayLaunch::output(std::int64_t count, Dtype dtype) {
  buffers_.push_back(allocate_output(count, dtype, stream_));
  return *buffers_.back();
}

void ArrayLaunch::launch(const Kernel& kernel, Dim3 grid, Dim3 block, std::size_t shared_bytes,
                         const std::size_t* sizes, std::size_t count) {
  const StreamRef native = stream_.native();
  if (sizes != nullptr) {
    kernel.launch_checked(grid, block, shared_bytes, native, params_.pointers(), sizes, count);
  } else {
    kernel.launch_raw(grid, block, shared_bytes, native, params_.pointers());
  }
  inputs_.launched();
}

void ArrayLaunch::publish(const std::vector<std::shared_ptr<ArrayNode>>& live) {
  for (std::size_t i = 0; i < live.size(); ++i) {
    if (live[i] != nullptr) live[i]->buffer = buffers_[i];
  }
}

}  // namespace kreg::array
