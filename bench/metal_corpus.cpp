// Measures a folder of custom-kernel bodies written for MLX's metal_kernel: how many compile
// through kreg::CustomKernel unchanged and, on a GPU, how many run. One JSON file a kernel (the
// format is in docs/custom_kernels.md, "Measuring a set of bodies").
//
//   kreg_metal_corpus DIR [--arch sm_90] [--timeout S]
//
// With a GPU each kernel runs in a process of its own (this executable with --case FILE), so a
// body that faults cannot take the others with it; inputs are random, outputs poisoned with NaN
// unless the call gives init_value. Without a GPU each kernel is compiled for --arch.
#include <kreg/kreg.hpp>

#include <nlohmann/json.hpp>

#include "array/dtype_info.hpp"
#include "cuda/device.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

// MLX's dtype names, with the prefixes and aliases call sites write.
kreg::Dtype dtype_named(std::string name) {
  for (const char* prefix : {"mx.", "mlx.core.", "np.", "torch."}) {
    if (name.rfind(prefix, 0) == 0) name = name.substr(std::strlen(prefix));
  }
  static const std::pair<const char*, kreg::Dtype> kNames[] = {
      {"bool", kreg::Dtype::Bool},          {"bool_", kreg::Dtype::Bool},
      {"int8", kreg::Dtype::Int8},          {"int16", kreg::Dtype::Int16},
      {"int32", kreg::Dtype::Int32},        {"int", kreg::Dtype::Int32},
      {"int64", kreg::Dtype::Int64},        {"uint8", kreg::Dtype::UInt8},
      {"uint16", kreg::Dtype::UInt16},      {"uint32", kreg::Dtype::UInt32},
      {"uint", kreg::Dtype::UInt32},        {"uint64", kreg::Dtype::UInt64},
      {"float16", kreg::Dtype::Float16},    {"half", kreg::Dtype::Float16},
      {"bfloat16", kreg::Dtype::BFloat16},  {"float32", kreg::Dtype::Float32},
      {"float", kreg::Dtype::Float32},      {"float64", kreg::Dtype::Float64},
      {"complex64", kreg::Dtype::Complex64}};
  for (const auto& [text, dtype] : kNames) {
    if (name == text) return dtype;
  }
  throw std::invalid_argument("kreg has no dtype '" + name + "'");
}

bool is_float(kreg::Dtype d) {
  return d == kreg::Dtype::Float16 || d == kreg::Dtype::BFloat16 || d == kreg::Dtype::Float32 ||
         d == kreg::Dtype::Float64 || d == kreg::Dtype::Complex64;
}

kreg::Shape shape_of(const json& spec) {
  kreg::Shape shape;
  for (const json& extent : spec.at("shape")) shape.push_back(extent.get<std::int64_t>());
  return shape;
}

// `values` as elements of `dtype`, packed. A complex element gets an imaginary part too, so
// that kernels reading it see more than zeros.
std::vector<unsigned char> pack(const std::vector<double>& values, kreg::Dtype dtype) {
  const std::size_t width = kreg::size_of(dtype);
  std::vector<unsigned char> bytes(values.size() * width);
  for (std::size_t i = 0; i < values.size(); ++i) {
    unsigned char* out = bytes.data() + i * width;
    if (dtype == kreg::Dtype::Complex64) {
      const std::complex<float> c(static_cast<float>(values[i]),
                                  static_cast<float>(-values[i] / 2));
      std::memcpy(out, &c, sizeof(c));
    } else {
      kreg::write_element(values[i], dtype, out);
    }
  }
  return bytes;
}

// An input as the JSON describes it: "value" for a 0-d input, "values" for exact contents,
// "int_range" [lo, hi) for integers that index something; else random (floats in [-1, 1],
// integers any bits of their type).
kreg::Array make_input(const json& spec, std::mt19937_64& rng) {
  const kreg::Dtype dtype = dtype_named(spec.at("dtype").get<std::string>());
  const kreg::Shape shape = shape_of(spec);
  std::int64_t count = 1;
  for (std::int64_t extent : shape) count *= extent;
  std::vector<double> values(static_cast<std::size_t>(count));
  const auto number = [](const json& v) {
    return v.is_boolean() ? double(v.get<bool>()) : v.get<double>();
  };
  if (spec.contains("value")) {
    std::fill(values.begin(), values.end(), number(spec["value"]));
  } else if (spec.contains("values")) {
    const json& given = spec["values"];
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = number(given[i % given.size()]);
  } else if (spec.contains("int_range")) {
    std::uniform_int_distribution<std::int64_t> dist(spec["int_range"][0].get<std::int64_t>(),
                                                     spec["int_range"][1].get<std::int64_t>() - 1);
    for (double& v : values) v = static_cast<double>(dist(rng));
  } else if (is_float(dtype)) {
    std::uniform_real_distribution<double> dist(-1.0, 1.0);
    for (double& v : values) v = dist(rng);
  } else {
    // Any bits of the type (52 at most, which a double holds exactly), signed or not.
    const int bits = std::min(static_cast<int>(kreg::size_of(dtype) * 8), 52);
    const bool is_signed =
        dtype == kreg::Dtype::Int8 || dtype == kreg::Dtype::Int16 || dtype == kreg::Dtype::Int32;
    const double offset = is_signed ? std::ldexp(1.0, bits - 1) : 0.0;
    for (double& v : values) {
      const std::uint64_t word = rng() >> (64 - bits);
      v = dtype == kreg::Dtype::Bool ? static_cast<double>(word & 1)
                                     : static_cast<double>(word) - offset;
    }
  }
  const std::vector<unsigned char> bytes = pack(values, dtype);
  return kreg::Array::from_bytes(bytes.data(), values.size(), dtype, shape);
}

