#pragma once
// One pending op: a built-in kernel, its constants, its launch geometry and its arguments
// in order, launched once its inputs are evaluated.

#include <kreg/array.hpp>
#include <kreg/constants.hpp>
#include <kreg/registry.hpp>
#include <kreg/types.hpp>

#include "array/node.hpp"

#include <cstddef>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace kreg::ops {

class KernelCall final : public detail::Primitive {
 public:
  struct Arg {
    enum class Kind { Input, Output, Null, Value } kind = Kind::Value;
    std::size_t index = 0;  // of the input or output
    unsigned char bytes[8] = {};
    std::size_t size = 0;
  };

  // Where and how: the built-in entry, its constants, the geometry.
  KernelCall(std::string entry, Constants constants, Dim3 grid, Dim3 block)
      : entry_(std::move(entry)),
        builtin_(std::string(kBuiltinPrefix) + entry_),
        constants_(std::move(constants)),
        grid_(grid),
        block_(block) {}

  void input(const Array& array);  // the next input, passed as a pointer
  void output(std::size_t index);  // the pointer of output `index`
  void null();                     // a null pointer (an argument the constants switch off)
  template <class T>
  void value(T v) {
    static_assert(sizeof(T) <= 8, "values are at most 8 bytes");
    Arg arg;
    std::memcpy(arg.bytes, &v, sizeof(T));
    arg.size = sizeof(T);
    args_.push_back(arg);
  }

  // The pending outputs, on the current stream. Throws InvalidArgument under a CPU scope or
  // for an input on another GPU.
  static std::vector<Array> launch(const std::shared_ptr<KernelCall>& call,
                                   const std::vector<std::pair<Shape, Dtype>>& outputs);

  void run(const std::vector<std::shared_ptr<detail::ArrayNode>>& live) override;

 private:
  std::string entry_;
  // The name that reaches the built-in even where a user's kernel took `entry_`, built once
  // so that a launch does not allocate it.
  std::string builtin_;
  Constants constants_;
  Dim3 grid_;
  Dim3 block_;
  std::vector<Arg> args_;
  std::vector<std::pair<std::int64_t, Dtype>> output_specs_;
  Stream stream_ = Stream::default_stream(0);
};

}  // namespace kreg::ops
