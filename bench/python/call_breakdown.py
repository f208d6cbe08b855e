"""The parts of a custom-kernel call from Python, each form timed alone: the call on torch
tensors and on kreg arrays, the same work through kreg.ops and torch, and the pieces of the
torch path (reading a tensor, torch's DLPack import of an output). Medians of ROUNDS batches
of 256 calls, with a synchronize outside the timed region.

    python3 bench/python/call_breakdown.py [ROUNDS]
"""

import statistics
import sys
import time

import torch

import kreg

ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 60
N = 1024
a = torch.ones(N, device="cuda")
k = kreg.metal_kernel("twice", ["a"], ["out"],
                      "uint i = thread_position_in_grid.x; out[i] = 2 * a[i];")
arr = kreg.array(a)
arr.eval()
shape = a.shape
f32 = torch.float32

forms = {
    "metal_kernel call, torch in and out": lambda: k(
        inputs=[a], output_shapes=[shape], output_dtypes=[f32], grid=(N, 1, 1),
        threadgroup=(256, 1, 1)),
    "metal_kernel call, kreg.Array in and out": lambda: k(
        inputs=[arr], output_shapes=[(N,)], output_dtypes=[kreg.float32], grid=(N, 1, 1),
        threadgroup=(256, 1, 1)),
    "torch a * 2": lambda: a * 2,
    "kreg.ops.scale(a, 2), torch": lambda: kreg.ops.scale(a, 2.0),
    "kreg.ops.scale(array, 2), kreg": lambda: kreg.ops.scale(arr, 2.0),
    "kreg.array(torch tensor)": lambda: kreg.array(a),
    "kreg.array(kreg array)": lambda: kreg.array(arr),
    "torch._C._from_dlpack(array.__dlpack__(stream=-1))": lambda: torch._C._from_dlpack(
        arr.__dlpack__(stream=-1)),
    "torch._C._to_dlpack(a)": lambda: torch._C._to_dlpack(a),
    "a.data_ptr()": lambda: a.data_ptr(),
    "a.stride()": lambda: a.stride(),
    "a.shape": lambda: a.shape,
    "a.get_device()": lambda: a.get_device(),
}
for f in forms.values():
    for _ in range(50):
        f()
torch.cuda.synchronize()
times = {name: [] for name in forms}
for _ in range(ROUNDS):
    for name, f in forms.items():
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(256):
            f()
        times[name].append((time.perf_counter() - start) * 1e6 / 256)
torch.cuda.synchronize()
for name, t in times.items():
    print("%-52s %8.3f us" % (name, statistics.median(t)))
