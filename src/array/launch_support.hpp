#pragma once
// What every primitive that launches a kernel over arrays does with its inputs and outputs:
// place inputs on the launch GPU, order the launch after the streams that produced them,
// and allocate outputs. Shared by custom kernels and ops.

#include "array/node.hpp"
#include "cuda/memory.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace kreg::detail {

// At apply time: an input read through a pointer must be in the memory of `stream`'s GPU.
// Values still on the host move to it; anything on another GPU is an InvalidArgument that
// names the input, "<owner>: input '<input>'" (built only then: this is on every apply).
void place_on_device(ArrayNode& node, const Stream& stream, std::string_view owner,
                     std::string_view input);

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

}  // namespace kreg::detail
