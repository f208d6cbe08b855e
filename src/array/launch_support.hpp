#pragma once
// What every primitive that launches a kernel over arrays does with its inputs and outputs:
// place inputs on the launch GPU, make its outputs pending, order the launch after the
// streams that produced the inputs, allocate the outputs and hand them over. Shared by custom
// kernels and ops.

#include <kreg/types.hpp>

#include "array/node.hpp"
#include "array/parameters.hpp"
#include "cuda/context.hpp"
#include "cuda/memory.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace kreg {
class Kernel;
}  // namespace kreg

namespace kreg::array {

// At apply time: an input read through a pointer must be in the memory of `stream`'s GPU.
// Values still on the host move to it; anything on another GPU is an InvalidArgument that
// names the input, "<owner>: input '<input>'" (built only then: this is on every apply).
void place_on_device(ArrayNode& node, const Stream& stream, std::string_view owner,
                     std::string_view input);

// At apply time: a pending row-major output of `producer` on `stream`, added to its outputs.
Array pending_output(const std::shared_ptr<Primitive>& producer, Shape shape, Dtype dtype,
                     const Stream& stream);

// At launch time, for one launch on one stream.
class LaunchInputs {
 public:
  explicit LaunchInputs(const Stream& stream) : stream_(stream) {}

  // Evaluates `input` (a row-major copy when `row_major` and it is not) and orders the launch
  // after its producer. Returns the node the kernel reads, valid until this object dies.
  const ArrayNode& pointer(const std::shared_ptr<ArrayNode>& input, bool row_major);
  // After the launch: the producers' streams wait for it before reusing the memory.
  void launched();

 private:
  const Stream& stream_;
  std::vector<std::shared_ptr<ArrayNode>> copies_;
  std::vector<void*> producers_;
};

// The address of a node's element 0.
std::uint64_t element_address(const ArrayNode& node);

// A row-major output of `count` elements on `stream`.
std::shared_ptr<cuda::Buffer> allocate_output(std::int64_t count, Dtype dtype,
                                              const Stream& stream);

// One primitive's launch, in the steps every primitive takes them: the stream's GPU is current
// for the object's life; inputs and outputs are added in any order the parameters need; the
// launch orders the inputs' producers after it; `publish` hands the outputs over.
class ArrayLaunch {
 public:
  ArrayLaunch(const Stream& stream, std::size_t outputs);

  // An input read through a pointer (see LaunchInputs::pointer).
  const ArrayNode& input(const std::shared_ptr<ArrayNode>& node, bool row_major) {
    return inputs_.pointer(node, row_major);
  }
  // Allocates the next output, `count` elements of `dtype`.
  cuda::Buffer& output(std::int64_t count, Dtype dtype);
  const cuda::Buffer& output_buffer(std::size_t index) const { return *buffers_[index]; }
  Parameters& parameters() { return params_; }

  // Launches `kernel` with the parameters; with `sizes`, checked against its parameter list
  // first (Kernel::launch_checked).
  void launch(const Kernel& kernel, Dim3 grid, Dim3 block, std::size_t shared_bytes,
              const std::size_t* sizes = nullptr, std::size_t count = 0);
  // Each output still alive (in output order, null for the others) gets its buffer.
  void publish(const std::vector<std::shared_ptr<ArrayNode>>& live);

 private:
  const Stream& stream_;
  cuda::ContextScope context_;
  LaunchInputs inputs_;
  Parameters params_;
  std::vector<std::shared_ptr<cuda::Buffer>> buffers_;
};

}  // namespace kreg::array
