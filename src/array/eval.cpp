#include <kreg/registry.hpp>

#include "array/launch_support.hpp"
#include "array/node.hpp"
#include "cuda/capture.hpp"
#include "cuda/context.hpp"
#include "cuda/stream.hpp"
#include "cuda/stream_state.hpp"

#include <algorithm>
#include <cstring>
#include <string>
#include <unordered_set>

namespace kreg::array {
namespace {

// The layout argument of the built-in strided_copy kernels (kernels/copy.cu).
struct CopyLayout {
  int ndim = 0;
  long long shape[8] = {};
  long long strides[8] = {};
};

// Gives a root array its memory: with its host values (from_data), or uninitialized (empty).
void materialize(ArrayNode& node) {
  const int device = node.stream.device();
  cuda::ContextScope context(device);
  void* stream = node.stream.native().native;
  // Host values cross through pageable memory, which a graph cannot capture.
  if (!node.host.empty()) {
    cuda::refuse_during_capture(stream, "an array made from host values is first used");
  }
  const std::size_t bytes = static_cast<std::size_t>(node.size()) * size_of(node.dtype);
  auto buffer = cuda::Buffer::allocate(bytes, device, stream,
                                       cuda::StreamAccess::state(node.stream)->reusable());
  // Returns once pageable memory is staged, so the host copy may be dropped afterwards.
  if (!node.host.empty()) {
    cuda::copy_to_device(buffer->address(), node.host.data(), node.host.size(), stream);
  }
  node.buffer = std::move(buffer);
  // Small arrays keep their values: kernels take them by value from the host.
  if (node.host.size() > 64) std::vector<unsigned char>().swap(node.host);
}

void link_view(ArrayNode& view) {
  view.buffer = view.base->buffer;
  view.stream = view.base->stream;  // the root may have moved to the GPU that first used it
}

void run_producer(const std::shared_ptr<Primitive>& producer) {
  std::vector<std::shared_ptr<ArrayNode>> outputs;
  outputs.reserve(producer->outputs.size());
  for (const auto& weak : producer->outputs) outputs.push_back(weak.lock());
  producer->run(outputs);
  // Done: the outputs no longer need their inputs, so the graph behind them can go.
  for (const auto& output : outputs) {
    if (output != nullptr) output->producer = nullptr;
  }
}

void dependencies(const ArrayNode& node, std::vector<std::shared_ptr<ArrayNode>>& out) {
  if (node.base != nullptr) out.push_back(node.base);
  if (node.producer != nullptr) {
    for (const Array& input : node.producer->inputs) out.push_back(ArrayAccess::node(input));
  }
}

// Whether running its producer is all that evaluating `node` takes: one apply over evaluated
// inputs (or host values).
bool producer_ready(const ArrayNode& node) {
  if (node.base != nullptr || node.producer == nullptr) return false;
  const auto& inputs = node.producer->inputs;
  return std::all_of(inputs.begin(), inputs.end(), [](const Array& input) {
    const ArrayNode& in = *ArrayAccess::node(input);
    return in.evaluated() || !in.host.empty();
  });
}

}  // namespace

void evaluate(const std::vector<std::shared_ptr<ArrayNode>>& nodes) {
  // The common case, the outputs of one apply over ready inputs, without building a graph.
  const std::shared_ptr<Primitive>* shared = nullptr;
  bool one_apply = true;
  for (const auto& node : nodes) {
    if (node->evaluated()) continue;
    if (!producer_ready(*node) || (shared != nullptr && node->producer != *shared)) {
      one_apply = false;
      break;
    }
    shared = &node->producer;
  }
  if (one_apply) {
    // A copy: running the producer clears the outputs' references to it.
    if (shared != nullptr) run_producer(std::shared_ptr<Primitive>(*shared));
    return;
  }
  // Post-order over the graph, without recursion: chains of applies can be long.
  std::vector<std::shared_ptr<ArrayNode>> order;
  std::unordered_set<const ArrayNode*> placed;
  std::vector<std::pair<std::shared_ptr<ArrayNode>, bool>> stack;
  stack.reserve(nodes.size());
  for (const auto& node : nodes) stack.emplace_back(node, false);
  std::vector<std::shared_ptr<ArrayNode>> deps;
  while (!stack.empty()) {
    auto [node, expanded] = stack.back();
    if (node->evaluated() || placed.contains(node.get())) {
      stack.pop_back();
      continue;
    }
    if (expanded) {
      stack.pop_back();
      placed.insert(node.get());
      order.push_back(std::move(node));
      continue;
    }
    stack.back().second = true;
    deps.clear();
    dependencies(*node, deps);
    for (auto& dep : deps) {
      if (!dep->evaluated() && !placed.contains(dep.get()))
        stack.emplace_back(std::move(dep), false);
    }
  }
  for (const auto& node : order) {
    if (node->evaluated()) continue;  // a sibling output of a primitive that already ran
    if (node->base != nullptr) {
      link_view(*node);
    } else if (node->producer != nullptr) {
      run_producer(node->producer);
    } else {
      materialize(*node);
    }
  }
}

void evaluate(const std::shared_ptr<ArrayNode>& node) {
  if (node->evaluated()) return;
  // The common case, one apply over evaluated inputs, without building a graph.
  if (producer_ready(*node)) {
    run_producer(node->producer);
    return;
  }
  evaluate(std::vector<std::shared_ptr<ArrayNode>>{node});
}

std::shared_ptr<ArrayNode> contiguous(const std::shared_ptr<ArrayNode>& node,
                                      const Stream& stream) {
  evaluate(node);
  if (node->row_contiguous()) return node;
  const int device = stream.device();
  cuda::ContextScope context(device);
  void* native = stream.native().native;
  void* source_stream = node->stream.native().native;
  auto copy = std::make_shared<ArrayNode>();
  copy->shape = node->shape;
  copy->strides = row_major_strides(node->shape);
  copy->dtype = node->dtype;
  copy->stream = stream;
  const std::size_t itemsize = size_of(node->dtype);
  const auto count = static_cast<unsigned long long>(node->size());
  copy->buffer = cuda::Buffer::allocate(count * itemsize, device, native,
                                        cuda::StreamAccess::state(stream)->reusable());
  if (count == 0) return copy;

  CopyLayout layout;
  layout.ndim = static_cast<int>(node->shape.size());
  for (int i = 0; i < layout.ndim; ++i) {
    layout.shape[i] = node->shape[i];
    layout.strides[i] = node->strides[i];
  }
  // The built-in, by its reserved name: a user's kernel may be called strided_copy_4 too.
  const Kernel& kernel = [&]() -> const Kernel& {
    const cuda::LaunchStreamHint hint(native);
    return device_registry(device).get(std::string(kBuiltinPrefix) + "strided_copy_" +
                                       std::to_string(itemsize));
  }();
  const std::uint64_t src = element_address(*node);
  const std::uint64_t dst = copy->buffer->address();
  constexpr unsigned kThreads = 256;
  const unsigned long long blocks =
      std::min<unsigned long long>((count + kThreads - 1) / kThreads, 65536);
  cuda::order_after(native, source_stream);
  kernel.launch(Dim3{static_cast<unsigned>(blocks)}, Dim3{kThreads}, 0, StreamRef{native}, src, dst,
                layout, count);
  // The source may be freed on its own stream: not before this copy has read it.
  cuda::order_after(source_stream, native);
  return copy;
}

std::vector<unsigned char> host_values(const std::shared_ptr<ArrayNode>& node) {
  const std::size_t itemsize = size_of(node->dtype);
  const auto count = static_cast<std::size_t>(node->size());
  if (count == 0) return {};
  const ArrayNode* root = node->base != nullptr ? node->base.get() : node.get();
  if (!root->host.empty() && root->producer == nullptr) {
    // Still on the host: gather the view's elements from the root's row-major values.
    std::vector<unsigned char> out(count * itemsize);
    const std::size_t ndim = node->shape.size();
    std::vector<std::int64_t> index(ndim, 0);
    for (std::size_t i = 0; i < count; ++i) {
      std::int64_t at = node->offset;
      for (std::size_t d = 0; d < ndim; ++d) at += index[d] * node->strides[d];
      std::memcpy(out.data() + i * itemsize, root->host.data() + at * itemsize, itemsize);
      for (std::size_t d = ndim; d-- > 0;) {
        if (++index[d] < node->shape[d]) break;
        index[d] = 0;
      }
    }
    return out;
  }
  auto dense = contiguous(node, node->stream);
  cuda::ContextScope context(dense->stream.device());
  std::vector<unsigned char> out(count * itemsize);
  cuda::copy_to_host(out.data(), element_address(*dense), out.size(),
                     dense->stream.native().native);
  return out;
}

}  // namespace kreg::array
