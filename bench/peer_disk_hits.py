"""First call of a kernel in a fresh process whose disk cache is already warm, for the
frameworks kreg is compared with. Run each mode twice with the same cache folder; the
second run is the disk hit.

    python3 bench/peer_disk_hits.py cupy|torch|triton CACHE_DIR
"""
import os
import sys
import time

mode, cache = sys.argv[1], sys.argv[2]
os.environ["CUPY_CACHE_DIR"] = os.path.join(cache, "cupy")
os.environ["TRITON_CACHE_DIR"] = os.path.join(cache, "triton")
os.environ["XDG_CACHE_HOME"] = cache  # torch keeps jiterator kernels under it
os.environ["USE_PYTORCH_KERNEL_CACHE"] = "1"

SOURCE = r'''extern "C" __global__ void add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) c[i] = a[i] + b[i]; }'''


def timed(label, fn, sync):
    start = time.perf_counter()
    fn()
    sync()
    print("%s %s %.3f ms" % (mode, label, (time.perf_counter() - start) * 1e3))


if mode == "cupy":
    import cupy as cp
    n = 1 << 20
    a = cp.ones(n, cp.float32); b = cp.ones(n, cp.float32); c = cp.empty_like(a)
    cp.cuda.runtime.deviceSynchronize()
    timed("first call", lambda: cp.RawKernel(SOURCE, "add")((n // 256,), (256,), (a, b, c, cp.int32(n))),
          cp.cuda.runtime.deviceSynchronize)
elif mode == "torch":
    import torch
    a = torch.randn(1 << 20, device="cuda"); b = torch.randn_like(a)
    torch.cuda.synchronize()
    code = "template <typename T> T kreg_peer_add(T x, T y) { return x + y; }"
    timed("first call", lambda: torch.cuda.jiterator._create_jit_fn(code)(a, b), torch.cuda.synchronize)
elif mode == "triton":
    import torch
    import triton
    import triton.language as tl

    @triton.jit
    def add_k(x, y, o, n, B: tl.constexpr):
        p = tl.program_id(0) * B + tl.arange(0, B)
        m = p < n
        tl.store(o + p, tl.load(x + p, mask=m) + tl.load(y + p, mask=m), mask=m)

    a = torch.randn(1 << 20, device="cuda"); b = torch.randn_like(a); o = torch.empty_like(a)
    torch.cuda.synchronize()
    timed("first call", lambda: add_k[(a.numel() // 1024,)](a, b, o, a.numel(), B=1024), torch.cuda.synchronize)