kreg::Dim3 dim3_of(const json& extents) {
  kreg::Dim3 d{1, 1, 1};
  if (!extents.empty()) d.x = extents[0].get<unsigned>();
  if (extents.size() > 1) d.y = extents[1].get<unsigned>();
  if (extents.size() > 2) d.z = extents[2].get<unsigned>();
  return d;
}

struct Case {
  kreg::CustomKernel kernel;
  std::vector<kreg::Array> inputs;
  std::vector<kreg::OutputSpec> outputs;
  kreg::ApplyOptions options;
  kreg::Dim3 grid;
  kreg::Dim3 threadgroup;
};

Case read_case(const fs::path& file) {
  std::ifstream in(file);
  const json c = json::parse(in);
  kreg::CustomKernelOptions definition;
  definition.header = c.value("header", "");
  definition.ensure_row_contiguous = c.value("ensure_row_contiguous", true);
  definition.atomic_outputs = c.value("atomic_outputs", false);
  std::mt19937_64 rng(7);
  std::vector<kreg::Array> inputs;
  for (const json& spec : c.at("inputs")) inputs.push_back(make_input(spec, rng));
  std::vector<kreg::OutputSpec> outputs;
  for (const json& spec : c.at("outputs")) {
    outputs.push_back({shape_of(spec), dtype_named(spec.at("dtype").get<std::string>())});
  }
  kreg::ApplyOptions options;
  if (c.contains("template") && c["template"].is_array()) {
    for (const json& arg : c["template"]) {
      const std::string name = arg[0].get<std::string>();
      if (arg[1].is_boolean()) {
        options.template_args.emplace_back(name, arg[1].get<bool>());
      } else if (arg[1].is_number_integer()) {
        const auto value = arg[1].get<std::int64_t>();
        if (value < INT32_MIN || value > INT32_MAX) {
          throw std::invalid_argument("template argument " + name + " does not fit an int");
        }
        options.template_args.emplace_back(name, static_cast<int>(value));
      } else {
        options.template_args.emplace_back(name, dtype_named(arg[1].get<std::string>()));
      }
    }
  }
  if (c.contains("init_value") && !c["init_value"].is_null()) {
    options.init_value = c["init_value"].get<double>();
  } else if (!definition.atomic_outputs) {
    options.init_value = std::nan("");  // poison: an element the kernel never writes shows
  }
  return Case{kreg::CustomKernel(c.at("name").get<std::string>(),
                                 c.at("input_names").get<std::vector<std::string>>(),
                                 c.at("output_names").get<std::vector<std::string>>(),
                                 c.at("source").get<std::string>(), definition),
              std::move(inputs),
              std::move(outputs),
              std::move(options),
              dim3_of(c.at("grid")),
              dim3_of(c.at("threadgroup"))};
}

