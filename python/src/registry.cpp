// kreg.Registry, kreg.Kernel and kreg.Binary: the C++ registry with keyword options.
#include "bindings.hpp"
#include "errors.hpp"
#include "interop.hpp"
#include "streams.hpp"

#include <kreg/error.hpp>
#include <kreg/registry.hpp>

#include <nanobind/stl/filesystem.h>
#include <nanobind/stl/function.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/vector.h>

#include <climits>
#include <cstring>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kreg::python {
namespace {

[[noreturn]] void invalid(const std::string& why) {
  throw Error(ErrorCode::InvalidArgument, why);
}

// {index: value} (bools and ints), or a canonical key such as "200:b1|300:i4".
Constants to_constants(nb::handle value) {
  Constants c;
  if (value.is_none()) return c;
  if (nb::isinstance<nb::str>(value)) return parse_constants(nb::cast<std::string>(value));
  if (!nb::isinstance<nb::dict>(value)) {
    invalid("constants are a dict {index: value} or a key such as '200:b1|300:i4'");
  }
  for (auto [key, item] : nb::cast<nb::dict>(value)) {
    const int index = nb::cast<int>(key);
    if (nb::isinstance<nb::bool_>(item)) {
      c.bools.emplace_back(index, nb::cast<bool>(item));
    } else if (nb::isinstance<nb::int_>(item)) {
      const long long v = PyLong_AsLongLong(item.ptr());
      if ((v == -1 && PyErr_Occurred() != nullptr) || v < INT32_MIN || v > INT32_MAX) {
        PyErr_Clear();
        invalid("constant " + std::to_string(index) + " does not fit an int32");
      }
      c.ints.emplace_back(index, static_cast<std::int32_t>(v));
    } else {
      invalid("constant " + std::to_string(index) + " must be a bool or an int");
    }
  }
  return c;
}

nb::dict constants_dict(const Constants& c) {
  nb::dict d;
  for (const auto& [i, v] : c.bools) d[nb::int_(i)] = nb::bool_(v);
  for (const auto& [i, v] : c.ints) d[nb::int_(i)] = nb::int_(v);
  return d;
}

// A progress callback for prewarm: a Python callable, a tqdm bar (progress=True), or none.
// It runs on kreg's worker threads, one call at a time, and takes the GIL for each.
class Progress {
 public:
  explicit Progress(nb::handle progress) {
    if (progress.is_none() || (nb::isinstance<nb::bool_>(progress) && !nb::cast<bool>(progress))) {
      return;
    }
    if (nb::isinstance<nb::bool_>(progress)) {
      try {
        tqdm_ = nb::module_::import_("tqdm").attr("tqdm");
      } catch (const nb::python_error&) {
        text_ = true;  // no tqdm: a plain line on stderr
      }
    } else {
      callback_ = nb::borrow(progress);
    }
  }
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  ProgressCallback function() {
    if (!callback_.is_valid() && !tqdm_.is_valid() && !text_) return {};
    return [this](const PrewarmProgress& p) {
      nb::gil_scoped_acquire gil;
      if (failure_) return;
      try {
        report(p);
      } catch (...) {
        failure_ = std::current_exception();
      }
    };
  }

  // Closes the bar and re-raises what the callback raised (with the GIL held).
  void finish() {
    if (bar_.is_valid()) bar_.attr("close")();
    if (text_ && shown_) PySys_WriteStderr("\n");
    if (failure_) std::rethrow_exception(std::exchange(failure_, nullptr));
  }

  ~Progress() {
    nb::gil_scoped_acquire gil;  // the members hold Python objects
    bar_.reset();
    tqdm_.reset();
    callback_.reset();
    failure_ = nullptr;
  }

 private:
  void report(const PrewarmProgress& p) {
    if (callback_.is_valid()) {
      callback_(nb::int_(p.done), nb::int_(p.total), nb::str(p.label.data(), p.label.size()),
                nb::bool_(p.ok));
    } else if (tqdm_.is_valid()) {
      if (!bar_.is_valid()) bar_ = tqdm_(nb::arg("total") = p.total, nb::arg("desc") = "prewarm");
      bar_.attr("update")(1);
    } else if (text_) {
      shown_ = true;
      PySys_WriteStderr("\rkreg prewarm: %zu/%zu", p.done, p.total);
    }
  }

