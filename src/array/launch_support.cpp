#include "array/launch_support.hpp"

#include "cuda/stream.hpp"
#include "cuda/stream_state.hpp"

namespace kreg::detail {

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
              "kreg: " + std::string(owner) + ": input '" + std::string(input) + "' is on GPU " +
                  std::to_string(root.stream.device()) + " but the kernel runs on GPU " +
                  std::to_string(stream.device()) + "; copy it there first");
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

}  // namespace kreg::detail
