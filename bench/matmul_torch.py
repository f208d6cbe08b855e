"""torch.matmul (cuBLAS) on the shapes of bench/matmul_bench.cpp, timed the same way: CUDA
events, median of 5 repetitions of 20 calls, replayed from a CUDA graph. The weight is [n, k]
passed as its transpose, or [k, n]. Decode shapes also through one bmm over 64 experts of
16 tokens (MoE, 4096 -> 1408) for the issue's comparison.

    python3 bench/matmul_torch.py
"""
import itertools
import math
import statistics

import torch

RUNS = 20


def median_ms(launch):
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(5):
        start.record()
        launch()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) / RUNS)
    return statistics.median(times)


def graph_ms(call):
    call()
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        call()
        with torch.cuda.graph(graph, stream=stream):
            for _ in range(RUNS):
                call()
    torch.cuda.synchronize()
    graph.replay()
    torch.cuda.synchronize()
    return median_ms(graph.replay)


print("%-44s %10s %9s %9s" % ("torch.matmul bfloat16, m x n x k", "graph us", "TFLOP/s", "w GB/s"))
for m, n, k, by_k in ((4096, 4096, 4096, True), (4096, 4096, 4096, False), (8192, 8192, 8192, True),
                      (4096, 14336, 4096, True), (4096, 4096, 14336, True), (1, 4096, 4096, True),
                      (16, 4096, 4096, True), (16, 14336, 4096, True), (16, 4096, 14336, True)):
    a = torch.rand(m, k, device="cuda", dtype=torch.bfloat16) * 2 - 1
    # Decode shapes rotate through copies of the weight far past L2, as kreg's bench does.
    copies = max(1, math.ceil(256e6 / (2.0 * n * k))) if m <= 16 else 1
    ws = [(torch.rand(n, k, device="cuda", dtype=torch.bfloat16) * 2 - 1).t() if by_k else
          (torch.rand(k, n, device="cuda", dtype=torch.bfloat16) * 2 - 1) for _ in range(copies)]
    turn = itertools.count()
    ms = graph_ms(lambda: torch.matmul(a, ws[next(turn) % copies]))
    name = "%d x %d x %d, weight %s" % (m, n, k, "[n, k]^T" if by_k else "[k, n]")
    print("%-44s %10.1f %9.1f %9.0f" % (name, ms * 1e3, 2.0 * m * n * k / (ms * 1e-3) / 1e12,
                                         2.0 * n * k / (ms * 1e-3) / 1e9))
