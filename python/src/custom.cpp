// kreg.metal_kernel: MLX's `mx.fast.metal_kernel` signature over kreg::CustomKernel.
#include "bindings.hpp"
#include "dtypes.hpp"
#include "interop.hpp"

#include <kreg/custom_kernel.hpp>
#include <kreg/error.hpp>

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <climits>
#include <string>
#include <utility>
#include <vector>

namespace kreg::python {
namespace {

[[noreturn]] void invalid(const std::string& kernel, const std::string& why) {
  throw Error(ErrorCode::InvalidArgument, "custom kernel '" + kernel + "': " + why);
}

Shape to_shape(nb::handle value, const std::string& kernel) {
  if (nb::isinstance<nb::int_>(value)) return Shape{PyLong_AsLongLong(value.ptr())};
  const std::size_t n = nb::len(value);
  Shape shape(n);
  for (std::size_t i = 0; i < n; ++i) {
    const long long v = PyLong_AsLongLong(nb::object(value[i]).ptr());
    if (v == -1 && PyErr_Occurred() != nullptr) {
      PyErr_Clear();
      invalid(kernel, "an output shape must hold ints");
    }
    shape[i] = v;
  }
  return shape;
}

TemplateArg to_template_arg(nb::handle value, const std::string& kernel, const std::string& name) {
  if (nb::isinstance<nb::bool_>(value)) return nb::cast<bool>(value);
  if (nb::isinstance<nb::int_>(value)) {
    const long long v = PyLong_AsLongLong(value.ptr());
    if ((v == -1 && PyErr_Occurred() != nullptr) || v < INT_MIN || v > INT_MAX) {
      PyErr_Clear();
      invalid(kernel, "template argument '" + name + "' does not fit an int");
    }
    return static_cast<int>(v);
  }
  return to_dtype(value, "template argument '" + name + "'");
}

// The parts of a call that are not arrays.
struct CallArgs {
  std::vector<OutputSpec> outputs;
  ApplyOptions options;
};

CallArgs parse(const std::string& kernel, nb::handle output_shapes, nb::handle output_dtypes,
               nb::handle template_args, nb::handle init_value, std::size_t shared_memory) {
  CallArgs args;
  const std::size_t n = nb::len(output_shapes);
  if (nb::len(output_dtypes) != n) {
    invalid(kernel, std::to_string(n) + " output shapes but " +
                        std::to_string(nb::len(output_dtypes)) + " output dtypes");
  }
  args.outputs.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    args.outputs[i].shape = to_shape(nb::object(output_shapes[i]), kernel);
    args.outputs[i].dtype = to_dtype(nb::object(output_dtypes[i]), "output dtype");
  }
  if (!template_args.is_none()) {
    for (nb::handle item : template_args) {
      if (nb::len(item) != 2) invalid(kernel, "template arguments are (name, value) pairs");
      const auto name = nb::cast<std::string>(item[0]);
      args.options.template_args.emplace_back(name,
                                              to_template_arg(nb::object(item[1]), kernel, name));
    }
  }
  if (!init_value.is_none()) args.options.init_value = nb::cast<double>(init_value);
  args.options.shared_memory = shared_memory;
  return args;
}

// What `metal_kernel` returns: a callable with MLX's keyword arguments.
class MetalKernel {
 public:
  MetalKernel(std::string name, std::vector<std::string> input_names,
              std::vector<std::string> output_names, std::string source, std::string header,
              bool ensure_row_contiguous, bool atomic_outputs)
      : kernel_(std::move(name), std::move(input_names), std::move(output_names), std::move(source),
                CustomKernelOptions{std::move(header), ensure_row_contiguous, atomic_outputs}) {}

  nb::list call(nb::handle inputs, nb::handle output_shapes, nb::handle output_dtypes,
                nb::handle grid, nb::handle threadgroup, nb::handle template_args,
                nb::handle init_value, bool verbose, nb::handle stream,
                std::size_t shared_memory) const {
    const std::string& name = kernel_.name();
    CallScope scope(first_array(inputs), stream);
    const std::size_t n = nb::len(inputs);
    std::vector<Array> arrays;
    arrays.reserve(n);
    for (std::size_t i = 0; i < n; ++i)
      arrays.push_back(scope.input(nb::object(inputs[i]), "input"));
    const CallArgs args =
        parse(name, output_shapes, output_dtypes, template_args, init_value, shared_memory);
    const Dim3 g = to_dim3(grid, "custom kernel", name, "grid");
    const Dim3 t = to_dim3(threadgroup, "custom kernel", name, "threadgroup");
    if (verbose) {
      nb::print(nb::str(kernel_.generated_source(arrays, args.outputs, args.options).c_str()));
    }
    std::vector<Array> outputs = kernel_.apply(arrays, args.outputs, g, t, args.options);
    {
      nb::gil_scoped_release release;  // a first call compiles; every call launches
      kreg::eval(outputs);
    }
    nb::list result;
    for (const Array& out : outputs) result.append(scope.output(out));
    return result;
  }