  nb::object callback_;
  nb::object tqdm_;
  nb::object bar_;
  bool text_ = false;
  bool shown_ = false;
  std::exception_ptr failure_;
};

template <class F>
auto prewarm_with(nb::handle progress, F&& run) {
  Progress p(progress);
  ProgressCallback callback = p.function();
  decltype(run(callback)) result{};
  {
    nb::gil_scoped_release release;
    result = run(callback);
  }
  p.finish();
  return result;
}

// Kernel arguments as bytes, sized by the kernel's parameters (docs/python.md).
class LaunchArgs {
 public:
  LaunchArgs(const Kernel& kernel, nb::handle args) {
    const std::size_t n = nb::len(args);
    const std::vector<std::size_t>& params = kernel.parameter_sizes();
    const bool known = kernel.parameters_known();
    if (known && n != params.size()) {
      invalid("kernel '" + kernel.label() + "' takes " + std::to_string(params.size()) +
              " parameters but " + std::to_string(n) + " arguments were given");
    }
    storage_.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      nb::object arg = args[i];
      storage_[i] = bytes(kernel, arg, i, known ? params[i] : 0);
    }
    for (std::vector<unsigned char>& s : storage_) {
      pointers_.push_back(s.data());
      sizes_.push_back(s.size());
    }
  }
  void** pointers() { return pointers_.data(); }
  const std::size_t* sizes() const { return sizes_.data(); }
  std::size_t count() const { return sizes_.size(); }

 private:
  template <class T>
  static std::vector<unsigned char> raw(T value) {
    std::vector<unsigned char> out(sizeof(T));
    std::memcpy(out.data(), &value, sizeof(T));
    return out;
  }

  static std::vector<unsigned char> bytes(const Kernel& k, nb::handle arg, std::size_t i,
                                          std::size_t size) {
    const std::string where = "kernel '" + k.label() + "', argument " + std::to_string(i);
    // Before the Python numbers: np.float64 is a float too, but passes its own 8 bytes.
    if (is_numpy_scalar(arg)) return own_bytes(arg, size, where);
    if (nb::isinstance<nb::bool_>(arg)) {
      if (size != 0 && size != 1)
        invalid(where + ": a bool for a " + std::to_string(size) + "-byte parameter");
      return raw<std::uint8_t>(nb::cast<bool>(arg) ? 1 : 0);
    }
    if (nb::isinstance<nb::int_>(arg)) return integer(arg, size == 0 ? 4 : size, where);
    if (nb::isinstance<nb::float_>(arg)) {
      const auto v = nb::cast<double>(arg);
      if (size == 0 || size == 4) return raw(static_cast<float>(v));
      if (size == 8) return raw(v);
      invalid(where + ": a Python float for a " + std::to_string(size) +
              "-byte parameter (give a numpy scalar of that size)");
    }
    std::uintptr_t address = 0;
    if (device_address(arg, address)) {
      if (size != 0 && size != sizeof(void*)) {
        invalid(where + ": an array (a pointer) for a " + std::to_string(size) + "-byte parameter");
      }
      return raw(address);
    }
    // Another scalar type that, like numpy's, knows its bytes (ml_dtypes' bfloat16, say).
    if (nb::hasattr(arg, "tobytes") && nb::hasattr(arg, "itemsize")) {
      return own_bytes(arg, size, where);
    }
    invalid(where + ": a " + nb::cast<std::string>(nb::type_name(arg.type())) +
            " cannot be passed (give arrays, Python or numpy numbers)");
  }

  // A scalar's own bytes, whose size must match the parameter's (any size when unknown).
  static std::vector<unsigned char> own_bytes(nb::handle arg, std::size_t size,
                                              const std::string& where) {
    auto b = nb::cast<nb::bytes>(arg.attr("tobytes")());
    std::vector<unsigned char> out(b.size());
    std::memcpy(out.data(), b.c_str(), b.size());
    if (size != 0 && out.size() != size) {
      invalid(where + ": a " + std::to_string(out.size()) + "-byte " +
              nb::cast<std::string>(nb::type_name(arg.type())) + " for a " + std::to_string(size) +
              "-byte parameter");
    }
    return out;
  }

