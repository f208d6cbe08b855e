"""PyTorch's attention on the shapes of bench/attention_bench.cpp, timed the same way: CUDA
events, median of 5 repetitions of 20 calls, eager and replayed from a CUDA graph, with each
SDPA backend that takes the shape. Prefill: one sequence, bfloat16, causal and not. Decode:
32 query heads over 8 KV heads of 128, one query token; PyTorch has no paged cache, so its K
and V are contiguous [batch, kv_heads, tokens, 128], read with enable_gqa.

    python3 bench/attention_torch.py
"""
import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from torch_timing import RUNS, median_ms, time_call


a = torch.empty(1 << 28, dtype=torch.float32, device="cuda")
b = torch.empty_like(a)
copy_ms = median_ms(lambda: [b.copy_(a) for _ in range(RUNS)])
copy_gbps = 8 * a.numel() / (copy_ms * 1e-3) / 1e9
print("%-40s %9.1f us %8.0f GB/s" % ("copy (torch copy_, 1 GiB)", copy_ms * 1e3, copy_gbps))
BACKENDS = (("flash", SDPBackend.FLASH_ATTENTION), ("efficient", SDPBackend.EFFICIENT_ATTENTION),
            ("cudnn", SDPBackend.CUDNN_ATTENTION))


def each_backend(label, q, k, v, **sdpa_args):
    """(backend, eager ms, graph ms) for each backend that takes the shape."""
    for name, backend in BACKENDS:
        def call():
            with sdpa_kernel(backend):
                return F.scaled_dot_product_attention(q, k, v, **sdpa_args)
        try:
            eager_ms, graph_ms = time_call(call)
        except Exception as e:  # a backend that refuses the shape
            print("%-40s %s: %s" % (label, name, str(e).splitlines()[0][:60]))
            continue
        yield name, eager_ms, graph_ms


print("%-40s %12s %12s %10s %s" % ("prefill bfloat16, 1 sequence", "eager us", "graph us",
                                   "TFLOP/s", "backend"))
for tokens, heads, dim, causal in ((4096, 32, 128, False), (4096, 32, 128, True),
                                   (8192, 32, 128, False), (8192, 32, 128, True),
                                   (4096, 32, 64, False), (4096, 32, 64, True),
                                   (4096, 16, 256, False),
                                   (4096, 16, 256, True)):
    q, k, v = (torch.empty(1, heads, tokens, dim, dtype=torch.bfloat16,
                           device="cuda").uniform_(-1, 1) for _ in range(3))
    flops = 4.0 * tokens * tokens * heads * dim * (0.5 if causal else 1.0)
    label = "%d x %d x %d%s" % (heads, tokens, dim, " causal" if causal else "")
    for name, eager_ms, graph_ms in each_backend(label, q, k, v, is_causal=causal):
        print("%-40s %12.1f %12.1f %10.1f %s" % (label, eager_ms * 1e3, graph_ms * 1e3,
                                                 flops / (graph_ms * 1e-3) / 1e12, name))
    del q, k, v

print("%-40s %12s %12s %10s %8s %s" % ("decode bfloat16, 32 q / 8 kv heads, d 128", "eager us",
                                       "graph us", "KV GB/s", "of copy", "backend"))
for batch, tokens in ((1, 4096), (1, 32768), (16, 4096), (64, 1024)):
    q = torch.empty(batch, 32, 1, 128, dtype=torch.bfloat16, device="cuda").uniform_(-1, 1)
    k = torch.empty(batch, 8, tokens, 128, dtype=torch.bfloat16, device="cuda").uniform_(-1, 1)
    v = torch.empty_like(k).uniform_(-1, 1)
    kv_bytes = 2 * k.numel() * 2
    label = "batch %d x %d tokens" % (batch, tokens)
    for name, eager_ms, graph_ms in each_backend(label, q, k, v, enable_gqa=True):
        gbps = kv_bytes / (graph_ms * 1e-3) / 1e9
        print("%-40s %12.1f %12.1f %10.0f %7.1f%% %s" % (
            label, eager_ms * 1e3, graph_ms * 1e3, gbps,
            100 * gbps / copy_gbps, name))
