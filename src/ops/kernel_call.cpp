#include "ops/kernel_call.hpp"

#include <kreg/registry.hpp>

#include "array/launch_support.hpp"
#include "cuda/capture.hpp"

namespace kreg::ops {

void KernelCall::pointer(const Pointer& p) {
  Arg arg;
  if (p.output_.has_value()) {
    arg.kind = Arg::Kind::Output;
    arg.index = *p.output_;
  } else if (p.input_ != nullptr) {
    arg.kind = Arg::Kind::Input;
    arg.index = inputs.size();
    inputs.push_back(*p.input_);
  } else {
    arg.kind = Arg::Kind::Null;
  }
  args_.push_back(arg);
}

std::vector<Array> KernelCall::launch(const std::shared_ptr<KernelCall>& call,
                                      const std::vector<std::pair<Shape, Dtype>>& outputs) {
  call->stream_ = current_stream();  // refuses under a CPU scope
  for (std::size_t i = 0; i < call->inputs.size(); ++i) {
    array::place_on_device(*array::ArrayAccess::node(call->inputs[i]), call->stream_, call->entry_,
                           std::to_string(i));
  }
  std::vector<Array> result;
  result.reserve(outputs.size());
  call->outputs.reserve(outputs.size());
  for (const auto& [shape, dtype] : outputs) {
    result.push_back(array::pending_output(call, shape, dtype, call->stream_));
    call->output_specs_.emplace_back(result.back().size(), dtype);
  }
  return result;
}

void KernelCall::run_in_place(const std::shared_ptr<KernelCall>& call) {
  launch(call, {});
  call->run({});
}

void KernelCall::run(const std::vector<std::shared_ptr<array::ArrayNode>>& live) {
  const int device = stream_.device();
  array::ArrayLaunch launch(stream_, output_specs_.size());
  const Kernel* kernel = nullptr;
  if (grid_.x > 0) {  // zero rows or elements: nothing to launch
    // Before the outputs: a miss refused during capture leaves nothing allocated.
    const cuda::LaunchStreamHint hint(stream_.native().native);
    kernel = &device_registry(device).get(builtin_, constants_);
  }
  for (const auto& [count, dtype] : output_specs_) launch.output(count, dtype);
  if (kernel != nullptr) {
    std::vector<const array::ArrayNode*> nodes;
    nodes.reserve(inputs.size());
    for (const Array& input : inputs)
      nodes.push_back(&launch.input(array::ArrayAccess::node(input), true));
    array::Parameters& params = launch.parameters();
    for (const Arg& arg : args_) {
      switch (arg.kind) {
        case Arg::Kind::Input: params.add(array::element_address(*nodes[arg.index])); break;
        case Arg::Kind::Output: params.add(launch.output_buffer(arg.index).address()); break;
        case Arg::Kind::Null: params.add(std::uint64_t{0}); break;
        case Arg::Kind::Value: params.add(arg.bytes, arg.size, arg.size); break;
      }
    }
    // A source registered in the built-in's place may take other parameters than the
    // contract: that is an InvalidArgument naming the kernel, not a launch that misreads.
    launch.launch(*kernel, grid_, block_, 0, sizes_, count_);
  }
  launch.publish(live);
}

}  // namespace kreg::ops
