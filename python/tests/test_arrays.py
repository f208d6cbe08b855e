"""Arrays, dtypes and custom-kernel arguments on the CPU (no GPU needed)."""

import numpy as np
import pytest

import kreg
from conftest import requires_no_gpu


def test_dtypes_from_every_spelling():
    assert kreg.dtype("float32") is kreg.float32
    assert kreg.dtype("half") == kreg.float16 == kreg.Dtype.float16
    assert kreg.dtype(np.float32) == kreg.float32
    assert kreg.dtype(np.dtype("int8")) == kreg.int8
    assert kreg.dtype(np.ones(2, np.uint16)) == kreg.uint16
    assert kreg.dtype("bfloat16") == kreg.bfloat16
    assert kreg.float64.itemsize == 8
    assert kreg.dtype(np.complex64) == kreg.complex64 and kreg.complex64.itemsize == 8
    with pytest.raises(kreg.InvalidArgument, match="not a dtype"):
        kreg.dtype("complex128")
    with pytest.raises(ValueError):
        kreg.dtype(object())


def test_host_arrays_are_copied_in_row_major_order():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    k = kreg.array(a.T)  # a strided view
    assert k.shape == (4, 3) and k.strides == (3, 1) and k.dtype == kreg.float32
    assert not k.is_evaluated  # the values wait on the host until a kernel needs them
    a[0, 0] = 100  # a copy: later writes do not reach it
    np.testing.assert_array_equal(k.numpy(), np.arange(12, dtype=np.float32).reshape(3, 4).T)
    assert "kreg.Array(shape=(4, 3), dtype=float32" in repr(k)
    assert len(k) == 4
    z = np.array([[1 + 2j, -3.5j], [0.25, 4 - 1j]], dtype=np.complex64)
    zk = kreg.array(z.T)
    assert zk.dtype == kreg.complex64
    np.testing.assert_array_equal(zk.numpy(), z.T)


def test_python_numbers_become_scalars():
    assert kreg.array(3).dtype == kreg.int32
    assert kreg.array(2**40).dtype == kreg.int64
    assert kreg.array(1.5).dtype == kreg.float32
    assert kreg.array(True).dtype == kreg.bool_
    assert kreg.array(1.5).shape == ()


def test_unknown_objects_are_rejected_with_the_reason():
    with pytest.raises(kreg.InvalidArgument, match="is not an array"):
        kreg.array(object())


EXP = """
    uint elem = thread_position_in_grid.x;
    T tmp = inp[elem];
    out[elem] = exp(tmp);
"""


def test_metal_kernel_generates_cuda_from_mlx_arguments():
    k = kreg.metal_kernel(name="myexp", input_names=["inp"], output_names=["out"], source=EXP)
    a = np.zeros(64, np.float32)
    src = k.source(inputs=[a], output_shapes=[a.shape], output_dtypes=[a.dtype],
                   template=[("T", np.float32)])
    assert "kreg_custom_myexp" in src and "const float* __restrict__ inp" in src
    assert "float* __restrict__ out" in src
    key32 = k.cache_key(inputs=[a], output_shapes=[a.shape], output_dtypes=["float32"],
                        template=[("T", "float32")])
    key16 = k.cache_key(inputs=[a], output_shapes=[a.shape], output_dtypes=["float32"],
                        template=[("T", kreg.float16)])
    assert key32.startswith("custom_myexp_") and key32 != key16
    assert kreg.cuda_kernel is kreg.metal_kernel and kreg.custom_kernel is kreg.metal_kernel


def test_template_values_keep_their_kinds():
    k = kreg.metal_kernel("t", ["a"], ["out"], "out[0] = a[0] * N + (B ? 1 : 0);")
    a = np.ones(16, np.float32)
    src = k.source(inputs=[a], output_shapes=[(1,)], output_dtypes=["float32"],
                   template=[("N", 3), ("B", True)])
    assert "int N" in src and "bool B" in src


def test_metal_kernel_argument_checks():
    with pytest.raises(kreg.InvalidArgument):
        kreg.metal_kernel("bad name", ["a"], ["out"], "")
    with pytest.raises(kreg.InvalidArgument):
        kreg.metal_kernel("k", ["a", "a"], ["out"], "")
    with pytest.raises(kreg.InvalidArgument):
        kreg.metal_kernel("k", ["a"], [], "")
    k = kreg.metal_kernel("k", ["a"], ["out"], "out[0] = a[0];")
    a = np.ones(4, np.float32)
    with pytest.raises(kreg.InvalidArgument, match="output dtypes"):
        k(inputs=[a], output_shapes=[(4,), (4,)], output_dtypes=["float32"], grid=(4, 1, 1),
          threadgroup=(4, 1, 1))
    with pytest.raises(kreg.InvalidArgument, match="1 to 3"):
        k(inputs=[a], output_shapes=[(4,)], output_dtypes=["float32"], grid=(4, 1, 1, 1),
          threadgroup=(4, 1, 1))
    with pytest.raises(kreg.InvalidArgument, match="not a dtype"):
        k(inputs=[a], output_shapes=[(4,)], output_dtypes=["complex"], grid=(4, 1, 1),
          threadgroup=(4, 1, 1))
    with pytest.raises(kreg.InvalidArgument):
        k.source(inputs=[a, a], output_shapes=[(4,)], output_dtypes=["float32"])
    with pytest.raises(TypeError):  # MLX's arguments are keywords
        k([a], [(4,)], ["float32"], (4, 1, 1), (4, 1, 1))


@requires_no_gpu
def test_running_without_a_gpu_is_no_device():
    k = kreg.metal_kernel("k", ["a"], ["out"], "out[0] = a[0];")
    with pytest.raises(kreg.NoDevice):
        k(inputs=[np.ones(4, np.float32)], output_shapes=[(1,)], output_dtypes=["float32"],
          grid=(1, 1, 1), threadgroup=(1, 1, 1))
