"""kreg.Registry and kreg.Kernel launches on the GPU: arguments sized by the kernel's
parameters, mismatches refused."""

import numpy as np
import pytest

import kreg
from conftest import framework, requires_gpu

pytestmark = requires_gpu

SAXPY = r"""
extern "C" __global__ void saxpy(float a, const float* x, float* y, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
"""

WIDE = r"""
extern "C" __global__ void wide(double a, long long b, short c, bool d, double* out) {
  out[0] = a; out[1] = (double)b; out[2] = c; out[3] = d ? 1 : 0;
}
"""


def test_get_and_launch_with_python_numbers(cache_dir):
    torch = framework("torch")
    r = kreg.Registry(cache_dir=cache_dir)
    r.register_source("saxpy", SAXPY)
    k = r.get("saxpy")
    assert k.parameter_sizes == [4, 8, 8, 4]
    x = torch.randn(1000, device="cuda")
    y = torch.randn(1000, device="cuda")
    want = 2.0 * x.double() + y.double()
    k(((1000 + 255) // 256,), (256,), [2.0, x, y, 1000])
    torch.cuda.current_stream().synchronize()
    np.testing.assert_allclose(y.cpu().numpy(), want.cpu().numpy(), rtol=1e-6)
    assert r.is_cached("saxpy") and r.stats().memory_hits == 0
    assert r.get("saxpy") is not None and r.stats().memory_hits == 1


def test_argument_sizes_follow_the_parameters(cache_dir):
    torch = framework("torch")
    r = kreg.Registry(cache_dir=cache_dir)
    r.register_source("wide", WIDE)
    k = r.get("wide")
    out = torch.zeros(4, device="cuda", dtype=torch.float64)
    k((1,), (1,), [1.25, -(2**40), -3, True, out])
    torch.cuda.synchronize()
    assert out.tolist() == [1.25, float(-(2**40)), -3.0, 1.0]
    k((1,), (1,), [np.float64(0.5), np.int64(7), np.int16(2), False, out])
    torch.cuda.synchronize()
    assert out.tolist() == [0.5, 7.0, 2.0, 0.0]


def test_a_numpy_scalar_is_checked_by_its_own_size(cache_dir):
    # np.float64 is also a Python float: it must not be narrowed to a 4-byte float.
    torch = framework("torch")
    r = kreg.Registry(cache_dir=cache_dir)
    r.register_source("saxpy", SAXPY)
    k = r.get("saxpy")
    x = torch.ones(8, device="cuda")
    y = torch.zeros(8, device="cuda")
    with pytest.raises(kreg.InvalidArgument, match="8-byte .*float64 for a 4-byte parameter"):
        k((1,), (8,), [np.float64(2.5), x, y, 8])
    with pytest.raises(kreg.InvalidArgument, match="8-byte"):
        k((1,), (8,), [np.float32(2.5), x, y, np.uint64(8)])
    k((1,), (8,), [np.float32(2.5), x, y, np.uint32(8)])
    torch.cuda.synchronize()
    assert y.tolist() == [2.5] * 8


def test_mismatched_arguments_are_refused(cache_dir):
    torch = framework("torch")
    r = kreg.Registry(cache_dir=cache_dir)
    r.register_source("wide", WIDE)
    k = r.get("wide")
    out = torch.zeros(4, device="cuda", dtype=torch.float64)
    with pytest.raises(kreg.InvalidArgument, match="takes 5 parameters"):
        k((1,), (1,), [1.0, 2, 3, True])
    with pytest.raises(kreg.InvalidArgument, match="does not fit"):
        k((1,), (1,), [1.0, 2, 70000, True, out])  # a short
    with pytest.raises(kreg.InvalidArgument, match="4-byte"):
        k((1,), (1,), [np.float32(1), 2, 3, True, out])  # a float for a double
    with pytest.raises(kreg.InvalidArgument):
        k((1,), (1,), [1.0, 2, 3, out, out])  # an array for a bool
    with pytest.raises(kreg.InvalidArgument):
        k((1,), (1,), [1.0, 2, 3, True, "text"])


def test_builtins_and_device_registry():
    torch = framework("torch")
    r = kreg.device_registry(0)
    assert r is kreg.device_registry(0)
    assert r.arch.startswith("sm_")
    k = r.get("powi_f32", {300: 3})
    assert k.label == "powi_f32|300:i3"
    assert k.binary.origin in ("precompiled", "disk", "compiled")
