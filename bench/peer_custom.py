"""CuPy's RawKernel on the same tasks as bench/custom_kernel_bench.cpp, for the comparison in
docs/performance.md. Each mode is one fresh process; point CUPY_CACHE_DIR at an empty folder.

    python3 bench/peer_custom.py first-call       first RawKernel call of the process
    python3 bench/peer_custom.py second-kernel    a new kernel once NVRTC has started
    python3 bench/peer_custom.py overhead         per call: allocate the output and launch
"""
import statistics
import sys
import time

import cupy as cp

mode = sys.argv[1]
TWICE = r'''extern "C" __global__ void twice(const float* a, float* out) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x; out[i] = 2 * a[i]; }'''

a = cp.arange(1, 5, dtype=cp.float32)
cp.cuda.Device(0).synchronize()

if mode == "second-kernel":
    warm = cp.RawKernel(r'''extern "C" __global__ void warm(float* a) { a[threadIdx.x] += 1; }''',
                        "warm")
    warm((1,), (4,), (cp.zeros(4, dtype=cp.float32),))
    cp.cuda.Device(0).synchronize()

if mode in ("first-call", "second-kernel"):
    start = time.perf_counter()
    kernel = cp.RawKernel(TWICE, "twice")
    out = cp.empty_like(a)
    kernel((1,), (4,), (a, out))
    values = out.get()
    ms = (time.perf_counter() - start) * 1e3
    assert list(values) == [2, 4, 6, 8]
    print("cupy-%s %.3f ms" % (mode, ms))
elif mode == "overhead":
    n = 1024
    x = cp.ones(n, dtype=cp.float32)
    kernel = cp.RawKernel(TWICE, "twice")
    kernel((n // 256,), (256,), (x, cp.empty_like(x)))
    times = []
    for _ in range(400):
        cp.cuda.Device(0).synchronize()
        start = time.perf_counter()
        for _ in range(256):
            out = cp.empty_like(x)
            kernel((n // 256,), (256,), (x, out))
        times.append((time.perf_counter() - start) * 1e6 / 256)
    cp.cuda.Device(0).synchronize()
    print("cupy RawKernel, allocate + launch  %.3f us/call" % statistics.median(times))