  static std::vector<unsigned char> integer(nb::handle arg, std::size_t size,
                                            const std::string& where) {
    int overflow = 0;
    const long long v = PyLong_AsLongLongAndOverflow(arg.ptr(), &overflow);
    unsigned long long u = 0;
    bool is_unsigned = false;
    if (overflow > 0) {
      u = PyLong_AsUnsignedLongLong(arg.ptr());
      if (u == static_cast<unsigned long long>(-1) && PyErr_Occurred() != nullptr) {
        PyErr_Clear();
        invalid(where + ": the int does not fit 64 bits");
      }
      is_unsigned = true;
    } else if (overflow < 0) {
      invalid(where + ": the int does not fit 64 bits");
    }
    const auto fits = [&](long long lo, unsigned long long hi) {
      return is_unsigned ? u <= hi
                         : (v >= lo && (v < 0 || static_cast<unsigned long long>(v) <= hi));
    };
    switch (size) {
      case 1:
        if (!fits(INT8_MIN, UINT8_MAX)) break;
        return raw(static_cast<std::uint8_t>(v));
      case 2:
        if (!fits(INT16_MIN, UINT16_MAX)) break;
        return raw(static_cast<std::uint16_t>(v));
      case 4:
        if (!fits(INT32_MIN, UINT32_MAX)) break;
        return raw(static_cast<std::uint32_t>(v));
      case 8: return raw(is_unsigned ? u : static_cast<unsigned long long>(v));
      default: invalid(where + ": a Python int for a " + std::to_string(size) + "-byte parameter");
    }
    invalid(where + ": " + nb::cast<std::string>(nb::str(arg)) + " does not fit the " +
            std::to_string(size) + "-byte parameter");
  }

  std::vector<std::vector<unsigned char>> storage_;
  std::vector<void*> pointers_;
  std::vector<std::size_t> sizes_;
};

void launch(const Kernel& kernel, nb::handle grid, nb::handle block, nb::handle args,
            std::size_t shared_mem, nb::handle stream) {
  LaunchArgs packed(kernel, args);
  CallScope scope(first_array(args), stream);
  const Dim3 g = to_dim3(grid, "kernel", kernel.label(), "grid");
  const Dim3 b = to_dim3(block, "kernel", kernel.label(), "block");
  nb::gil_scoped_release release;
  kernel.launch_checked(g, b, shared_mem, scope.stream().native(), packed.pointers(),
                        packed.sizes(), packed.count());
}

// A Python callable of a constants dict as a predicate kreg may call without the GIL.
std::function<bool(const Constants&)> constants_predicate(nb::handle callable) {
  if (callable.is_none()) return {};
  nb::object f = nb::borrow(callable);
  return [f](const Constants& c) {
    nb::gil_scoped_acquire gil;
    return nb::cast<bool>(f(constants_dict(c)));
  };
}

// A tuning space from its Python parts.
TuneSpace tune_space(nb::handle ints, const std::vector<int>& bools, nb::handle fixed,
                     nb::handle accept) {
  TuneSpace space;
  if (!ints.is_none()) {
    if (!nb::isinstance<nb::dict>(ints)) invalid("ints is a dict {index: [values]}");
    for (auto [key, values] : nb::cast<nb::dict>(ints)) {
      space.ints.emplace_back(nb::cast<int>(key), nb::cast<std::vector<std::int32_t>>(values));
    }
  }
  space.bools = bools;
  space.fixed = to_constants(fixed);
  space.accept = constants_predicate(accept);
  return space;
}

nb::object tune(Registry& r, const std::string& name, const std::string& bucket, nb::handle run,
                nb::handle ints, const std::vector<int>& bools, nb::handle fixed, nb::handle accept,
                int warmup, int repeats, nb::handle check, nb::handle timer, nb::handle stream) {
  const TuneSpace space = tune_space(ints, bools, fixed, accept);
  TuneOptions options;
  options.warmup = warmup;
  options.repeats = repeats;
  options.check = constants_predicate(check);
  if (!timer.is_none()) {
    nb::object f = nb::borrow(timer);
    options.timer = [f](const Constants& c, const std::function<void()>& launch) {
      nb::gil_scoped_acquire gil;
      const nb::object go = nb::cpp_function([launch] {
        nb::gil_scoped_release release;
        launch();
      });
      return nb::cast<double>(f(constants_dict(c), go));
    };
  }
  TuneRun run_kernel;
  if (!run.is_none()) {
    nb::object f = nb::borrow(run);
    run_kernel = [f](const Kernel& kernel) {
      nb::gil_scoped_acquire gil;
      f(nb::cast(&kernel, nb::rv_policy::reference));
    };
  }
  std::optional<StreamScope> scope;
  if (!stream.is_none()) scope.emplace(nb::cast<const Stream&>(stream));
  TuneResult result;
  {
    nb::gil_scoped_release release;
    result = r.tune(name, space, bucket, run_kernel, options);
  }
  return nb::cast(std::move(result));
}

