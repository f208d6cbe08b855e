"""Custom kernels on torch, CuPy, JAX and numpy arrays, on the GPU: values against float64
references, memory shared (never copied), work ordered on the caller's stream."""

import threading

import numpy as np
import pytest

import kreg
from conftest import framework, requires_gpu

pytestmark = requires_gpu

EXP = """
    uint elem = thread_position_in_grid.x;
    out[elem] = exp(inp[elem]);
"""

AXPBY = """
    uint i = thread_position_in_grid.x;
    out[i] = alpha[0] * x[i] + y[i];
"""


def exp_kernel():
    return kreg.metal_kernel(name="myexp", input_names=["inp"], output_names=["out"], source=EXP)


def test_torch_round_trip_against_float64():
    torch = framework("torch")
    k = exp_kernel()
    for dtype, tol in ((torch.float32, 1e-6), (torch.float16, 1e-3), (torch.bfloat16, 1e-2)):
        a = torch.randn(10007, device="cuda").to(dtype)
        (out,) = k(inputs=[a], output_shapes=[a.shape], output_dtypes=[a.dtype],
                   grid=(a.numel(), 1, 1), threadgroup=(256, 1, 1))
        assert isinstance(out, torch.Tensor) and out.is_cuda and out.dtype == dtype
        want = np.exp(a.double().cpu().numpy())
        np.testing.assert_allclose(out.double().cpu().numpy(), want, rtol=tol * 4, atol=tol)


def test_torch_inputs_and_outputs_share_memory():
    torch = framework("torch")
    a = torch.randn(4096, device="cuda")
    assert kreg.array(a).data_ptr() == a.data_ptr()  # an input is read in place
    view = a[1::2]
    assert kreg.array(view).data_ptr() == view.data_ptr() and kreg.array(view).strides == (2,)
    k = exp_kernel()
    before = torch.cuda.memory_allocated()
    (out,) = k(inputs=[a], output_shapes=[a.shape], output_dtypes=[a.dtype],
               grid=(a.numel(), 1, 1), threadgroup=(256, 1, 1))
    # The output is kreg's memory handed over through DLPack: torch allocated nothing.
    assert torch.cuda.memory_allocated() == before
    arr = kreg.array(out)
    assert arr.data_ptr() == out.data_ptr()
    # kreg.Array to torch through DLPack keeps the pointer.
    assert torch.from_dlpack(arr).data_ptr() == arr.data_ptr()
    torch.testing.assert_close(out, torch.exp(a))


def test_torch_non_default_stream_orders_without_a_device_sync():
    torch = framework("torch")
    k = exp_kernel()
    s = torch.cuda.Stream()
    torch.cuda.synchronize()
    with torch.cuda.stream(s):
        x = torch.zeros(1 << 20, device="cuda")
        torch.cuda._sleep(50_000_000)  # keeps s busy, so x is written late
        x.fill_(1.0)
        (y,) = k(inputs=[x], output_shapes=[x.shape], output_dtypes=[x.dtype],
                 grid=(x.numel(), 1, 1), threadgroup=(256, 1, 1))
        z = y * 2  # torch work after kreg's, on the same stream
    s.synchronize()  # only s: the default stream is never synchronized
    assert torch.allclose(y, torch.full_like(y, float(np.exp(1.0))))
    assert torch.allclose(z, 2 * y)


def test_explicit_stream_argument():
    torch = framework("torch")
    k = exp_kernel()
    s = torch.cuda.Stream()
    x = torch.ones(1000, device="cuda")
    torch.cuda.synchronize()
    (y,) = k(inputs=[x], output_shapes=[x.shape], output_dtypes=[x.dtype], grid=(1000, 1, 1),
             threadgroup=(128, 1, 1), stream=s)
    s.synchronize()
    assert torch.allclose(y, torch.exp(x))
    ks = kreg.Stream(0)
    (y2,) = k(inputs=[x], output_shapes=[x.shape], output_dtypes=[x.dtype], grid=(1000, 1, 1),
              threadgroup=(128, 1, 1), stream=ks)
    ks.synchronize()
    assert torch.allclose(y2, torch.exp(x))