  std::string source(nb::handle inputs, nb::handle output_shapes, nb::handle output_dtypes,
                     nb::handle template_args, nb::handle init_value, bool key) const {
    CallScope scope(first_array(inputs), nb::none());
    std::vector<Array> arrays;
    for (nb::handle item : inputs) arrays.push_back(scope.input(item, "input"));
    const CallArgs args =
        parse(kernel_.name(), output_shapes, output_dtypes, template_args, init_value, 0);
    return key ? kernel_.cache_key(arrays, args.outputs, args.options)
               : kernel_.generated_source(arrays, args.outputs, args.options);
  }

  const std::string& name() const { return kernel_.name(); }

 private:
  CustomKernel kernel_;
};

constexpr const char* kMetalKernelDoc =
    "A custom kernel from a body string, with the signature of MLX's mx.fast.metal_kernel, "
    "so that MLX code ports by changing the import.\n\n"
    "The body is CUDA C++ or Metal-flavoured C++ (thread_position_in_grid, simd_sum, "
    "threadgroup_barrier, metal::exp, elem_to_loc, ...) over the named inputs and outputs: an "
    "input `a` is `const T* a`, with `a_shape`, `a_strides` and `a_ndim` where the body names "
    "them; an output `out` is `T* out` (row-major), or an atomic pointer with atomic_outputs. "
    "kreg writes the signature, compiles the kernel with NVRTC when it is first called and "
    "caches the binary in memory and on disk. See docs/python.md and docs/custom_kernels.md.";

constexpr const char* kCallDoc =
    "Runs the kernel over `grid` threads in threadgroups of `threadgroup` (1 to 3 extents "
    "each) and returns one array per output, of the inputs' framework (torch in, torch out; "
    "CuPy in, CuPy out; JAX in, JAX out; numpy in, numpy out; else kreg.Array), sharing "
    "memory with kreg's result.\n\n"
    "inputs: arrays of any framework, or Python numbers. output_shapes, output_dtypes: one "
    "per output; dtypes as names ('float32'), kreg, numpy, torch or JAX dtypes. template: "
    "(name, value) pairs; a dtype becomes a typename, an int an int, a bool a bool. "
    "init_value: fill every output with it first. verbose: print the generated source. "
    "stream: run there (an int CUstream, kreg.Stream, torch or CuPy stream); by default the "
    "first input's framework's current stream. shared_memory: dynamic shared memory per "
    "threadgroup, in bytes.\n\n"
    "Raises InvalidArgument for bad arguments, CompileError (with the numbered source) when "
    "the body does not compile. The GIL is released while compiling and launching.";

}  // namespace

void bind_custom(nb::module_& m) {
  nb::class_<MetalKernel>(m, "MetalKernel", kMetalKernelDoc)
      .def("__call__", &MetalKernel::call, nb::kw_only(), nb::arg("inputs"),
           nb::arg("output_shapes"), nb::arg("output_dtypes"), nb::arg("grid"),
           nb::arg("threadgroup"), nb::arg("template") = nb::none(),
           nb::arg("init_value") = nb::none(), nb::arg("verbose") = false,
           nb::arg("stream") = nb::none(), nb::arg("shared_memory") = 0, kCallDoc)
      .def(
          "source",
          [](const MetalKernel& k, nb::handle inputs, nb::handle shapes, nb::handle dtypes,
             nb::handle tmpl,
             nb::handle init) { return k.source(inputs, shapes, dtypes, tmpl, init, false); },
          nb::kw_only(), nb::arg("inputs"), nb::arg("output_shapes"), nb::arg("output_dtypes"),
          nb::arg("template") = nb::none(), nb::arg("init_value") = nb::none(),
          "The CUDA C++ a call with these arguments compiles, without running anything.")
      .def(
          "cache_key",
          [](const MetalKernel& k, nb::handle inputs, nb::handle shapes, nb::handle dtypes,
             nb::handle tmpl,
             nb::handle init) { return k.source(inputs, shapes, dtypes, tmpl, init, true); },
          nb::kw_only(), nb::arg("inputs"), nb::arg("output_shapes"), nb::arg("output_dtypes"),
          nb::arg("template") = nb::none(), nb::arg("init_value") = nb::none(),
          "The registry entry a call with these arguments compiles: 'custom_<name>_<hash>'.")
      .def_prop_ro("name", &MetalKernel::name);

  m.def(
      "metal_kernel",
      [](std::string name, std::vector<std::string> input_names,
         std::vector<std::string> output_names, std::string source, std::string header,
         bool ensure_row_contiguous, bool atomic_outputs) {
        return MetalKernel(std::move(name), std::move(input_names), std::move(output_names),
                           std::move(source), std::move(header), ensure_row_contiguous,
                           atomic_outputs);
      },
      nb::arg("name"), nb::arg("input_names"), nb::arg("output_names"), nb::arg("source"),
      nb::arg("header") = "", nb::arg("ensure_row_contiguous") = true,
      nb::arg("atomic_outputs") = false, kMetalKernelDoc);
}

}  // namespace kreg::python
