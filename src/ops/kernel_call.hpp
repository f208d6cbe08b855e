#pragma once
// One pending op: a built-in kernel, its constants, its launch geometry and its arguments
// in order, launched once its inputs are evaluated.
//
// The arguments follow the kernel's contract (kernels/kreg/contracts/*.cuh), a function type
// that the kernel checks its own signature against: `arguments<Contract>(...)` refuses at
// compile time an argument count or a value type that differs from it, and the launch checks
// the contract's parameter sizes against the kernel it loaded, which may come from a source
// registered in the built-in's place.

#include <kreg/array.hpp>
#include <kreg/constants.hpp>
#include <kreg/contracts/tensor_map.cuh>
#include <kreg/registry.hpp>
#include <kreg/types.hpp>

#include "array/node.hpp"

#include <cstddef>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace kreg::array {
class ArrayLaunch;
}  // namespace kreg::array

namespace kreg::ops {

// The element type of a contract as the host instantiates it: the ops pass arrays for the
// pointers to it, and it is incomplete so that a contract taking one by value cannot compile.
struct Element;

template <class Signature>
struct Contract;

template <class... P>
struct Contract<void(P...)> {
  static constexpr std::size_t count = sizeof...(P);
  // Most parameters are pointers, whose size is the one wanted here.
  static constexpr std::size_t sizes[count + 1] = {sizeof(P)...,
                                                   0};  // NOLINT(bugprone-sizeof-expression)
};

class KernelCall final : public array::Primitive {
 public:
  struct Output {
    std::size_t index;  // the pointer of output `index`
  };

  // An argument for a pointer parameter: an input, an output, or a null pointer (for an
  // argument the constants switch off).
  class Pointer {
   public:
    Pointer(const Array& input) : input_(&input) {}  // NOLINT: implicit by design
    Pointer(const Array* input) : input_(input) {}   // NOLINT: null is a null pointer
    Pointer(const std::optional<Array>& input)       // NOLINT
        : input_(input.has_value() ? &*input : nullptr) {}
    Pointer(Output output) : output_(output.index) {}  // NOLINT
    Pointer(std::nullptr_t) {}                         // NOLINT

   private:
    friend class KernelCall;
    const Array* input_ = nullptr;
    std::optional<std::size_t> output_;
    bool row_major_ = true;
  };

  // An input passed with the strides it has (a transposed view, say) rather than as a
  // row-major copy: the op has read its strides and passes what the kernel needs of them.
  static Pointer as_is(const Array& input) {
    Pointer p(input);
    p.row_major_ = false;
    return p;
  }

  // An argument for a contracts::TensorMap parameter: a 2-D (or, with `depth`, 3-D) tensor map
  // over an input (as it is, or a row-major copy, with element (0, 0) at its address), encoded
  // when the call runs, once that address is known. `row` and `slice` are in elements; the box
  // is in elements along the contiguous dimension, in rows, and one slice deep.
  struct TensorMapOf {
    const Array* input = nullptr;
    bool row_major = false;
    std::uint64_t inner = 0;
    std::uint64_t outer = 0;
    std::uint64_t row = 0;
    unsigned box_inner = 0;
    unsigned box_outer = 0;
    std::uint64_t depth = 0;  // 3-D: slices of `outer` rows, `slice` elements apart
    std::uint64_t slice = 0;
  };

  // Where and how: the built-in entry, its constants, the geometry.
  KernelCall(std::string entry, Constants constants, Dim3 grid, Dim3 block)
      : entry_(std::move(entry)),
        builtin_(std::string(kBuiltinPrefix) + entry_),
        constants_(std::move(constants)),
        grid_(grid),
        block_(block) {}

  // The kernel's arguments, one per parameter of `Signature` (a contract instantiated with
  // Element): a Pointer for each pointer, a value of exactly the parameter's type otherwise.
  template <class Signature, class... Args>
  void arguments(const Args&... args) {
    static_assert(Contract<Signature>::count == sizeof...(Args),
                  "an op passes a different number of arguments than its kernel's "
                  "contract has parameters");
    add_all(static_cast<Signature*>(nullptr), args...);
    sizes_ = Contract<Signature>::sizes;
    count_ = Contract<Signature>::count;
  }

