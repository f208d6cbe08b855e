"""An MLX metal_kernel program ported to NVIDIA GPUs: the kernel definitions and calls are
MLX's, unchanged; only the import and the array creation differ.

MLX:    import mlx.core as mx; kernel = mx.fast.metal_kernel(...); a = mx.random.normal((4096,))
kreg:   import kreg;           kernel = kreg.metal_kernel(...);    a = torch.randn(4096, device="cuda")

    python3 examples/python/mlx_port.py
"""

import numpy as np
import torch

import kreg as fast  # was: from mlx.core import fast


def exp_elementwise(a):
    source = """
        uint elem = thread_position_in_grid.x;
        T tmp = inp[elem];
        out[elem] = metal::exp(tmp);
    """
    kernel = fast.metal_kernel(name="myexp", input_names=["inp"], output_names=["out"],
                               source=source)
    outputs = kernel(inputs=[a], template=[("T", torch.float32)], grid=(a.numel(), 1, 1),
                     threadgroup=(256, 1, 1), output_shapes=[a.shape], output_dtypes=[a.dtype],
                     verbose=False)
    return outputs[0]


def exp_strided(a):
    source = """
        uint elem = thread_position_in_grid.x;
        uint loc = elem_to_loc(elem, inp_shape, inp_strides, inp_ndim);
        T tmp = inp[loc];
        out[elem] = metal::exp(tmp);
    """
    kernel = fast.metal_kernel(name="myexp_strided", input_names=["inp"], output_names=["out"],
                               source=source, ensure_row_contiguous=False)
    outputs = kernel(inputs=[a], template=[("T", torch.float32)], grid=(a.numel(), 1, 1),
                     threadgroup=(256, 1, 1), output_shapes=[a.shape], output_dtypes=[a.dtype])
    return outputs[0]


a = torch.randn(64, 64, device="cuda")
np.testing.assert_allclose(exp_elementwise(a).cpu(), torch.exp(a).cpu(), rtol=1e-6)
np.testing.assert_allclose(exp_strided(a.t()).cpu(), torch.exp(a.t()).cpu(), rtol=1e-6)
print("MLX kernels ran unchanged")