def test_cupy_round_trip_and_stream():
    cp = framework("cupy")
    k = kreg.metal_kernel("axpby", ["alpha", "x", "y"], ["out"], AXPBY)
    x = cp.random.standard_normal(5000, dtype=cp.float32)
    y = cp.random.standard_normal(5000, dtype=cp.float32)
    alpha = cp.asarray([2.5], dtype=cp.float32)
    s = cp.cuda.Stream(non_blocking=True)
    with s:
        (out,) = k(inputs=[alpha, x, y], output_shapes=[x.shape], output_dtypes=[x.dtype],
                   grid=(5000, 1, 1), threadgroup=(256, 1, 1))
    s.synchronize()
    assert isinstance(out, cp.ndarray)
    want = 2.5 * cp.asnumpy(x).astype(np.float64) + cp.asnumpy(y)
    np.testing.assert_allclose(cp.asnumpy(out), want, rtol=1e-6, atol=1e-6)
    assert kreg.array(x).data_ptr() == x.data.ptr
    assert kreg.array(out).data_ptr() == out.data.ptr


def test_jax_round_trip():
    jax = framework("jax")
    jnp = jax.numpy
    k = exp_kernel()
    a = jnp.linspace(-3, 3, 3000, dtype=jnp.float32)
    (out,) = k(inputs=[a], output_shapes=[a.shape], output_dtypes=[a.dtype],
               grid=(3000, 1, 1), threadgroup=(256, 1, 1))
    assert isinstance(out, jax.Array)
    np.testing.assert_allclose(np.asarray(out), np.exp(np.asarray(a, np.float64)), rtol=1e-6)
    assert kreg.array(a).data_ptr() == a.unsafe_buffer_pointer()


def test_numpy_in_numpy_out():
    k = exp_kernel()
    a = np.linspace(-2, 2, 1000, dtype=np.float32)
    (out,) = k(inputs=[a], output_shapes=[a.shape], output_dtypes=[np.float32],
               grid=(1000, 1, 1), threadgroup=(128, 1, 1))
    assert isinstance(out, np.ndarray)
    np.testing.assert_allclose(out, np.exp(a.astype(np.float64)), rtol=1e-6)


def test_kreg_array_exports_to_every_framework():
    torch = framework("torch")
    a = kreg.array(np.arange(10, dtype=np.float32))
    t = torch.from_dlpack(a)
    assert t.data_ptr() == a.data_ptr() and t.tolist() == list(range(10))
    try:
        import cupy as cp
        c = cp.from_dlpack(a)
        assert c.data.ptr == a.data_ptr()
    except ImportError:
        pass


def test_scalar_inputs_and_init_value():
    torch = framework("torch")
    k = kreg.metal_kernel("addc", ["x", "c"], ["out"],
                          "uint i = thread_position_in_grid.x; out[i] += x[i] + c;")
    x = torch.arange(100, device="cuda", dtype=torch.float32)
    (out,) = k(inputs=[x, 2.0], output_shapes=[(100,)], output_dtypes=[torch.float32],
               grid=(100, 1, 1), threadgroup=(32, 1, 1), init_value=1.0)
    assert torch.equal(out, x + 3.0)


def test_outputs_are_poisoned_before_a_run_unless_init_value():
    # A body that writes only half its output: with init_value the rest is defined.
    torch = framework("torch")
    k = kreg.metal_kernel("half_only", ["x"], ["out"],
                          "uint i = thread_position_in_grid.x; if (i % 2 == 0) out[i] = x[i];")
    x = torch.ones(64, device="cuda")
    (out,) = k(inputs=[x], output_shapes=[(64,)], output_dtypes=["float32"], grid=(64, 1, 1),
               threadgroup=(64, 1, 1), init_value=-7.0)
    want = torch.where(torch.arange(64, device="cuda") % 2 == 0, 1.0, -7.0)
    assert torch.equal(out, want)


def test_compile_error_carries_the_numbered_source():
    torch = framework("torch")
    k = kreg.metal_kernel("broken_body", ["x"], ["out"], "out[0] = x[0] +;")
    x = torch.ones(16, device="cuda")
    with pytest.raises(kreg.CompileError) as e:
        k(inputs=[x], output_shapes=[(1,)], output_dtypes=["float32"], grid=(1, 1, 1),
          threadgroup=(1, 1, 1))
    assert "error" in e.value.log
    assert e.value.source is not None and " | " in e.value.source and "out[0] = x[0] +;" in e.value.source


def test_many_threads_call_one_kernel():
    torch = framework("torch")
    k = exp_kernel()
    errors = []
    results = {}

    def work(t):
        try:
            s = torch.cuda.Stream()
            with torch.cuda.stream(s):
                x = torch.full((2048,), 0.001 * t, device="cuda")
                for _ in range(50):
                    (y,) = k(inputs=[x], output_shapes=[x.shape], output_dtypes=[x.dtype],
                             grid=(2048, 1, 1), threadgroup=(256, 1, 1))
            s.synchronize()
            results[t] = y
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for t, y in results.items():
        assert torch.allclose(y, torch.full_like(y, float(np.exp(0.001 * t))), rtol=1e-6)
