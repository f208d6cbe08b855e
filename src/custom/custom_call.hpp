#pragma once
// One pending `CustomKernel::apply`: compiles the kernel if needed and launches it once
// for all of its outputs.

#include <kreg/custom_kernel.hpp>

#include "array/node.hpp"
#include "custom/state.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kreg::custom {

class CustomCall final : public array::Primitive {
 public:
  void run(const std::vector<std::shared_ptr<array::ArrayNode>>& live) override;

  std::string kernel_name;
  std::shared_ptr<Variant> variant;
  Dim3 grid;
  Dim3 threadgroup;
  std::vector<std::int64_t> output_sizes;  // elements
  std::optional<double> init_value;
  std::size_t shared_memory = 0;
  bool ensure_row_contiguous = true;
  Stream stream = Stream::default_stream(0);
};

}  // namespace kreg::custom
