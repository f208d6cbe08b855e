#include <kreg/array.hpp>

#include "array/node.hpp"
#include "cuda/context.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <string>

namespace kreg {
namespace array {

constexpr std::size_t kMaxDims = 8;

std::int64_t ArrayNode::size() const noexcept {
  std::int64_t n = 1;
  for (std::int64_t d : shape) n *= d;
  return n;
}

bool ArrayNode::row_contiguous() const noexcept {
  std::int64_t expected = 1;
  for (std::size_t i = shape.size(); i-- > 0;) {
    if (shape[i] != 1 && strides[i] != expected) return false;
    expected *= shape[i];
  }
  return true;
}

Shape row_major_strides(const Shape& shape) {
  Shape strides(shape.size());
  std::int64_t stride = 1;
  for (std::size_t i = shape.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= shape[i];
  }
  return strides;
}

std::int64_t checked_size(const Shape& shape, const char* what) {
  if (shape.size() > kMaxDims) {
    throw Error(ErrorCode::InvalidArgument, std::string(what) + " has " +
                                                std::to_string(shape.size()) +
                                                " dimensions; at most 8 are supported");
  }
  std::int64_t n = 1;
  for (std::int64_t d : shape) {
    if (d < 0) {
      throw Error(ErrorCode::InvalidArgument,
                  std::string(what) + " has a negative dimension (" + std::to_string(d) + ")");
    }
    if (d != 0 && n > INT64_MAX / d) {
      throw Error(ErrorCode::InvalidArgument, std::string(what) + " is too large");
    }
    n *= d;
  }
  return n;
}

}  // namespace array

namespace {

std::shared_ptr<array::ArrayNode> new_node(Shape shape, Dtype dtype, const char* what) {
  array::checked_size(shape, what);
  auto node = std::make_shared<array::ArrayNode>();
  node->strides = array::row_major_strides(shape);
  node->shape = std::move(shape);
  node->dtype = dtype;
  // Under a CPU scope the values wait on the host; apply is what refuses to run there.
  node->stream =
      current_device().type == Device::Type::Cpu ? Stream::default_stream(0) : current_stream();
  return node;
}

// A view shares the root's data; views of views point at the root directly.
std::shared_ptr<array::ArrayNode> new_view(const std::shared_ptr<array::ArrayNode>& of) {
  auto view = std::make_shared<array::ArrayNode>();
  view->dtype = of->dtype;
  view->stream = of->stream;
  view->offset = of->offset;
  view->base = of->base != nullptr ? of->base : of;
  view->buffer = of->buffer;
  return view;
}

}  // namespace

Array Array::from_bytes(const void* data, std::size_t count, Dtype dtype, Shape shape) {
  auto node = new_node(std::move(shape), dtype, "Array::from_data: the shape");
  if (static_cast<std::uint64_t>(node->size()) != count) {
    throw Error(ErrorCode::InvalidArgument, "Array::from_data: " + std::to_string(count) +
                                                " values do not fill the shape, which holds " +
                                                std::to_string(node->size()));
  }
  const std::size_t bytes = count * size_of(dtype);
  node->host.resize(bytes);
  if (bytes > 0) std::memcpy(node->host.data(), data, bytes);
  return Array(std::move(node));
}

Array Array::empty(Shape shape, Dtype dtype) {
  return Array(new_node(std::move(shape), dtype, "Array::empty: the shape"));
}

const array::ArrayNode& Array::checked() const {
  if (node_ == nullptr) {
    throw Error(ErrorCode::InvalidArgument, "use of an empty Array handle");
  }
  return *node_;
}

const Shape& Array::shape() const {
  return checked().shape;
}
const Shape& Array::strides() const {
  return checked().strides;
}
Dtype Array::dtype() const {
  return checked().dtype;
}
std::int64_t Array::size() const {
  return checked().size();
}
int Array::ndim() const {
  return static_cast<int>(checked().shape.size());
}
std::size_t Array::nbytes() const {
  return static_cast<std::size_t>(size()) * size_of(dtype());
}
bool Array::is_row_contiguous() const {
  return checked().row_contiguous();
}
bool Array::is_evaluated() const {
  return checked().evaluated();
}
const Stream& Array::stream() const {
  return checked().stream;
}

void Array::eval() const {
  checked();
  array::evaluate(node_);
}

void eval(const std::vector<Array>& arrays) {
  std::vector<std::shared_ptr<array::ArrayNode>> nodes;
  nodes.reserve(arrays.size());
  for (const Array& a : arrays) {
    if (!a.valid()) throw Error(ErrorCode::InvalidArgument, "eval of an empty Array handle");
    nodes.push_back(array::ArrayAccess::node(a));
  }
  array::evaluate(nodes);
}

void Array::check_dtype(Dtype wanted) const {
  if (dtype() != wanted) {
    throw Error(ErrorCode::InvalidArgument, std::string("the array holds ") + to_string(dtype()) +
                                                ", not " + to_string(wanted));
  }
}

void Array::copy_to_host(void* out) const {
  checked();
  const std::vector<unsigned char> bytes = array::host_values(node_);
  if (!bytes.empty()) std::memcpy(out, bytes.data(), bytes.size());
}

void* Array::data() const {
  eval();
  const array::ArrayNode& node = *node_;
  const auto address =
      node.buffer->address() + static_cast<std::uint64_t>(node.offset) * size_of(node.dtype);
  return reinterpret_cast<void*>(address);  // NOLINT(performance-no-int-to-ptr)
}

Array Array::transpose() const {
  std::vector<int> axes(static_cast<std::size_t>(ndim()));
  std::iota(axes.rbegin(), axes.rend(), 0);
  return transpose(axes);
}

Array Array::transpose(const std::vector<int>& axes) const {
  const array::ArrayNode& node = checked();
  const std::size_t n = node.shape.size();
  std::vector<bool> seen(n, false);
  if (axes.size() != n) {
    throw Error(ErrorCode::InvalidArgument, "transpose: " + std::to_string(axes.size()) +
                                                " axes given for an array of " + std::to_string(n) +
                                                " dimensions");
  }
  auto view = new_view(node_);
  for (int axis : axes) {
    if (axis < 0 || static_cast<std::size_t>(axis) >= n || seen[axis]) {
      throw Error(ErrorCode::InvalidArgument,
                  "transpose: the axes are not a permutation of 0.." + std::to_string(n - 1));
    }
    seen[axis] = true;
    view->shape.push_back(node.shape[axis]);
    view->strides.push_back(node.strides[axis]);
  }
  return Array(std::move(view));
}

Array Array::slice(int axis, std::int64_t start, std::int64_t stop, std::int64_t step) const {
  const array::ArrayNode& node = checked();
  const int n = static_cast<int>(node.shape.size());
  if (axis < 0 || axis >= n) {
    throw Error(ErrorCode::InvalidArgument, "slice: axis " + std::to_string(axis) +
                                                " is out of range for " + std::to_string(n) +
                                                " dimensions");
  }
  if (step <= 0) {
    throw Error(ErrorCode::InvalidArgument, "slice: the step must be positive");
  }
  const std::int64_t dim = node.shape[axis];
  auto clamp = [dim](std::int64_t i) {
    return std::clamp(i < 0 ? i + dim : i, std::int64_t{0}, dim);
  };
  start = clamp(start);
  stop = std::max(clamp(stop), start);
  auto view = new_view(node_);
  view->shape = node.shape;
  view->strides = node.strides;
  view->shape[axis] = (stop - start + step - 1) / step;
  view->strides[axis] = node.strides[axis] * step;
  view->offset += start * node.strides[axis];
  return Array(std::move(view));
}

Array Array::reshape(Shape shape) const {
  const array::ArrayNode& node = checked();
  const std::int64_t size = array::checked_size(shape, "reshape");
  if (size != node.size()) {
    throw Error(ErrorCode::InvalidArgument, "reshape: " + std::to_string(node.size()) +
                                                " elements cannot take a shape of " +
                                                std::to_string(size));
  }
  const std::shared_ptr<array::ArrayNode> from =
      node.row_contiguous() ? node_ : array::contiguous(node_, node.stream);
  auto view = new_view(from);
  view->strides = array::row_major_strides(shape);
  view->shape = std::move(shape);
  return Array(std::move(view));
}

}  // namespace kreg
