#include <kreg/dlpack.hpp>

#include "array/node.hpp"
#include "cuda/context.hpp"
#include "cuda/device.hpp"
#include "cuda/stream.hpp"

#include <dlpack/dlpack.h>

#include <cstring>
#include <optional>
#include <string>
#include <vector>

namespace kreg {
namespace {

// DLPack 0.8 added booleans as type code 6; the packaged 0.6 header predates it, but
// producers such as PyTorch send it.
constexpr std::uint8_t kDLBoolCode = 6;

[[noreturn]] void invalid(const std::string& what) {
  throw Error(ErrorCode::InvalidArgument, "from_dlpack: " + what);
}

Dtype dtype_from(DLDataType type) {
  if (type.lanes != 1) invalid("vector types (lanes = " + std::to_string(type.lanes) + ")");
  const int bits = type.bits;
  switch (type.code) {
    case kDLInt:
      if (bits == 8) return Dtype::Int8;
      if (bits == 16) return Dtype::Int16;
      if (bits == 32) return Dtype::Int32;
      if (bits == 64) return Dtype::Int64;
      break;
    case kDLUInt:
      if (bits == 8) return Dtype::UInt8;
      if (bits == 16) return Dtype::UInt16;
      if (bits == 32) return Dtype::UInt32;
      if (bits == 64) return Dtype::UInt64;
      break;
    case kDLFloat:
      if (bits == 16) return Dtype::Float16;
      if (bits == 32) return Dtype::Float32;
      if (bits == 64) return Dtype::Float64;
      break;
    case kDLBfloat:
      if (bits == 16) return Dtype::BFloat16;
      break;
    case kDLComplex:
      if (bits == 64) return Dtype::Complex64;
      break;
    case kDLBoolCode:
      if (bits == 8) return Dtype::Bool;
      break;
    default: break;
  }
  invalid("unsupported dtype (code " + std::to_string(type.code) + ", " + std::to_string(bits) +
          " bits)");
}

DLDataType dtype_to(Dtype dtype) {
  const DlpackDtype d = dlpack_dtype(dtype);
  DLDataType type{};
  type.code = d.code;
  type.bits = d.bits;
  type.lanes = d.lanes;
  return type;
}

// What an exported tensor owns: its shape and strides, and a share of the array's memory.
struct Export {
  DLManagedTensor tensor{};
  std::vector<std::int64_t> shape;
  std::vector<std::int64_t> strides;
  // The array's stream outlives the memory freed on it (members go in reverse order): an
  // owned stream is not destroyed while a consumer still holds the tensor.
  std::optional<Stream> stream;
  std::shared_ptr<cuda::Buffer> buffer;
  std::optional<StreamRef> consumer;
  int device = 0;
};

void delete_export(DLManagedTensor* tensor) {
  auto* owner = static_cast<Export*>(tensor->manager_ctx);
  if (owner->consumer.has_value() && owner->buffer != nullptr) {
    // The memory is freed on its own stream: after whatever the consumer queued.
    try {
      cuda::ContextScope context(owner->device);
      cuda::order_after(owner->buffer->stream(), owner->consumer->native);
    } catch (...) {
      // No driver left (process exit): nothing runs any more either.
    }
  }
  delete owner;
}

// A host tensor's elements in row-major order, gathered through its strides.
std::vector<unsigned char> gather_host(const DLTensor& t, const Shape& shape, const Shape& strides,
                                       std::size_t element) {
  std::int64_t count = 1;
  for (const std::int64_t d : shape) count *= d;
  std::vector<unsigned char> out(static_cast<std::size_t>(count) * element);
  if (count == 0) return out;
  const auto* base = static_cast<const unsigned char*>(t.data) + t.byte_offset;
  if (strides == array::row_major_strides(shape)) {
    std::memcpy(out.data(), base, out.size());
    return out;
  }
  const std::size_t rank = shape.size();
  std::vector<std::int64_t> index(rank, 0);
  for (std::int64_t i = 0; i < count; ++i) {
    std::int64_t offset = 0;
    for (std::size_t d = 0; d < rank; ++d) offset += index[d] * strides[d];
    std::memcpy(out.data() + static_cast<std::size_t>(i) * element,
                base + offset * static_cast<std::int64_t>(element), element);
    for (std::size_t d = rank; d-- > 0;) {
      if (++index[d] < shape[d]) break;
      index[d] = 0;
    }
  }
  return out;
}

}  // namespace

DlpackDtype dlpack_dtype(Dtype dtype) noexcept {
  DlpackDtype type;
  type.bits = static_cast<std::uint8_t>(8 * size_of(dtype));
  switch (dtype) {
    case Dtype::Bool: type.code = kDLBoolCode; break;
    case Dtype::Int8:
    case Dtype::Int16:
    case Dtype::Int32:
    case Dtype::Int64: type.code = kDLInt; break;
    case Dtype::UInt8:
    case Dtype::UInt16:
    case Dtype::UInt32:
    case Dtype::UInt64: type.code = kDLUInt; break;
    case Dtype::BFloat16: type.code = kDLBfloat; break;
    case Dtype::Float16:
    case Dtype::Float32:
    case Dtype::Float64: type.code = kDLFloat; break;
    case Dtype::Complex64: type.code = kDLComplex; break;
  }
  return type;
}

Array from_dlpack(DLManagedTensor* tensor, DlpackRelease release) {
  if (tensor == nullptr) invalid("the tensor is null");
  const DLTensor& t = tensor->dl_tensor;
  const bool host = t.device.device_type == kDLCPU || t.device.device_type == kDLCUDAHost;
  if (!host && t.device.device_type != kDLCUDA && t.device.device_type != kDLCUDAManaged) {
    invalid("the tensor is neither in CUDA device memory nor on the host (device type " +
            std::to_string(static_cast<int>(t.device.device_type)) + ")");
  }
  if (t.ndim < 0 || t.ndim > 8) invalid(std::to_string(t.ndim) + " dimensions (at most 8)");
  if (t.ndim > 0 && t.shape == nullptr) invalid("the shape is missing");
  const Dtype dtype = dtype_from(t.dtype);
  if (host) {
    Shape shape(t.shape, t.shape + t.ndim);
    array::checked_size(shape, "from_dlpack: the tensor");
    const Shape strides = t.strides != nullptr ? Shape(t.strides, t.strides + t.ndim)
                                               : array::row_major_strides(shape);
    const std::vector<unsigned char> values = gather_host(t, shape, strides, size_of(dtype));
    Array array =
        Array::from_bytes(values.data(), values.size() / size_of(dtype), dtype, std::move(shape));
    if (tensor->deleter != nullptr) tensor->deleter(tensor);
    return array;
  }
  const int device = t.device.device_id;
  cuda::check_device(device);  // before the tensor is taken over

  auto node = std::make_shared<array::ArrayNode>();
  node->shape.assign(t.shape, t.shape + t.ndim);
  array::checked_size(node->shape, "from_dlpack: the tensor");
  node->strides = t.strides != nullptr ? Shape(t.strides, t.strides + t.ndim)
                                       : array::row_major_strides(node->shape);
  node->dtype = dtype;
  const Device selected = current_device();
  node->stream =
      selected == Device::gpu(device) ? current_stream() : Stream::default_stream(device);
  const std::uint64_t address = reinterpret_cast<std::uint64_t>(t.data) + t.byte_offset;
  node->buffer = cuda::Buffer::borrow(
      address, node->size() * size_of(dtype), device, node->stream.native().native,
      [tensor] {
        if (tensor->deleter != nullptr) tensor->deleter(tensor);
      },
      release == DlpackRelease::AfterStream);
  return array::ArrayAccess::make(std::move(node));
}

DLManagedTensor* to_dlpack(const Array& array, std::optional<StreamRef> consumer) {
  array.eval();
  const kreg::array::ArrayNode& node = *kreg::array::ArrayAccess::node(array);
  const int device = node.stream.device();
  {
    cuda::ContextScope context(device);
    if (consumer.has_value()) {
      cuda::order_after(consumer->native, node.stream.native().native);
    } else {
      cuda::synchronize_stream(node.stream.native().native);
    }
  }
  auto owner = std::make_unique<Export>();
  owner->shape = node.shape;
  owner->strides = node.strides;
  owner->stream = node.stream;
  owner->buffer = node.buffer;
  owner->consumer = consumer;
  owner->device = device;
  DLTensor& t = owner->tensor.dl_tensor;
  t.data = array.data();
  t.device = DLDevice{kDLCUDA, device};
  t.ndim = static_cast<int>(owner->shape.size());
  t.dtype = dtype_to(node.dtype);
  t.shape = owner->shape.data();
  t.strides = owner->strides.data();
  t.byte_offset = 0;
  owner->tensor.manager_ctx = owner.get();
  owner->tensor.deleter = delete_export;
  return &owner.release()->tensor;
}

}  // namespace kreg
