"""First call of a new custom kernel in a fresh Python process with an empty disk cache:
from creating the kernel to having its output on the host. Run it in a fresh process each
time, with KREG_CACHE_DIR (and CUPY_CACHE_DIR) pointing at empty folders.

    python3 bench/python/first_call.py kreg|cupy
"""

import sys
import time

import torch

mode = sys.argv[1]
a = torch.arange(1, 5, dtype=torch.float32, device="cuda")
torch.cuda.synchronize()

if mode == "kreg":
    t0 = time.perf_counter()
    import kreg
    import_ms = (time.perf_counter() - t0) * 1e3
    start = time.perf_counter()
    k = kreg.metal_kernel("twice_first", ["a"], ["out"],
                          "uint i = thread_position_in_grid.x; out[i] = 2 * a[i];")
    (out,) = k(inputs=[a], output_shapes=[(4,)], output_dtypes=[torch.float32], grid=(4, 1, 1),
               threadgroup=(4, 1, 1))
    values = out.tolist()
elif mode == "cupy":
    import cupy as cp
    ca = cp.asarray(a)
    start = time.perf_counter()
    k = cp.RawKernel(r'''extern "C" __global__ void twice_first(const float* a, float* out) {
      unsigned i = blockIdx.x * blockDim.x + threadIdx.x; out[i] = 2 * a[i]; }''', "twice_first")
    out = cp.empty_like(ca)
    k((1,), (4,), (ca, out))
    values = out.get().tolist()
else:
    sys.exit("usage: first_call.py kreg|cupy")
ms = (time.perf_counter() - start) * 1e3
assert values == [2, 4, 6, 8], values
detail = ""
if mode == "kreg":
    s = kreg.device_registry(0).stats()
    detail = " (compile %.3f ms, load %.3f ms; import kreg took %.3f ms before)" % (
        s.compile_ms, s.load_ms, import_ms)
print("%s-first-call %.3f ms%s" % (mode, ms, detail))