nb::object tuned(Registry& r, const std::string& name, const std::string& bucket, nb::handle ints,
                 const std::vector<int>& bools, nb::handle fixed, nb::handle accept) {
  const TuneSpace space = tune_space(ints, bools, fixed, accept);
  std::optional<Constants> winner;
  {
    nb::gil_scoped_release release;
    winner = r.tuned(name, space, bucket);
  }
  if (!winner) return nb::none();
  return constants_dict(*winner);
}

RegistryOptions make_options(std::string arch, nb::handle cache_dir, bool disk_cache,
                             std::uint64_t cache_max_bytes, bool precompiled,
                             std::vector<std::string> compile_options, int device,
                             bool warm_compiler, unsigned prewarm_threads, int compile_processes,
                             bool builtins) {
  RegistryOptions o;
  o.arch = std::move(arch);
  if (!cache_dir.is_none()) o.cache_dir = nb::cast<std::string>(nb::str(cache_dir));
  o.disk_cache = disk_cache;
  o.cache_max_bytes = cache_max_bytes;
  o.precompiled = precompiled;
  o.compile_options = std::move(compile_options);
  o.device = device;
  o.warm_compiler = warm_compiler;
  o.prewarm_threads = prewarm_threads;
  o.compile_processes = compile_processes;
  o.builtins = builtins;
  return o;
}

// The request form of prewarm's items: names, or (name, constants) pairs.
std::vector<KernelRequest> requests(nb::handle items) {
  std::vector<KernelRequest> out;
  for (nb::handle item : items) {
    if (nb::isinstance<nb::str>(item)) {
      out.push_back({nb::cast<std::string>(item), {}});
    } else {
      if (nb::len(item) != 2) invalid("prewarm takes names or (name, constants) pairs");
      out.push_back({nb::cast<std::string>(item[0]), to_constants(nb::object(item[1]))});
    }
  }
  return out;
}

// Runs `f` without the GIL.
template <class F>
decltype(auto) without_gil(F&& f) {
  nb::gil_scoped_release release;
  return f();
}

const char* kRegistryDoc =
    "A thread-safe registry of CUDA C++ kernel sources. Each (source, constants, arch) is "
    "compiled once with NVRTC when first needed and cached in memory and on disk; kreg's "
    "built-in kernels are registered (and precompiled) unless builtins=False.\n\n"
    "The keyword arguments are RegistryOptions' fields: arch ('sm_90'; default KREG_ARCH or "
    "the GPU's), cache_dir, disk_cache, cache_max_bytes, precompiled, compile_options, "
    "device, warm_compiler, prewarm_threads, compile_processes, builtins.";

}  // namespace

