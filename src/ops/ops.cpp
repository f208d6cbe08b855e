#include <kreg/ops.hpp>

#include "ops/kernel_call.hpp"

#include <cmath>
#include <limits>
#include <string>

namespace kreg::ops {
namespace {

[[noreturn]] void invalid(const std::string& op, const std::string& what) {
  throw Error(ErrorCode::InvalidArgument, "kreg: ops::" + op + ": " + what);
}

std::string shape_text(const Shape& shape) {
  std::string out = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + "]";
}

// The entry suffix of a float dtype the built-ins have.
const char* suffix(const std::string& op, const char* name, const Array& a) {
  if (!a.valid()) invalid(op, std::string(name) + " is an empty Array handle");
  switch (a.dtype()) {
    case Dtype::Float32: return "f32";
    case Dtype::Float16: return "f16";
    case Dtype::BFloat16: return "bf16";
    default: break;
  }
  invalid(op, std::string(name) + " is " + to_string(a.dtype()) +
                  "; float32, float16 or bfloat16 are supported");
}

// Elementwise kernels: 256 threads, eight elements each, the grid covering everything once.
Dim3 elementwise_grid(std::int64_t n) {
  constexpr std::int64_t kPerBlock = std::int64_t{256} * 8;
  const std::int64_t blocks = (n + kPerBlock - 1) / kPerBlock;
  return Dim3{static_cast<unsigned>(std::min<std::int64_t>(blocks, 0x7fffffff))};
}

Array binary(const std::string& op, const Array& a, const Array& b) {
  const char* type = suffix(op, "a", a);
  suffix(op, "b", b);
  if (a.dtype() != b.dtype()) {
    invalid(op, std::string("a is ") + to_string(a.dtype()) + " but b is " + to_string(b.dtype()));
  }
  std::uint64_t period = 0;
  if (b.shape() != a.shape()) {
    const bool row =
        b.ndim() == 1 && a.ndim() >= 1 && b.shape()[0] == a.shape().back() && b.shape()[0] > 0;
    if (!row) {
      invalid(op, "b's shape " + shape_text(b.shape()) + " is neither a's " +
                      shape_text(a.shape()) + " nor a row of its last dimension");
    }
    period = static_cast<std::uint64_t>(b.shape()[0]);
  }
  const std::int64_t n = a.size();
  auto call =
      std::make_shared<KernelCall>(op + "_" + type, Constants{}, elementwise_grid(n), Dim3{256});
  call->input(a);
  call->input(b);
  call->output(0);
  call->value(static_cast<std::uint64_t>(n));
  call->value(period);
  return KernelCall::launch(call, {{a.shape(), a.dtype()}})[0];
}

std::pair<Array, Array> norm(const std::string& op, const Array& x, const Array* residual,
                             const std::optional<Array>& weight, float eps) {
  const char* type = suffix(op, "x", x);
  if (x.ndim() < 1) invalid(op, "x must have at least one dimension");
  const std::int64_t cols = x.shape().back();
  if (cols <= 0 || cols > std::numeric_limits<unsigned>::max()) {
    invalid(op, "the last dimension (" + std::to_string(cols) + ") must be between 1 and 2^32-1");
  }
  if (!std::isfinite(eps) || eps < 0) invalid(op, "eps must be finite and not negative");
  if (weight.has_value()) {
    suffix(op, "weight", *weight);
    if (weight->dtype() != x.dtype() || weight->shape() != Shape{cols}) {
      invalid(op, "weight must be 1-D of " + std::to_string(cols) + " " + to_string(x.dtype()) +
                      " elements; it is " + shape_text(weight->shape()) + " of " +
                      to_string(weight->dtype()));
    }
  }
  if (residual != nullptr) {
    suffix(op, "residual", *residual);
    if (residual->dtype() != x.dtype() || residual->shape() != x.shape()) {
      invalid(op, "residual must have x's shape and dtype");
    }
  }
  const std::int64_t rows = x.size() / cols;
  if (rows > 0x7fffffff) invalid(op, "too many rows (" + std::to_string(rows) + ")");
  // One block per row, in whole warps, with up to four vectors of eight elements per thread:
  // rows of up to 32768 elements stay in registers (see kernels/rms_norm.cu).
  const std::int64_t per_thread = (cols + 31) / 32;
  const auto threads =
      static_cast<unsigned>(std::clamp<std::int64_t>((per_thread + 31) / 32 * 32, 32, 1024));
  // Only what differs from the source's defaults, so that the keys are those of the listed
  // specializations, which are precompiled.
  Constants constants;
  if (!weight.has_value()) constants.bools.emplace_back(200, false);
  if (residual != nullptr) constants.bools.emplace_back(201, true);
  auto call = std::make_shared<KernelCall>(std::string("rms_norm_") + type, constants,
                                           Dim3{static_cast<unsigned>(rows)}, Dim3{threads});
  call->input(x);
  if (weight.has_value()) {
    call->input(*weight);
  } else {
    call->null();
  }
  if (residual != nullptr) {
    call->input(*residual);
  } else {
    call->null();
  }
  call->output(0);
  if (residual != nullptr) {
    call->output(1);
  } else {
    call->null();
  }
  call->value(static_cast<unsigned>(cols));
  call->value(eps);
  std::vector<std::pair<Shape, Dtype>> outputs{{x.shape(), x.dtype()}};
  if (residual != nullptr) outputs.emplace_back(x.shape(), x.dtype());
  std::vector<Array> out = KernelCall::launch(call, outputs);
  return {out[0], residual != nullptr ? out[1] : Array()};
}

}  // namespace

Array add(const Array& a, const Array& b) {
  return binary("add", a, b);
}
Array sub(const Array& a, const Array& b) {
  return binary("sub", a, b);
}
Array mul(const Array& a, const Array& b) {
  return binary("mul", a, b);
}
Array div(const Array& a, const Array& b) {
  return binary("div", a, b);
}

Array scale(const Array& a, float s) {
  const char* type = suffix("scale", "a", a);
  const std::int64_t n = a.size();
  auto call = std::make_shared<KernelCall>(std::string("scale_") + type, Constants{},
                                           elementwise_grid(n), Dim3{256});
  call->input(a);
  call->value(s);
  call->output(0);
  call->value(static_cast<std::uint64_t>(n));
  return KernelCall::launch(call, {{a.shape(), a.dtype()}})[0];
}

Array cast(const Array& a, Dtype dtype) {
  const char* from = suffix("cast", "a", a);
  if (a.dtype() == dtype) return a;
  const bool supported =
      (a.dtype() == Dtype::Float32) != (dtype == Dtype::Float32) &&
      (dtype == Dtype::Float32 || dtype == Dtype::Float16 || dtype == Dtype::BFloat16);
  if (!supported) {
    invalid("cast", std::string("from ") + to_string(a.dtype()) + " to " + to_string(dtype) +
                        " is not supported (float32 to or from float16 and bfloat16 are)");
  }
  const char* to = dtype == Dtype::Float32 ? "f32" : dtype == Dtype::Float16 ? "f16" : "bf16";
  const std::int64_t n = a.size();
  auto call = std::make_shared<KernelCall>(std::string("cast_") + from + "_" + to, Constants{},
                                           elementwise_grid(n), Dim3{256});
  call->input(a);
  call->output(0);
  call->value(static_cast<std::uint64_t>(n));
  return KernelCall::launch(call, {{a.shape(), dtype}})[0];
}

Array rms_norm(const Array& x, const std::optional<Array>& weight, float eps) {
  return norm("rms_norm", x, nullptr, weight, eps).first;
}

std::pair<Array, Array> add_rms_norm(const Array& x, const Array& residual,
                                     const std::optional<Array>& weight, float eps) {
  return norm("add_rms_norm", x, &residual, weight, eps);
}

}  // namespace kreg::ops
