#include "ops/kernel_call.hpp"

#include <kreg/registry.hpp>

#include "array/launch_support.hpp"
#include "array/parameters.hpp"
#include "cuda/context.hpp"

namespace kreg::ops {

void KernelCall::input(const Array& array) {
  Arg arg;
  arg.kind = Arg::Kind::Input;
  arg.index = inputs.size();
  inputs.push_back(array);
  args_.push_back(arg);
}

void KernelCall::output(std::size_t index) {
  Arg arg;
  arg.kind = Arg::Kind::Output;
  arg.index = index;
  args_.push_back(arg);
}

void KernelCall::null() {
  Arg arg;
  arg.kind = Arg::Kind::Null;
  args_.push_back(arg);
}

std::vector<Array> KernelCall::launch(const std::shared_ptr<KernelCall>& call,
                                      const std::vector<std::pair<Shape, Dtype>>& outputs) {
  call->stream_ = current_stream();  // refuses under a CPU scope
  for (std::size_t i = 0; i < call->inputs.size(); ++i) {
    detail::place_on_device(*call->inputs[i].node(), call->stream_, call->entry_,
                            std::to_string(i));
  }
  std::vector<Array> result;
  result.reserve(outputs.size());
  for (const auto& [shape, dtype] : outputs) {
    auto node = std::make_shared<detail::ArrayNode>();
    node->shape = shape;
    node->strides = detail::row_major_strides(shape);
    node->dtype = dtype;
    node->stream = call->stream_;
    node->producer = call;
    call->outputs.push_back(node);
    call->output_specs_.emplace_back(node->size(), dtype);
    result.emplace_back(std::move(node));
  }
  return result;
}

void KernelCall::run(const std::vector<std::shared_ptr<detail::ArrayNode>>& live) {
  const int device = stream_.device();
  cuda::ContextScope context(device);
  std::vector<std::shared_ptr<cuda::Buffer>> buffers;
  buffers.reserve(output_specs_.size());
  for (const auto& [count, dtype] : output_specs_) {
    buffers.push_back(detail::allocate_output(count, dtype, stream_));
  }
  if (grid_.x > 0) {  // zero rows or elements: nothing to launch
    const Kernel& kernel = device_registry(device).get(builtin_, constants_);
    detail::LaunchInputs launch_inputs(stream_);
    std::vector<const detail::ArrayNode*> nodes;
    nodes.reserve(inputs.size());
    for (const Array& input : inputs) nodes.push_back(&launch_inputs.pointer(input.node(), true));
    detail::Parameters params;
    for (const Arg& arg : args_) {
      switch (arg.kind) {
        case Arg::Kind::Input: params.add(detail::element_address(*nodes[arg.index])); break;
        case Arg::Kind::Output: params.add(buffers[arg.index]->address()); break;
        case Arg::Kind::Null: params.add(std::uint64_t{0}); break;
        case Arg::Kind::Value: params.add(arg.bytes, arg.size, arg.size); break;
      }
    }
    kernel.launch_raw(grid_, block_, 0, stream_.native(), params.pointers());
    launch_inputs.launched();
  }
  for (std::size_t i = 0; i < live.size(); ++i) {
    if (live[i] != nullptr) live[i]->buffer = buffers[i];
  }
}

}  // namespace kreg::ops
