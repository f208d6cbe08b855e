#include <kreg/custom_kernel.hpp>
#include <kreg/registry.hpp>

#include "array/launch_support.hpp"
#include "array/node.hpp"
#include "core/hash.hpp"
#include "cuda/device.hpp"
#include "custom/custom_call.hpp"
#include "custom/names.hpp"
#include "custom/state.hpp"
#include "lex/lexer.hpp"
#include "lex/text.hpp"
#include "registry/source.hpp"

#include <algorithm>
#include <iostream>
#include <set>
#include <string>

namespace kreg {
namespace {

using custom::invalid;

std::string dims(Dim3 d) {
  return "(" + std::to_string(d.x) + ", " + std::to_string(d.y) + ", " + std::to_string(d.z) + ")";
}

// Every name the kernel's parameters and template parameters use must be distinct,
// including the `<input>_shape`-style names generated for each input.
void check_unique(const std::string& kernel, const std::vector<std::string>& inputs,
                  const std::vector<std::string>& outputs,
                  const std::vector<std::pair<std::string, TemplateArg>>& template_args) {
  std::set<std::string, std::less<>> seen;
  auto add = [&](const std::string& name, const char* role) {
    if (!seen.insert(name).second) {
      invalid(kernel, std::string(role) + " name '" + name +
                          "' repeats another name, or one kreg generates for an input");
    }
  };
  for (const std::string& name : inputs) add(name, "input");
  for (const std::string& name : outputs) add(name, "output");
  for (const auto& [name, value] : template_args) add(name, "template argument");
  for (const std::string& name : inputs) {
    for (const char* suffix : {"_shape", "_strides", "_ndim"}) {
      if (seen.contains(name + suffix)) {
        std::string what = "the name '";
        what.append(name).append(suffix).append("' clashes with the ").append(suffix + 1);
        invalid(kernel, what.append(" parameter kreg generates for input '" + name + "'"));
      }
    }
  }
}

void check_launch(const std::string& kernel, Dim3 grid, Dim3 group) {
  if (grid.x == 0 || grid.y == 0 || grid.z == 0) {
    invalid(kernel, "the grid " + dims(grid) + " is empty");
  }
  if (group.x == 0 || group.y == 0 || group.z == 0) {
    invalid(kernel, "the threadgroup " + dims(group) + " is empty");
  }
  // Every NVIDIA GPU kreg supports has these limits (compute capability 5.0 and later).
  const std::uint64_t threads = std::uint64_t{group.x} * group.y * group.z;
  if (threads > 1024 || group.x > 1024 || group.y > 1024 || group.z > 64) {
    invalid(kernel, "the threadgroup " + dims(group) + " has " + std::to_string(threads) +
                        " threads; the device allows at most 1024, and (1024, 1024, 64) per "
                        "dimension");
  }
  const unsigned sizes[3][2] = {{grid.x, group.x}, {grid.y, group.y}, {grid.z, group.z}};
  for (int d = 0; d < 3; ++d) {
    const std::uint64_t blocks = (std::uint64_t{sizes[d][0]} + sizes[d][1] - 1) / sizes[d][1];
    // Thread positions are 32-bit, as in Metal.
    if (blocks * sizes[d][1] > 0xffffffffULL || (d > 0 && blocks > 65535)) {
      invalid(kernel, "the grid " + dims(grid) + " needs too many threadgroups for the device");
    }
  }
}

custom::InputKind kind_of(const Array& input, bool subscripted) {
  if (input.ndim() == 0 && !subscripted) return custom::InputKind::Scalar;
  const std::int64_t n = input.size();
  return n > 0 && n < 8 ? custom::InputKind::Small : custom::InputKind::Pointer;
}

}  // namespace

CustomKernel::CustomKernel(std::string name, std::vector<std::string> input_names,
                           std::vector<std::string> output_names, std::string source,
                           CustomKernelOptions options)
    : state_(std::make_shared<custom::CustomKernelState>()) {
  if (!lex::is_identifier(name)) {
    throw Error(ErrorCode::InvalidArgument,
                "custom kernel name '" + name + "' is not a C++ identifier");
  }
  if (output_names.empty()) invalid(name, "at least one output name is required");
  for (const std::string& n : input_names) custom::check_name(n, "input", name);
  for (const std::string& n : output_names) custom::check_name(n, "output", name);
  check_unique(name, input_names, output_names, {});
  // Generated source goes through the registry's source reader, which would obey a kreg
  // directive: a body could then pass NVRTC any option, and some (--time=FILE) write files.
  auto refuse_directives = [&](const std::string& text, const char* part) {
    const std::string directive = registry::first_directive(text);
    if (!directive.empty()) {
      invalid(name, std::string("the ") + part + " holds the kreg directive '" + directive +
                        "'; directives belong to registered sources, not to custom kernels");
    }
  };
  refuse_directives(source, "body");
  refuse_directives(options.header, "header");
  state_->what = "custom kernel '" + name + "'";
  state_->name = std::move(name);
  state_->input_names = std::move(input_names);
  state_->output_names = std::move(output_names);
  for (const std::string& output : state_->output_names) {
    state_->output_whats.push_back(state_->what + ": output '" + output + "'");
  }
  state_->body = std::move(source);
  state_->options = std::move(options);
  const lex::Text body(state_->body);
  for (const std::string& input : state_->input_names) {
    state_->subscripted.push_back(body.names_before(input, "["));
  }
  // Creating the registry starts NVRTC in the background, so that the first eval finds
  // the compiler warm when the program does other work before it. Without a driver there
  // is no eval to prepare for.
  const Device device = current_device();
  if (device.type == Device::Type::Gpu && device.index < cuda::kMaxDevices &&
      cuda::driver_available()) {
    device_registry(device.index);
  }
}

const std::string& CustomKernel::name() const noexcept {
  return state_->name;
}

namespace {

std::shared_ptr<custom::Variant> variant_for(custom::CustomKernelState& state,
                                             const std::vector<Array>& inputs,
                                             const std::vector<OutputSpec>& outputs,
                                             const ApplyOptions& options) {
  const std::string& kernel = state.name;
  if (inputs.size() != state.input_names.size()) {
    invalid(kernel, std::to_string(inputs.size()) + " inputs given; the kernel was made with " +
                        std::to_string(state.input_names.size()));
  }
  if (outputs.size() != state.output_names.size()) {
    invalid(kernel, std::to_string(outputs.size()) + " outputs given; the kernel was made with " +
                        std::to_string(state.output_names.size()));
  }
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].valid()) invalid(kernel, "input '" + state.input_names[i] + "' is empty");
  }
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    array::checked_size(outputs[i].shape, state.output_whats[i].c_str());
    const Dtype d = outputs[i].dtype;
    // 32- and 64-bit integers and floats.
    if (state.options.atomic_outputs && (size_of(d) < 4 || d == Dtype::Complex64)) {
      invalid(kernel, "output '" + state.output_names[i] + "' is " + to_string(d) +
                          "; atomic outputs must be 32- or 64-bit integers or floats");
    }
  }

  // The variant key: whatever changes the generated source besides the fixed definition.
  std::string key;
  key.reserve(4 * inputs.size() + 2 * outputs.size() + 16 * options.template_args.size());
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const Array& input = inputs[i];
    const custom::InputKind kind = kind_of(input, state.subscripted[i]);
    key += static_cast<char>('a' + static_cast<int>(kind));
    key += static_cast<char>('A' + static_cast<int>(input.dtype()));
    if (kind == custom::InputKind::Small) key += static_cast<char>('0' + input.size());
  }
  key += '|';
  for (const OutputSpec& output : outputs)
    key += static_cast<char>('A' + static_cast<int>(output.dtype));
  for (const auto& [name, value] : options.template_args) {
    key.append("|").append(name).append("=").append(1, static_cast<char>('0' + value.index()));
    std::visit([&key](auto v) { key += std::to_string(static_cast<int>(v)); }, value);
  }

  std::lock_guard lock(state.mutex);
  for (const auto& variant : state.variants) {
    if (variant->key == key) return variant;
  }
  for (const auto& [name, value] : options.template_args) {
    custom::check_name(name, "template argument", kernel);
  }
  check_unique(kernel, state.input_names, state.output_names, options.template_args);

  custom::KernelSpec spec;
  spec.name = kernel;
  spec.body = state.body;
  spec.header = state.options.header;
  spec.atomic_outputs = state.options.atomic_outputs;
  spec.template_args = options.template_args;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    spec.inputs.push_back({state.input_names[i], inputs[i].dtype(),
                           kind_of(inputs[i], state.subscripted[i]), inputs[i].size()});
  }
  auto variant = std::make_shared<custom::Variant>();
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    spec.outputs.emplace_back(state.output_names[i], outputs[i].dtype);
    variant->output_dtypes.push_back(outputs[i].dtype);
  }
  const lex::Text body(spec.body);
  for (const custom::InputSpec& input : spec.inputs) {
    variant->kinds.push_back(input.kind);
    variant->params.push_back(custom::input_params(body, input));
  }
  // Named by content, so that two kernels with one name and different bodies (or inputs)
  // never share a source, an entry or a binary.
  const auto generate = [&]() {
    custom::Generated g = custom::generate(spec);
    g.entry = "custom_" + kernel + "_" + core::hex64(core::hash64(g.source + '\n' + g.expression));
    return g;
  };
  variant->key = std::move(key);
  variant->generated = generate();
  if (body.names("threadgroup")) {
    spec.dynamic_threadgroup = true;
    variant->dynamic = generate();
    if (variant->dynamic.carved_arrays == 0) variant->dynamic = {};
  }
  state.variants.push_back(variant);
  return variant;
}

}  // namespace

