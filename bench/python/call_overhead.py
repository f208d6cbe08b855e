"""Host time per call of a cached custom kernel on torch tensors (1024 floats, out = 2 * a),
against the same work through torch, CuPy's RawKernel, Triton and torch's jiterator.

Each form runs batches of 256 calls with a synchronize outside the timed region; the forms
rotate within one loop, so that a drift of the machine's speed reaches them all alike.
Prints the median per-call host time of each form over ROUNDS batches.

    python3 bench/python/call_overhead.py [ROUNDS]
"""

import statistics
import sys
import time

import torch

import kreg

ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 200
CALLS = 256
N = 1024
a = torch.ones(N, device="cuda")

TWICE_BODY = "uint i = thread_position_in_grid.x; out[i] = 2 * a[i];"
TWICE_CUDA = r'''extern "C" __global__ void twice(const float* a, float* out) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x; out[i] = 2 * a[i]; }'''

forms = {}

k = kreg.metal_kernel("twice", ["a"], ["out"], TWICE_BODY)
shape = a.shape


def kreg_call():
    return k(inputs=[a], output_shapes=[shape], output_dtypes=[torch.float32], grid=(N, 1, 1),
             threadgroup=(256, 1, 1))


forms["kreg metal_kernel (allocates the output)"] = kreg_call
forms["torch a * 2 (allocates)"] = lambda: a * 2
forms["torch.mul(a, 2, out=) (preallocated)"] = (lambda out: lambda: torch.mul(a, 2, out=out))(
    torch.empty_like(a))

try:
    import cupy as cp
    ca = cp.ones(N, dtype=cp.float32)
    raw = cp.RawKernel(TWICE_CUDA, "twice")

    def cupy_alloc():
        out = cp.empty_like(ca)
        raw((N // 256,), (256,), (ca, out))
        return out

    cout = cp.empty_like(ca)
    forms["cupy RawKernel, empty_like + launch"] = cupy_alloc
    forms["cupy RawKernel, preallocated"] = lambda: raw((N // 256,), (256,), (ca, cout))
except ImportError:
    print("cupy: not installed")

try:
    import triton
    import triton.language as tl

    @triton.jit
    def twice_kernel(x, o, n, B: tl.constexpr):
        p = tl.program_id(0) * B + tl.arange(0, B)
        m = p < n
        tl.store(o + p, 2 * tl.load(x + p, mask=m), mask=m)

    def triton_call():
        out = torch.empty_like(a)
        twice_kernel[(N // 256,)](a, out, N, B=256)
        return out

    forms["triton (torch.empty_like + launch)"] = triton_call
except ImportError:
    print("triton: not installed")

jit = torch.cuda.jiterator._create_jit_fn("template <typename T> T twice(T x) { return 2 * x; }")
forms["torch jiterator"] = lambda: jit(a)

for f in forms.values():  # compile, load, first launches
    for _ in range(20):
        f()
torch.cuda.synchronize()
assert torch.equal(kreg_call()[0], a * 2)

times = {name: [] for name in forms}
for _ in range(ROUNDS):
    for name, f in forms.items():
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(CALLS):
            f()
        times[name].append((time.perf_counter() - start) * 1e6 / CALLS)
torch.cuda.synchronize()

base = statistics.median(times["torch a * 2 (allocates)"])
print("%-44s %10s %10s %8s" % ("form", "median us", "min us", "vs torch"))
for name, t in times.items():
    m = statistics.median(t)
    print("%-44s %10.3f %10.3f %8.2f" % (name, m, min(t), m / base))
