"""torch.matmul (cuBLAS) on the shapes of bench/matmul_bench.cpp, timed the same way: CUDA
events, median of 5 repetitions of 20 calls, replayed from a CUDA graph (bench/torch_timing.py).
The weight is [n, k] passed as its transpose, or [k, n].

    python3 bench/matmul_torch.py
"""
import itertools
import math

import torch

from torch_timing import time_call


print("%-44s %10s %9s %9s" % ("torch.matmul bfloat16, m x n x k", "graph us", "TFLOP/s", "w GB/s"))
for m, n, k, by_k in ((4096, 4096, 4096, True), (4096, 4096, 4096, False), (8192, 8192, 8192, True),
                      (4096, 14336, 4096, True), (4096, 4096, 14336, True), (1, 4096, 4096, True),
                      (1, 14336, 4096, True), (1, 4096, 14336, True), (4, 4096, 14336, True),
                      (8, 14336, 4096, True), (16, 4096, 4096, True),
                      (16, 14336, 4096, True), (16, 4096, 14336, True)):
    a = torch.rand(m, k, device="cuda", dtype=torch.bfloat16) * 2 - 1
    # Decode shapes rotate through copies of the weight far past L2, as kreg's bench does.
    copies = max(1, math.ceil(256e6 / (2.0 * n * k))) if m <= 16 else 1
    ws = [(torch.rand(n, k, device="cuda", dtype=torch.bfloat16) * 2 - 1).t() if by_k else
          (torch.rand(k, n, device="cuda", dtype=torch.bfloat16) * 2 - 1) for _ in range(copies)]
    turn = itertools.count()
    ms = time_call(lambda: torch.matmul(a, ws[next(turn) % copies]))[1]
    name = "%d x %d x %d, weight %s" % (m, n, k, "[n, k]^T" if by_k else "[k, n]")
    print("%-44s %10.1f %9.1f %9.0f" % (name, ms * 1e3, 2.0 * m * n * k / (ms * 1e-3) / 1e12,
                                         2.0 * n * k / (ms * 1e-3) / 1e9))