std::string CustomKernel::generated_source(const std::vector<Array>& inputs,
                                           const std::vector<OutputSpec>& outputs,
                                           const ApplyOptions& options) const {
  return variant_for(*state_, inputs, outputs, options)->generated.source;
}

std::string CustomKernel::cache_key(const std::vector<Array>& inputs,
                                    const std::vector<OutputSpec>& outputs,
                                    const ApplyOptions& options) const {
  return variant_for(*state_, inputs, outputs, options)->generated.entry;
}

std::vector<Array> CustomKernel::apply(const std::vector<Array>& inputs,
                                       const std::vector<OutputSpec>& outputs, Dim3 grid,
                                       Dim3 threadgroup, const ApplyOptions& options) const {
  Stream stream = current_stream();  // refuses under a CPU scope
  check_launch(state_->name, grid, threadgroup);
  std::shared_ptr<custom::Variant> variant = variant_for(*state_, inputs, outputs, options);
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (variant->kinds[i] == custom::InputKind::Pointer) {
      array::place_on_device(*array::ArrayAccess::node(inputs[i]), stream, state_->what,
                             state_->input_names[i]);
    }
  }
  if (options.verbose) {
    const custom::Generated& g = variant->generated;
    std::cout << "kreg: custom kernel '" << state_->name << "' (" << g.entry << ", " << g.expression
              << "):\n"
              << g.source << std::flush;
  }

  auto call = std::make_shared<custom::CustomCall>();
  call->kernel_name = state_->name;
  call->variant = std::move(variant);
  call->inputs = inputs;
  call->grid = grid;
  call->threadgroup = threadgroup;
  call->init_value = options.init_value;
  call->shared_memory = options.shared_memory;
  call->ensure_row_contiguous = state_->options.ensure_row_contiguous;
  call->stream = stream;

  std::vector<Array> result;
  result.reserve(outputs.size());
  call->outputs.reserve(outputs.size());
  for (const OutputSpec& spec : outputs) {
    result.push_back(array::pending_output(call, spec.shape, spec.dtype, stream));
    call->output_sizes.push_back(result.back().size());
  }
  return result;
}

Registry& custom_kernel_registry(int device) {
  return device_registry(device);
}

}  // namespace kreg
