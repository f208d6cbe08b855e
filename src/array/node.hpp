#pragma once
// The shared state behind kreg::Array, and the work that produces pending arrays.

#include <kreg/array.hpp>

#include "cuda/memory.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace kreg::array {

struct ArrayNode;

// Work that computes one or more arrays from others: a custom kernel launch.
class Primitive {
 public:
  virtual ~Primitive() = default;
  // Called once every input is evaluated, with the outputs still alive (in output order;
  // null for an output nobody holds any more). Must give each live output a buffer, or
  // throw and leave them pending.
  virtual void run(const std::vector<std::shared_ptr<ArrayNode>>& live) = 0;

  std::vector<Array> inputs;
  std::vector<std::weak_ptr<ArrayNode>> outputs;  // weak: outputs own their producer
};

struct ArrayNode {
  Shape shape;
  Shape strides;            // elements
  std::int64_t offset = 0;  // elements from the buffer's start to element 0
  Dtype dtype = Dtype::Float32;
  Stream stream = Stream::default_stream(0);

  // Exactly one of these describes where the data is, or comes from:
  std::shared_ptr<cuda::Buffer> buffer;  // evaluated
  std::vector<unsigned char> host;       // from_data, row-major, not on the GPU yet
  std::shared_ptr<Primitive> producer;   // pending work
  std::shared_ptr<ArrayNode> base;       // a view of another array

  bool evaluated() const noexcept { return buffer != nullptr; }
  std::int64_t size() const noexcept;
  bool row_contiguous() const noexcept;
};

// Row-major strides of `shape`.
Shape row_major_strides(const Shape& shape);
// Throws InvalidArgument for a negative dimension or more than 8 of them; returns the size.
std::int64_t checked_size(const Shape& shape, const char* what);

// Evaluates the nodes and everything they depend on. Each primitive runs once.
void evaluate(const std::vector<std::shared_ptr<ArrayNode>>& nodes);
void evaluate(const std::shared_ptr<ArrayNode>& node);
// A row-major, evaluated copy of `node` on `stream` (or `node` itself when it already is).
std::shared_ptr<ArrayNode> contiguous(const std::shared_ptr<ArrayNode>& node, const Stream& stream);
// The elements of a node, row-major, on the host: from its host values when it still has
// them, else copied from the GPU (waiting for its stream).
std::vector<unsigned char> host_values(const std::shared_ptr<ArrayNode>& node);

// Array's friend: the node behind an Array, and an Array around a node.
struct ArrayAccess {
  static const std::shared_ptr<ArrayNode>& node(const Array& a) noexcept { return a.node_; }
  static Array make(std::shared_ptr<ArrayNode> node) { return Array(std::move(node)); }
};

}  // namespace kreg::array