void bind_registry(nb::module_& m) {
  auto stats = nb::class_<Stats>(m, "Stats", "Counters since the registry was created.");
  // Every field, from the one table (<kreg/stats.hpp>): times in milliseconds, counts as ints.
  for (const StatsField& field : stats_fields()) {
    const std::string name(field.name);
    if (field.count != nullptr) {
      stats.def_prop_ro(name.c_str(), [member = field.count](const Stats& s) { return s.*member; });
    } else {
      stats.def_prop_ro(name.c_str(), [member = field.ms](const Stats& s) { return s.*member; });
    }
  }
  stats
      .def("as_dict",
           [](const Stats& s) {
             nb::dict d;
             for (const StatsField& field : stats_fields()) {
               const std::string name(field.name);
               if (field.count != nullptr) {
                 d[name.c_str()] = s.*field.count;
               } else {
                 d[name.c_str()] = s.*field.ms;
               }
             }
             return d;
           })
      .def("__repr__", [](nb::handle self) {
        return "kreg.Stats(" + nb::cast<std::string>(nb::repr(self.attr("as_dict")())) + ")";
      });

  nb::class_<PrewarmReport>(m, "PrewarmReport", "What prewarm_all did.")
      .def_ro("warmed", &PrewarmReport::warmed, "Kernels now ready.")
      .def_ro("skipped", &PrewarmReport::skipped, "Kernels that need constants nobody gave.")
      .def_ro("failures", &PrewarmReport::failures, "'label: reason', one per failed kernel.")
      .def("__repr__", [](const PrewarmReport& r) {
        return "kreg.PrewarmReport(warmed=" + std::to_string(r.warmed) +
               ", skipped=" + std::to_string(r.skipped) +
               ", failures=" + std::to_string(r.failures.size()) + ")";
      });

  nb::class_<TuneResult::Candidate>(m, "TuneCandidate", "One candidate of a tuning run.")
      .def_prop_ro("constants",
                   [](const TuneResult::Candidate& c) { return constants_dict(c.constants); })
      .def_ro("label", &TuneResult::Candidate::label)
      .def_ro("ms", &TuneResult::Candidate::ms, "Median time; 0 for one that did not run.")
      .def_ro("ok", &TuneResult::Candidate::ok, "Compiled, ran and passed the check.")
      .def_ro("timed", &TuneResult::Candidate::timed, "Timed in this call, not read back.")
      .def_ro("why", &TuneResult::Candidate::why)
      .def("__repr__", [](const TuneResult::Candidate& c) {
        return "kreg.TuneCandidate('" + c.label + "', ms=" + std::to_string(c.ms) +
               (c.ok ? "" : ", not ok") + ")";
      });
  nb::class_<TuneResult>(m, "TuneResult", "What Registry.tune found.")
      .def_prop_ro("winner", [](const TuneResult& r) { return constants_dict(r.winner); })
      .def_ro("ms", &TuneResult::ms)
      .def_ro("timed", &TuneResult::timed, "Candidates timed in this call (0: all read back).")
      .def_ro("candidates", &TuneResult::candidates)
      .def("__repr__", [](const TuneResult& r) {
        return "kreg.TuneResult(winner='" + constants_key(r.winner) +
               "', ms=" + std::to_string(r.ms) + ", timed=" + std::to_string(r.timed) + ")";
      });

  nb::class_<Binary>(m, "Binary", "A compiled source: CUBIN for one arch and constant set.")
      .def_prop_ro("source_name", &Binary::source_name)
      .def_prop_ro("key", &Binary::key, "'source|constants@arch'.")
      .def_prop_ro("arch", &Binary::arch)
      .def_prop_ro(
          "origin", [](const Binary& b) { return std::string(to_string(b.origin())); },
          "'compiled', 'disk' or 'precompiled'.")
      .def_prop_ro("size", &Binary::size)
      .def_prop_ro("log", &Binary::log)
      .def_prop_ro("milliseconds", &Binary::milliseconds)
      .def_prop_ro(
          "image", [](const Binary& b) { return nb::bytes(b.image().data(), b.image().size()); },
          "The CUBIN image, as bytes.")
      .def_prop_ro("entries",
                   [](const Binary& b) {
                     std::vector<std::string> names;
                     for (const Binary::Symbol& s : b.symbols()) names.push_back(s.name);
                     return names;
                   })
      .def("__repr__", [](const Binary& b) {
        return "kreg.Binary(key='" + b.key() + "', origin=" + to_string(b.origin()) +
               ", size=" + std::to_string(b.size()) + ")";
      });

  nb::class_<Kernel>(m, "Kernel",
                     "A loaded kernel, owned by its registry. Call it to launch: "
                     "kernel(grid, block, args, shared_mem=0, stream=None).")
      .def_prop_ro("name", &Kernel::name)
      .def_prop_ro("label", &Kernel::label, "The cache key: 'name|200:b1|300:i4'.")
      .def_prop_ro("binary", &Kernel::binary, nb::rv_policy::reference_internal)
      .def_prop_ro("parameter_sizes", &Kernel::parameter_sizes,
                   "The byte size of each parameter; empty if the binary does not say.")
      .def_prop_ro("attributes",
                   [](const Kernel& k) {
                     nb::dict d;
                     d["registers"] = k.attributes().registers;
                     d["static_shared_bytes"] = k.attributes().static_shared_bytes;
                     d["local_bytes"] = k.attributes().local_bytes;
                     d["constant_bytes"] = k.attributes().constant_bytes;
                     d["max_threads_per_block"] = k.attributes().max_threads_per_block;
                     return d;
                   })
      .def("__call__", &launch, nb::arg("grid"), nb::arg("block"), nb::arg("args"),
           nb::arg("shared_mem") = 0, nb::arg("stream") = nb::none(),
           "Launches over `grid` blocks of `block` threads (1 to 3 extents each). `args` "
           "holds one value per parameter: an array passes its device address; a Python "
           "int fills an integer parameter of its size (1, 2, 4 or 8 bytes; out of range "
           "is an error); a Python float fills a float (4 bytes) or double (8 bytes); a bool "
           "a 1-byte parameter; a numpy scalar passes its own bytes, whose size must match. "
           "Runs on `stream`, else the first array's framework's current stream.")
      .def("__repr__", [](const Kernel& k) { return "kreg.Kernel('" + k.label() + "')"; });

  nb::class_<Registry>(m, "Registry", nb::dynamic_attr(), kRegistryDoc)
      .def(
          "__init__",
          [](Registry* self, std::string arch, nb::handle cache_dir, bool disk_cache,
             std::uint64_t cache_max_bytes, bool precompiled,
             std::vector<std::string> compile_options, int device, bool warm_compiler,
             unsigned prewarm_threads, int compile_processes, bool builtins) {
            RegistryOptions o =
                make_options(std::move(arch), cache_dir, disk_cache, cache_max_bytes, precompiled,
                             std::move(compile_options), device, warm_compiler, prewarm_threads,
                             compile_processes, builtins);
            nb::gil_scoped_release release;
            new (self) Registry(std::move(o));
          },
          nb::kw_only(), nb::arg("arch") = "", nb::arg("cache_dir") = nb::none(),
          nb::arg("disk_cache") = true, nb::arg("cache_max_bytes") = 0,
          nb::arg("precompiled") = true, nb::arg("compile_options") = std::vector<std::string>{},
          nb::arg("device") = 0, nb::arg("warm_compiler") = true, nb::arg("prewarm_threads") = 0,
          nb::arg("compile_processes") = -1, nb::arg("builtins") = true)
      .def(
          "register_source",
          [](nb::pointer_and_handle<Registry> self, const std::string& name,
             const std::string& text, std::vector<std::string> entries,
             std::vector<std::string> compile_options) {
            self.p->register_source(name, text,
                                    SourceOptions{std::move(entries), std::move(compile_options)});
          },
          nb::arg("name"), nb::arg("text"), nb::kw_only(),
          nb::arg("entries") = std::vector<std::string>{},
          nb::arg("compile_options") = std::vector<std::string>{},
          "Adds a source or replaces the one of that name. entries: names beyond those the "
          "text declares ('name' or 'name=expression'); compile_options: NVRTC options for "
          "this source.")
      .def(
          "get",
          [](nb::pointer_and_handle<Registry> self, const std::string& name,
             nb::handle constants) -> const Kernel& {
            const Constants c = to_constants(constants);
            return without_gil([&]() -> const Kernel& { return self.p->get(name, c); });
          },
          nb::arg("name"), nb::arg("constants") = nb::none(), nb::rv_policy::reference_internal,
          "The kernel for an entry name and constants ({index: value}), compiled and loaded "
          "on first use. Raises KernelNotFound, CompileError, LoadError, InvalidArgument, "
          "NoDevice.")
      .def(
          "compile",
          [](nb::pointer_and_handle<Registry> self, const std::string& name,
             nb::handle constants) -> const Binary& {
            const Constants c = to_constants(constants);
            return without_gil([&]() -> const Binary& { return self.p->compile(name, c); });
          },
          nb::arg("name"), nb::arg("constants") = nb::none(), nb::rv_policy::reference_internal,
          "The binary holding `name`, compiled (or found) without loading it; needs no GPU "
          "when the registry has an explicit arch.")
      .def(
          "prewarm",
          [](Registry& r, nb::handle items, nb::handle progress) {
            std::vector<KernelRequest> reqs = requests(items);
            return prewarm_with(progress,
                                [&](const ProgressCallback& cb) { return r.prewarm(reqs, cb); });
          },
          nb::arg("items"), nb::arg("progress") = nb::none(),
          "Makes kernels ready in parallel: names, or (name, constants) pairs. progress: a "
          "callable(done, total, label, ok), or True for a tqdm bar. Returns how many are "
          "ready.")
      .def(
          "prewarm_all",
          [](Registry& r, nb::handle progress) {
            return prewarm_with(progress,
                                [&](const ProgressCallback& cb) { return r.prewarm_all(cb); });
          },
          nb::arg("progress") = nb::none(),
          "Prewarms every entry of every source (and each listed specialization).")
      .def("prewarm_all_requests",
           [](const Registry& r) {
             nb::list out;
             for (const KernelRequest& q : r.prewarm_all_requests()) {
               out.append(nb::make_tuple(q.name, constants_dict(q.constants)));
             }
             return out;
           })
      .def(
          "write_manifest",
          [](const Registry& r, const std::filesystem::path& path) { r.write_manifest(path); },
          nb::arg("path"), "Writes the (name, constants) set this registry served, as JSON.")
      .def(
          "prewarm_manifest",
          [](Registry& r, const std::filesystem::path& path, nb::handle progress) {
            return prewarm_with(
                progress, [&](const ProgressCallback& cb) { return r.prewarm_manifest(path, cb); });
          },
          nb::arg("path"), nb::arg("progress") = nb::none(),
          "Prewarms every kernel a manifest lists; returns how many are ready.")
      .def(
          "is_cached",
          [](const Registry& r, const std::string& name, nb::handle constants) {
            return r.is_cached(name, to_constants(constants));
          },
          nb::arg("name"), nb::arg("constants") = nb::none())
      .def("cached_count", &Registry::cached_count)
      .def("source_count", &Registry::source_count)
      .def("stats", &Registry::stats)
      .def("source_names", &Registry::source_names)
      .def("entry_names", &Registry::entry_names, nb::arg("source"))
      .def_prop_ro("arch", &Registry::arch)
      .def_prop_ro("cache_dir", [](const Registry& r) { return r.cache_dir().string(); })
      .def("flush_disk_cache",
           [](Registry& r) {
             nb::gil_scoped_release release;
             r.flush_disk_cache();
           })
      .def("tune", &tune, nb::arg("name"), nb::arg("bucket"), nb::arg("run") = nb::none(),
           nb::kw_only(), nb::arg("ints") = nb::none(), nb::arg("bools") = std::vector<int>{},
           nb::arg("fixed") = nb::none(), nb::arg("accept") = nb::none(), nb::arg("warmup") = 3,
           nb::arg("repeats") = 20, nb::arg("check") = nb::none(), nb::arg("timer") = nb::none(),
           nb::arg("stream") = nb::none(),
           "Times each candidate of a tuning space for `name` on this GPU and returns a "
           "TuneResult (winner, ms, timed, candidates), as Registry::tune does in C++: ints "
           "{index: [values]} and bools [index] to try, fixed constants, accept(constants) -> "
           "bool. run(kernel) launches one candidate once, on `stream` (a kreg.Stream; "
           "default kreg.current_stream()): pass the same stream to the kernel's call. "
           "check(constants) -> bool after its warm-up launches; timer(constants, launch) -> "
           "ms replaces the GPU clock. Times are kept in the caches: a later call, in any "
           "process sharing them, times only what it finds no record for.")
      .def("tuned", &tuned, nb::arg("name"), nb::arg("bucket"), nb::kw_only(),
           nb::arg("ints") = nb::none(), nb::arg("bools") = std::vector<int>{},
           nb::arg("fixed") = nb::none(), nb::arg("accept") = nb::none(),
           "The winner (a constants dict) of a tuning space from the records alone, or None "
           "when a candidate has never been timed.");

  m.def("device_registry", &device_registry, nb::arg("device") = 0, nb::rv_policy::reference,
        "The registry kreg builds custom kernels and ops through on GPU `device` (one per "
        "arch, kept for the process's life).");
  m.def(
      "read_manifest",
      [](const std::filesystem::path& path) {
        nb::list out;
        for (const KernelRequest& q : read_manifest(path)) {
          out.append(nb::make_tuple(q.name, constants_dict(q.constants)));
        }
        return out;
      },
      nb::arg("path"), "The (name, constants) pairs a manifest lists.");
}

}  // namespace kreg::python
