"""Bodies beyond MLX's documented examples, on the GPU: a body written for MLX's cuda_kernel
(cooperative groups, a scalar read as d[0]), Metal's simdgroup matrices, and complex64
tensors, each against a float64 reference."""

import numpy as np

import kreg
from conftest import framework, requires_gpu

pytestmark = requires_gpu


def test_a_body_written_for_mlx_cuda_kernel():
    torch = framework("torch")
    kernel = kreg.cuda_kernel(
        name="scaled_exp",
        input_names=["inp", "scale"],
        output_names=["out"],
        source="""
            auto elem = cooperative_groups::this_grid().thread_rank();
            out[elem] = exp(inp[elem]) * scale[0];
        """,
    )
    a = torch.randn(1000, device="cuda")
    (out,) = kernel(inputs=[a, 0.5], grid=(1000, 1, 1), threadgroup=(128, 1, 1),
                    output_shapes=[a.shape], output_dtypes=[a.dtype])
    np.testing.assert_allclose(out.cpu().numpy(), np.exp(a.double().cpu().numpy()) * 0.5,
                               rtol=1e-6)


def test_simdgroup_matrices_multiply():
    torch = framework("torch")
    kernel = kreg.metal_kernel(
        name="matmul8",
        input_names=["a", "b"],
        output_names=["c"],
        source="""
            simdgroup_float8x8 x, y, acc = simdgroup_float8x8(0);
            simdgroup_load(x, a, 8);
            simdgroup_load(y, b, 8);
            simdgroup_multiply_accumulate(acc, x, y, acc);
            simdgroup_store(acc, c, 8);
        """,
        header="#include <metal_simdgroup_matrix>\nusing namespace metal;\n",
    )
    a = torch.randn(8, 8, device="cuda")
    b = torch.randn(8, 8, device="cuda")
    (c,) = kernel(inputs=[a, b], grid=(32, 1, 1), threadgroup=(32, 1, 1),
                  output_shapes=[(8, 8)], output_dtypes=[torch.float32], init_value=float("nan"))
    want = a.double().cpu().numpy() @ b.double().cpu().numpy()
    np.testing.assert_allclose(c.cpu().numpy(), want, rtol=1e-5, atol=1e-5)


def test_complex64_tensors_in_and_out():
    torch = framework("torch")
    kernel = kreg.metal_kernel(
        name="complex_scale",
        input_names=["z", "k"],
        output_names=["out"],
        source="""
            uint i = thread_position_in_grid.x;
            out[i] = z[i] * complex64_t(k[i]) + conj(z[i]);
        """,
    )
    z = torch.randn(300, dtype=torch.complex64, device="cuda")
    k = torch.randn(300, device="cuda")
    (out,) = kernel(inputs=[z, k], grid=(300, 1, 1), threadgroup=(64, 1, 1),
                    output_shapes=[z.shape], output_dtypes=[torch.complex64])
    assert out.dtype == torch.complex64
    zd = z.cpu().numpy().astype(np.complex128)
    want = zd * k.double().cpu().numpy() + np.conj(zd)
    np.testing.assert_allclose(out.cpu().numpy(), want, rtol=1e-5, atol=1e-6)
