"""PyTorch on the shapes of bench/ops_bench.cpp, timed the same way (CUDA events, median of
5 repetitions of 20 runs), for the ratios in docs/performance.md.

    python3 bench/ops_torch.py
"""
import statistics

import torch
import torch.nn.functional as F

N = 256 << 20
ROWS, COLS = 65536, 4096
copy_gbps = None


def time_ms(fn):
    fn()
    torch.cuda.synchronize()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(5):
        start.record()
        for _ in range(20):
            fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) / 20)
    return statistics.median(times)


def report(name, nbytes, ms):
    global copy_gbps
    gbps = nbytes / (ms * 1e-3) / 1e9
    copy_gbps = copy_gbps or gbps
    print("%-34s %9.3f ms %8.0f GB/s %6.1f%% of copy" % (name, ms, gbps, 100 * gbps / copy_gbps))


a32 = torch.empty(N, dtype=torch.float32, device="cuda").uniform_(-2, 2)
b32 = torch.empty(N, dtype=torch.float32, device="cuda").uniform_(-2, 2)
report("copy (torch copy_, 1 GiB)", 8 * N, time_ms(lambda: b32.copy_(a32)))
for dtype, size in ((torch.float32, 4), (torch.bfloat16, 2)):
    a = torch.empty(N, dtype=dtype, device="cuda").uniform_(-2, 2)
    b = torch.empty(N, dtype=dtype, device="cuda").uniform_(-2, 2)
    name = str(dtype).replace("torch.", "")
    report("add " + name, 3 * size * N, time_ms(lambda: torch.add(a, b)))
    report("scale " + name, 2 * size * N, time_ms(lambda: a * 1.5))
report("cast float32 -> bfloat16", 6 * N, time_ms(lambda: a32.to(torch.bfloat16)))
h = torch.empty(N, dtype=torch.bfloat16, device="cuda").uniform_(-2, 2)
report("cast bfloat16 -> float32", 6 * N, time_ms(lambda: h.to(torch.float32)))
for dtype, size in ((torch.float32, 4), (torch.bfloat16, 2)):
    x = torch.empty(ROWS, COLS, dtype=dtype, device="cuda").uniform_(-2, 2)
    r = torch.empty(ROWS, COLS, dtype=dtype, device="cuda").uniform_(-2, 2)
    w = torch.ones(COLS, dtype=dtype, device="cuda")
    name = str(dtype).replace("torch.", "")
    report("rms_norm %s 64Kx4096" % name, 2 * size * ROWS * COLS,
           time_ms(lambda: F.rms_norm(x, (COLS,), w, 1e-6)))
    report("add_rms_norm %s 64Kx4096" % name, 4 * size * ROWS * COLS,
           time_ms(lambda: F.rms_norm(x + r, (COLS,), w, 1e-6)))
for dtype, size in ((torch.float32, 4), (torch.bfloat16, 2)):
    x = torch.empty(ROWS, COLS, dtype=dtype, device="cuda").uniform_(-2, 2)
    name = str(dtype).replace("torch.", "")
    report("softmax %s 64Kx4096" % name, 2 * size * ROWS * COLS,
           time_ms(lambda: torch.softmax(x * 0.125, dim=-1)))
    report("row_sum %s 64Kx4096" % name, size * ROWS * COLS,
           time_ms(lambda: x.sum(dim=-1, dtype=torch.float32)))
a = torch.empty(N, dtype=torch.bfloat16, device="cuda").uniform_(-2, 2)
b = torch.empty(N, dtype=torch.bfloat16, device="cuda").uniform_(-2, 2)
report("swiglu bfloat16", 6 * N, time_ms(lambda: F.silu(a) * b))
report("gelu bfloat16 (erf)", 4 * N, time_ms(lambda: F.gelu(a)))
table = torch.empty(131072, COLS, dtype=torch.bfloat16, device="cuda").uniform_(-2, 2)
ids = (torch.arange(ROWS, device="cuda") * 7919) % 131072
report("embedding bfloat16 64K of 128Kx4096", 4 * ROWS * COLS, time_ms(lambda: F.embedding(ids, table)))
w = torch.empty(16384, 8192, dtype=torch.bfloat16, device="cuda").uniform_(-2, 2)
v = torch.ones(8192, dtype=torch.bfloat16, device="cuda")
report("gemv bfloat16 16384x8192", 2 * 16384 * 8192, time_ms(lambda: torch.mv(w, v)))
x = torch.empty(ROWS, COLS, dtype=torch.bfloat16, device="cuda").uniform_(-2, 2)
w = torch.ones(COLS, dtype=torch.bfloat16, device="cuda")
report("layer_norm bfloat16 64Kx4096", 4 * ROWS * COLS,
       time_ms(lambda: F.layer_norm(x, (COLS,), w, w, 1e-5)))
report("transpose bfloat16 64Kx4096", 4 * ROWS * COLS, time_ms(lambda: x.t().contiguous()))
