#include "ops/kernel_call.hpp"

#include <kreg/registry.hpp>

#include "array/launch_support.hpp"
#include "cuda/capture.hpp"
#include "cuda/dependent_launch.hpp"
#include "cuda/tensor_map.hpp"

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
    row_major_.push_back(p.row_major_);
  } else {
    arg.kind = Arg::Kind::Null;
  }
  args_.push_back(arg);
}

void KernelCall::map(const TensorMapOf& m) {
  Arg arg;
  arg.kind = Arg::Kind::Map;
  arg.index = maps_.size();
  maps_.push_back(Map{inputs.size(), m.input->dtype(), m});
  maps_.back().geometry.input = nullptr;  // the array is kept in `inputs`
  inputs.push_back(*m.input);
  row_major_.push_back(m.row_major);
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

void KernelCall::then(std::shared_ptr<KernelCall> next) {
  // The follower's inputs become this call's, so that they are placed and evaluated before
  // the pair launches; its arguments then name them by their index here.
  for (Arg& arg : next->args_) {
    if (arg.kind == Arg::Kind::Map) {
      throw Error(ErrorCode::InvalidArgument,
                  "'" + next->entry_ + "' follows '" + entry_ + "' but takes a tensor map");
    }
    if (arg.kind != Arg::Kind::Input) continue;
    inputs.push_back(next->inputs[arg.index]);
    row_major_.push_back(next->row_major_[arg.index]);
    arg.index = inputs.size() - 1;
  }
  next->inputs.clear();
  next->row_major_.clear();
  next_ = std::move(next);
}

void KernelCall::launch_next(const Kernel& kernel, const array::ArrayLaunch& launch,
                             const std::vector<const array::ArrayNode*>& nodes) const {
  array::Parameters params;
  for (const Arg& arg : next_->args_) {
    switch (arg.kind) {
      case Arg::Kind::Input: params.add(array::element_address(*nodes[arg.index])); break;
      case Arg::Kind::Output: params.add(launch.output_buffer(arg.index).address()); break;
      case Arg::Kind::Null: params.add(std::uint64_t{0}); break;
      case Arg::Kind::Value: params.add(arg.bytes, arg.size, arg.size); break;
      case Arg::Kind::Map: break;  // refused by then()
    }
  }
  cuda::launch_dependent(kernel, next_->grid_, next_->block_, next_->shared_bytes_,
                         stream_.native(), params.pointers(), next_->sizes_, next_->count_);
}

void KernelCall::run(const std::vector<std::shared_ptr<array::ArrayNode>>& live) {
  const int device = stream_.device();
  array::ArrayLaunch launch(stream_, output_specs_.size());
  const Kernel* kernel = nullptr;
  const Kernel* next = nullptr;
  if (grid_.x > 0) {  // zero rows or elements: nothing to launch
    // Before the outputs: a miss refused during capture leaves nothing allocated.
    const cuda::LaunchStreamHint hint(stream_.native().native);
    kernel = &device_registry(device).get(builtin_, constants_);
    if (next_ != nullptr) next = &device_registry(device).get(next_->builtin_, next_->constants_);
  }
  for (const auto& [count, dtype] : output_specs_) launch.output(count, dtype);
  if (kernel != nullptr) {
    std::vector<const array::ArrayNode*> nodes;
    nodes.reserve(inputs.size());
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      nodes.push_back(&launch.input(array::ArrayAccess::node(inputs[i]), row_major_[i]));
    }
    array::Parameters& params = launch.parameters();
    for (const Arg& arg : args_) {
      switch (arg.kind) {
        case Arg::Kind::Input: params.add(array::element_address(*nodes[arg.index])); break;
        case Arg::Kind::Output: params.add(launch.output_buffer(arg.index).address()); break;
        case Arg::Kind::Null: params.add(std::uint64_t{0}); break;
        case Arg::Kind::Value: params.add(arg.bytes, arg.size, arg.size); break;
        case Arg::Kind::Map: {
          const Map& m = maps_[arg.index];
          cuda::TensorMap2d map;
          map.address = array::element_address(*nodes[m.input]);
          map.element_bytes = static_cast<unsigned>(size_of(m.dtype));
          map.bfloat16 = m.dtype == Dtype::BFloat16;
          map.inner = m.geometry.inner;
          map.outer = m.geometry.outer;
          map.row_bytes = m.geometry.row * map.element_bytes;
          map.box_inner = m.geometry.box_inner;
          map.box_outer = m.geometry.box_outer;
          map.depth = m.geometry.depth;
          map.slice_bytes = m.geometry.slice * map.element_bytes;
          contracts::TensorMap encoded{};
          cuda::encode_tensor_map(map, &encoded);
          params.add(&encoded, sizeof(encoded), alignof(contracts::TensorMap));
          break;
        }
      }
    }
    // A source registered in the built-in's place may take other parameters than the
    // contract: that is an InvalidArgument naming the kernel, not a launch that misreads.
    launch.launch(*kernel, grid_, block_, shared_bytes_, sizes_, count_);
    if (next != nullptr) launch_next(*next, launch, nodes);
  }
  launch.publish(live);
}

}  // namespace kreg::ops