double now_ms() {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// The first line of a message, shortened for the table.
std::string first_line(const std::string& text) {
  std::string line = text.substr(0, text.find('\n'));
  const std::size_t error = text.find("error: ");
  if (error != std::string::npos) line = text.substr(error, text.find('\n', error) - error);
  return line.size() > 150 ? line.substr(0, 150) + "..." : line;
}

// Without a GPU: compile the generated source for `arch` through a registry.
std::string compile_only(const Case& c, kreg::Registry& registry, int index) {
  const std::string source = c.kernel.generated_source(c.inputs, c.outputs, c.options);
  const bool scoped = source.find("\nnamespace kreg_metal {\n") != std::string::npos;
  std::string expression =
      std::string(scoped ? "kreg_metal::" : "") + "kreg_custom_" + c.kernel.name();
  if (!c.options.template_args.empty()) {
    // The instantiation of the generated template, spelled as kreg's code generation does.
    expression += '<';
    for (std::size_t i = 0; i < c.options.template_args.size(); ++i) {
      const kreg::TemplateArg& arg = c.options.template_args[i].second;
      if (i > 0) expression += ", ";
      if (const auto* d = std::get_if<kreg::Dtype>(&arg)) {
        expression += kreg::array::dtype_info(*d).cuda;
      } else if (const auto* b = std::get_if<bool>(&arg)) {
        expression += *b ? "true" : "false";
      } else {
        expression += std::to_string(std::get<int>(arg));
      }
    }
    expression += '>';
  }
  const std::string entry = "corpus_" + std::to_string(index);
  kreg::SourceOptions options;
  options.entries.push_back(entry + "=" + expression);
  registry.register_source(entry, source, options);
  registry.compile(entry);
  return {};
}

// With a GPU, in this process: compile, run, and count outputs left NaN.
int run_case(const fs::path& file) {
  try {
    Case c = read_case(file);
    const double start = now_ms();
    std::vector<kreg::Array> out =
        c.kernel.apply(c.inputs, c.outputs, c.grid, c.threadgroup, c.options);
    kreg::eval(out);
    std::int64_t unwritten = 0;
    std::int64_t total = 0;
    for (const kreg::Array& o : out) {
      std::vector<unsigned char> bytes(o.nbytes());
      o.copy_to_host(bytes.data());
      total += o.size();
      for (std::int64_t i = 0; i < o.size(); ++i) {
        double v = 0;
        const unsigned char* p = bytes.data() + i * kreg::size_of(o.dtype());
        if (o.dtype() == kreg::Dtype::Float32) {
          float f;
          std::memcpy(&f, p, 4);
          v = f;
        } else if (o.dtype() == kreg::Dtype::Float64) {
          std::memcpy(&v, p, 8);
        } else if (o.dtype() == kreg::Dtype::Float16) {
          kreg::half h;
          std::memcpy(&h, p, 2);
          v = static_cast<float>(h);
        } else if (o.dtype() == kreg::Dtype::BFloat16) {
          kreg::bfloat16 h;
          std::memcpy(&h, p, 2);
          v = static_cast<float>(h);
        }
        if (o.dtype() == kreg::Dtype::Complex64) {
          float parts[2];
          std::memcpy(parts, p, 8);
          v = parts[0] + parts[1];
        }
        if (std::isnan(v)) ++unwritten;
      }
    }
    std::printf("ran %.0f ms, %lld of %lld output elements NaN\n", now_ms() - start,
                static_cast<long long>(unwritten), static_cast<long long>(total));
    return 0;
  } catch (const std::exception& e) {
    std::printf("FAIL %s\n", first_line(e.what()).c_str());
    return 1;
  }
}

bool gpu_present() {
  return kreg::cuda::driver_available() && kreg::cuda::device_count() > 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.size() == 2 && args[0] == "--case") return run_case(args[1]);
  std::string dir;
  std::string arch = "sm_90";
  int timeout_s = 120;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--arch" && i + 1 < args.size()) {
      arch = args[++i];
    } else if (args[i] == "--timeout" && i + 1 < args.size()) {
      timeout_s = std::stoi(args[++i]);
    } else if (dir.empty() && args[i][0] != '-') {
      dir = args[i];
    } else {
      std::cerr << "usage: kreg_metal_corpus DIR [--arch sm_90] [--timeout S]\n";
      return 2;
    }
  }
  if (dir.empty() || !fs::is_directory(dir)) {
    std::cerr << "usage: kreg_metal_corpus DIR [--arch sm_90] [--timeout S]\n";
    return 2;
  }
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() == ".json") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  const bool gpu = gpu_present();
  std::cout << (gpu ? "running each kernel on GPU 0\n" : "no GPU: compiling for " + arch + "\n");

  kreg::RegistryOptions options;
  options.arch = arch;
  options.disk_cache = false;
  options.precompiled = false;
  options.builtins = false;
  std::optional<kreg::Registry> registry;
  if (!gpu) registry.emplace(options);

  int passed = 0;
  int index = 0;
  for (const fs::path& file : files) {
    std::string result;
    bool ok = false;
    if (!gpu) {
      try {
        const double start = now_ms();
        compile_only(read_case(file), *registry, index++);
        result = "compiled " + std::to_string(static_cast<int>(now_ms() - start)) + " ms";
        ok = true;
      } catch (const std::exception& e) {
        result = "FAIL " + first_line(e.what());
      }
    } else {
      int pipe_fds[2];
      if (pipe(pipe_fds) != 0) throw std::runtime_error("pipe failed");
      const pid_t child = fork();
      if (child == 0) {
        dup2(pipe_fds[1], STDOUT_FILENO);
        close(pipe_fds[0]);
        alarm(static_cast<unsigned>(timeout_s));
        const std::string self = fs::read_symlink("/proc/self/exe");
        execl(self.c_str(), self.c_str(), "--case", file.c_str(), nullptr);
        _exit(127);
      }
      close(pipe_fds[1]);
      char buffer[4096];
      ssize_t n = 0;
      while ((n = read(pipe_fds[0], buffer, sizeof(buffer))) > 0) result.append(buffer, n);
      close(pipe_fds[0]);
      int status = 0;
      waitpid(child, &status, 0);
      while (!result.empty() && result.back() == '\n') result.pop_back();
      ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
      if (WIFSIGNALED(status))
        result += " (killed by signal " + std::to_string(WTERMSIG(status)) + ")";
    }
    if (ok) ++passed;
    std::printf("%-48s %s\n", file.filename().c_str(), result.c_str());
  }
  std::printf("%s %d of %zu\n", gpu ? "ran" : "compiled", passed, files.size());
  return 0;
}
