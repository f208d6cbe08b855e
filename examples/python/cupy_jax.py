"""The same custom kernel on CuPy arrays (on CuPy's current stream) and on JAX arrays; the
outputs are of the inputs' framework and share kreg's memory.

    python3 examples/python/cupy_jax.py
"""

import numpy as np

import kreg

axpy = kreg.metal_kernel(
    name="axpy",
    input_names=["alpha", "x", "y"],
    output_names=["out"],
    source="uint i = thread_position_in_grid.x; out[i] = alpha * x[i] + y[i];",
)


def run(x, y, alpha):
    (out,) = axpy(inputs=[alpha, x, y], output_shapes=[x.shape], output_dtypes=[x.dtype],
                  grid=(x.size, 1, 1), threadgroup=(256, 1, 1))
    return out


try:
    import cupy as cp
    x = cp.arange(4096, dtype=cp.float32)
    y = cp.ones(4096, dtype=cp.float32)
    with cp.cuda.Stream(non_blocking=True) as s:
        out = run(x, y, 0.5)
    s.synchronize()
    assert isinstance(out, cp.ndarray)
    np.testing.assert_allclose(cp.asnumpy(out), 0.5 * np.arange(4096) + 1)
    print("cupy ok")
except ImportError:
    print("cupy is not installed")

try:
    import jax.numpy as jnp
    x = jnp.arange(4096, dtype=jnp.float32)
    y = jnp.ones(4096, dtype=jnp.float32)
    out = run(x, y, 0.5)
    np.testing.assert_allclose(np.asarray(out), 0.5 * np.arange(4096) + 1)
    print("jax ok:", type(out).__name__)
except ImportError:
    print("jax is not installed")
