"""kreg: a runtime registry of CUDA kernels, from Python.

kreg compiles CUDA C++ with NVRTC when a kernel is first needed, caches the binary in memory
and on disk, and runs custom kernels written as a body string (MLX's ``metal_kernel``
signature) on torch, CuPy, JAX and numpy arrays without copying GPU memory.

    import kreg, torch
    kernel = kreg.metal_kernel(
        name="myexp", input_names=["inp"], output_names=["out"],
        source="uint elem = thread_position_in_grid.x; out[elem] = metal::exp(inp[elem]);")
    a = torch.randn(4096, device="cuda")
    (b,) = kernel(inputs=[a], output_shapes=[a.shape], output_dtypes=[a.dtype],
                  grid=(a.numel(), 1, 1), threadgroup=(256, 1, 1))

See docs/python.md for the whole manual.
"""

from . import _kreg
from ._kreg import (
    Array,
    Binary,
    CompileError,
    CudaError,
    Dtype,
    Error,
    ErrorCode,
    InvalidArgument,
    Kernel,
    KernelNotFound,
    LaunchError,
    LoadError,
    MetalKernel,
    NoDevice,
    PrewarmReport,
    Registry,
    Stats,
    Stream,
    array,
    current_stream,
    device_registry,
    dtype,
    metal_kernel,
    ops,
    read_manifest,
)

__version__ = _kreg.__version__

#: MLX has both names for one API; kreg's C++ calls it CustomKernel.
cuda_kernel = metal_kernel
custom_kernel = metal_kernel

bool_ = Dtype.bool
int8 = Dtype.int8
int16 = Dtype.int16
int32 = Dtype.int32
int64 = Dtype.int64
uint8 = Dtype.uint8
uint16 = Dtype.uint16
uint32 = Dtype.uint32
uint64 = Dtype.uint64
float16 = Dtype.float16
bfloat16 = Dtype.bfloat16
float32 = Dtype.float32
float64 = Dtype.float64
complex64 = Dtype.complex64

__all__ = [
    "Array", "Binary", "CompileError", "CudaError", "Dtype", "Error", "ErrorCode",
    "InvalidArgument", "Kernel", "KernelNotFound", "LaunchError", "LoadError", "MetalKernel",
    "NoDevice", "PrewarmReport", "Registry", "Stats", "Stream", "array", "cuda_kernel",
    "current_stream", "custom_kernel", "device_registry", "dtype", "metal_kernel", "ops",
    "read_manifest", "bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
    "uint64", "float16", "bfloat16", "float32", "float64", "complex64",
]