  // Dynamic shared memory for the launch; the kernel opts in first when its static and
  // dynamic shared memory together pass 48 KiB.
  void shared_bytes(std::size_t bytes) { shared_bytes_ = bytes; }

  // A second kernel, launched right after this one and reading its outputs: `next` is a call
  // built as usual (its entry, constants, geometry and arguments) whose pointer arguments are
  // this call's Outputs, arrays (which become this call's inputs too) or nullptr, with no
  // tensor maps, and which is never launched on its own. It overlaps this kernel where the GPU
  // can (cuda/dependent_launch.hpp), so it must wait for it (kreg::wait_for_prior_grid) before
  // reading its outputs; the pair needs no allocation between its launches, which would cut
  // the overlap inside a captured graph.
  void then(std::shared_ptr<KernelCall> next);

  // The pending outputs, on the current stream. Throws InvalidArgument under a CPU scope or
  // for an input on another GPU.
  static std::vector<Array> launch(const std::shared_ptr<KernelCall>& call,
                                   const std::vector<std::pair<Shape, Dtype>>& outputs);

  // A call with no outputs, whose kernel writes into some of its inputs (each evaluated and
  // row-major, so that the kernel sees the input's own memory): placed and launched now on
  // the current stream, after the inputs' producers.
  static void run_in_place(const std::shared_ptr<KernelCall>& call);

  void run(const std::vector<std::shared_ptr<array::ArrayNode>>& live) override;

 private:
  struct Arg {
    enum class Kind { Input, Output, Null, Value, Map } kind = Kind::Value;
    std::size_t index = 0;  // of the input, output or map
    unsigned char bytes[8] = {};
    std::size_t size = 0;
  };

  template <class... P, class... Args>
  void add_all(void (* /*signature*/)(P...), const Args&... args) {
    (add<P>(args), ...);
  }

  template <class P, class A>
  void add(const A& arg) {
    if constexpr (std::is_same_v<P, contracts::TensorMap>) {
      static_assert(std::is_same_v<A, TensorMapOf>, "a tensor-map parameter takes a TensorMapOf");
      map(arg);
    } else if constexpr (std::is_pointer_v<P>) {
      static_assert(std::is_convertible_v<const A&, Pointer>,
                    "a pointer parameter takes an Array, an Output or nullptr");
      pointer(Pointer(arg));
    } else {
      static_assert(std::is_same_v<A, P>,
                    "a value parameter takes a value of exactly its contract type");
      static_assert(sizeof(P) <= 8, "values are at most 8 bytes");
      Arg value;
      std::memcpy(value.bytes, &arg, sizeof(P));
      value.size = sizeof(P);
      args_.push_back(value);
    }
  }

  void pointer(const Pointer& p);
  void map(const TensorMapOf& m);
  void launch_next(const Kernel& kernel, const array::ArrayLaunch& launch,
                   const std::vector<const array::ArrayNode*>& nodes) const;

  struct Map {
    std::size_t input = 0;
    Dtype dtype = Dtype::Float16;
    TensorMapOf geometry;
  };

  std::string entry_;
  // The name that reaches the built-in even where a user's kernel took `entry_`, built once
  // so that a launch does not allocate it.
  std::string builtin_;
  Constants constants_;
  Dim3 grid_;
  Dim3 block_;
  std::vector<Arg> args_;
  std::vector<bool> row_major_;  // by input
  std::vector<Map> maps_;
  std::size_t shared_bytes_ = 0;
  const std::size_t* sizes_ = nullptr;  // the contract's, static
  std::size_t count_ = 0;
  std::vector<std::pair<std::int64_t, Dtype>> output_specs_;
  Stream stream_ = Stream::default_stream(0);
  std::shared_ptr<KernelCall> next_;
};

}  // namespace kreg::ops
