#pragma once
// Writes the CUDA C++ of a custom kernel from its body and the kinds of its arguments.
// Pure text: no GPU, no compiler.

#include "lex/text.hpp"

#include <kreg/custom_kernel.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kreg::custom {

// How an input reaches the kernel.
enum class InputKind : unsigned char {
  Pointer,  // const T* __restrict__
  Small,    // fewer than 8 elements: by value, in the parameter space
  Scalar,   // 0-d: a plain value
};

struct InputSpec {
  std::string_view name;
  Dtype dtype = Dtype::Float32;
  InputKind kind = InputKind::Pointer;
  std::int64_t count = 0;  // elements, for Small
};

struct KernelSpec {
  std::string_view name;
  std::string_view body;
  std::string_view header;
  bool atomic_outputs = false;
  // The body's threadgroup arrays go to dynamic shared memory (custom_threadgroup.cuh), for
  // kernels whose arrays do not fit the 48 KiB a kernel may hold statically.
  bool dynamic_threadgroup = false;
  std::vector<InputSpec> inputs;
  std::vector<std::pair<std::string_view, Dtype>> outputs;
  std::vector<std::pair<std::string, TemplateArg>> template_args;
};

// Which generated parameters an input has: those the body names (none for a 0-d input).
struct InputParams {
  bool shape = false;
  bool strides = false;
  bool ndim = false;
};
InputParams input_params(const lex::Text& body, const InputSpec& input);

struct Generated {
  std::string entry;  // for the registry, named by content; set by the custom kernel
  std::string source;
  std::string expression;         // the name expression to instantiate, e.g. "kreg_custom_f<float>"
  std::size_t carved_arrays = 0;  // with dynamic_threadgroup: the arrays moved there
};

Generated generate(const KernelSpec& spec);

}  // namespace kreg::custom
