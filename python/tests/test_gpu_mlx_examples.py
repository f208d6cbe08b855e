"""MLX's documented metal_kernel examples, ported by changing the import and the array
creation only: elementwise exp, a strided input through elem_to_loc, a simd reduction, and
an atomic histogram with init_value."""

import numpy as np

import kreg as mx_fast  # stands in for `mx.fast`: the calls below are MLX's
from conftest import framework, requires_gpu

pytestmark = requires_gpu


def test_elementwise_exp():
    torch = framework("torch")
    source = """
        uint elem = thread_position_in_grid.x;
        T tmp = inp[elem];
        out[elem] = metal::exp(tmp);
    """
    kernel = mx_fast.metal_kernel(
        name="myexp",
        input_names=["inp"],
        output_names=["out"],
        source=source,
    )
    a = torch.randn(4, 16, device="cuda")
    outputs = kernel(
        inputs=[a],
        template=[("T", torch.float32)],
        grid=(a.numel(), 1, 1),
        threadgroup=(256, 1, 1),
        output_shapes=[a.shape],
        output_dtypes=[a.dtype],
        verbose=False,
    )
    np.testing.assert_allclose(outputs[0].cpu().numpy(), np.exp(a.double().cpu().numpy()),
                               rtol=1e-6)


def test_strided_input_through_elem_to_loc():
    torch = framework("torch")
    source = """
        uint elem = thread_position_in_grid.x;
        // Utils from `mlx/backend/metal/kernels/utils.h` are automatically included
        uint loc = elem_to_loc(elem, inp_shape, inp_strides, inp_ndim);
        T tmp = inp[loc];
        // Output arrays are always row contiguous
        out[elem] = metal::exp(tmp);
    """
    kernel = mx_fast.metal_kernel(
        name="myexp_strided",
        input_names=["inp"],
        output_names=["out"],
        source=source,
        ensure_row_contiguous=False,
    )
    base = torch.randn(8, 32, 4, device="cuda")
    a = base.permute(2, 0, 1)[:, ::2, 1:]  # strided, offset, not contiguous
    assert not a.is_contiguous()
    outputs = kernel(
        inputs=[a],
        template=[("T", torch.float32)],
        grid=(a.numel(), 1, 1),
        threadgroup=(256, 1, 1),
        output_shapes=[a.shape],
        output_dtypes=[a.dtype],
    )
    np.testing.assert_allclose(outputs[0].cpu().numpy(), np.exp(a.double().cpu().numpy()),
                               rtol=1e-6)


def test_simd_reduction():
    torch = framework("torch")
    # One sum per simdgroup (32 lanes), written by its first lane.
    source = """
        uint elem = thread_position_in_grid.x;
        float v = inp[elem];
        float total = simd_sum(v);
        if (thread_index_in_simdgroup == 0) {
            out[elem / threads_per_simdgroup] = total;
        }
    """
    kernel = mx_fast.metal_kernel(
        name="simd_sums", input_names=["inp"], output_names=["out"], source=source)
    a = torch.randn(64 * 32, device="cuda")
    (out,) = kernel(inputs=[a], grid=(a.numel(), 1, 1), threadgroup=(256, 1, 1),
                    output_shapes=[(64,)], output_dtypes=[torch.float32])
    want = a.double().reshape(64, 32).sum(dim=1)
    np.testing.assert_allclose(out.cpu().numpy(), want.cpu().numpy(), rtol=1e-5, atol=1e-5)


def test_atomic_histogram_with_init_value():
    torch = framework("torch")
    source = """
        uint elem = thread_position_in_grid.x;
        int bin = int(metal::clamp(inp[elem], 0.0f, 0.9999f) * float(NBINS));
        atomic_fetch_add_explicit(&out[bin], 1, memory_order_relaxed);
    """
    kernel = mx_fast.metal_kernel(
        name="histogram",
        input_names=["inp"],
        output_names=["out"],
        source=source,
        atomic_outputs=True,
    )
    a = torch.rand(100000, device="cuda")
    (counts,) = kernel(
        inputs=[a],
        template=[("NBINS", 16)],
        grid=(a.numel(), 1, 1),
        threadgroup=(256, 1, 1),
        output_shapes=[(16,)],
        output_dtypes=[torch.int32],
        init_value=0,
    )
    want = np.histogram(np.clip(a.cpu().numpy(), 0, 0.9999), bins=16, range=(0, 1))[0]
    assert counts.cpu().numpy().tolist() == want.tolist()
    assert int(counts.sum()) == a.numel()
