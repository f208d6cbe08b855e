"""A custom kernel and a registry kernel on torch tensors, on torch's current stream.

    python3 examples/python/torch_custom_kernel.py
"""

import torch

import kreg

# A body over named inputs and outputs; kreg writes the signature and compiles on first use.
softplus = kreg.metal_kernel(
    name="softplus",
    input_names=["x"],
    output_names=["y"],
    source="""
        uint i = thread_position_in_grid.x;
        float v = float(x[i]);
        y[i] = T(v > 20.0f ? v : metal::log(1.0f + metal::exp(v)));
    """,
)

x = torch.randn(1 << 16, device="cuda", dtype=torch.float16)
side = torch.cuda.Stream()
with torch.cuda.stream(side):  # kreg runs on torch's current stream
    (y,) = softplus(inputs=[x], template=[("T", x.dtype)], output_shapes=[x.shape],
                    output_dtypes=[x.dtype], grid=(x.numel(), 1, 1), threadgroup=(256, 1, 1))
    z = y * 2  # ordered after kreg's kernel
side.synchronize()
torch.testing.assert_close(y, torch.nn.functional.softplus(x.float()).half(), rtol=2e-3, atol=2e-3)

# A whole CUDA C++ source in a registry, specialized by a compile-time constant.
registry = kreg.Registry()
registry.register_source("scale", r"""
    #include <kreg/kernel.cuh>
    KREG_CONSTANT_DEFAULT(int, FACTOR, 100, 2);
    extern "C" __global__ void scale(float* x, unsigned n) {
      unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n) x[i] *= FACTOR;
    }""")
kernel = registry.get("scale", {100: 3})
v = torch.ones(1000, device="cuda")
kernel(((1000 + 255) // 256,), (256,), [v, v.numel()])  # ints fill the parameter's size
assert torch.equal(v, torch.full_like(v, 3))

# Ops on the same tensors.
h = torch.randn(8, 4096, device="cuda")
normed = kreg.ops.rms_norm(h, torch.ones(4096, device="cuda"), 1e-6)
print("softplus, scale and rms_norm ok; stats:", registry.stats())
