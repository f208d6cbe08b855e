"""PyTorch's decode attention on the shapes of bench/attention_bench.cpp (bfloat16, 32 query
heads over 8 KV heads of 128, one query token), timed the same way: CUDA events, median of 5
repetitions of 20 calls, eager and replayed from a CUDA graph. PyTorch has no paged cache,
so its K and V are contiguous [batch, kv_heads, tokens, 128]; SDPA reads them with
enable_gqa, with each backend that takes the shape.

    python3 bench/attention_torch.py
"""
import statistics

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

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


def time_call(call):
    call()
    torch.cuda.synchronize()

    def eager():
        for _ in range(RUNS):
            call()

    eager_ms = median_ms(eager)
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
    return eager_ms, median_ms(graph.replay)


a = torch.empty(1 << 28, dtype=torch.float32, device="cuda")
b = torch.empty_like(a)
copy_ms = median_ms(lambda: [b.copy_(a) for _ in range(RUNS)])
copy_gbps = 8 * a.numel() / (copy_ms * 1e-3) / 1e9
print("%-40s %9.1f us %8.0f GB/s" % ("copy (torch copy_, 1 GiB)", copy_ms * 1e3, copy_gbps))
print("%-40s %12s %12s %10s %8s %s" % ("decode bfloat16, 32 q / 8 kv heads, d 128", "eager us",
                                       "graph us", "KV GB/s", "of copy", "backend"))
for batch, tokens in ((1, 4096), (1, 32768), (16, 4096), (64, 1024)):
    q = torch.empty(batch, 32, 1, 128, dtype=torch.bfloat16, device="cuda").uniform_(-1, 1)
    k = torch.empty(batch, 8, tokens, 128, dtype=torch.bfloat16, device="cuda").uniform_(-1, 1)
    v = torch.empty_like(k).uniform_(-1, 1)
    kv_bytes = 2 * k.numel() * 2
    for name, backend in (("flash", SDPBackend.FLASH_ATTENTION),
                          ("efficient", SDPBackend.EFFICIENT_ATTENTION),
                          ("cudnn", SDPBackend.CUDNN_ATTENTION)):
        def call():
            with sdpa_kernel(backend):
                return F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
        try:
            eager_ms, graph_ms = time_call(call)
        except Exception as e:  # a backend that refuses the shape
            print("%-40s %s: %s" % ("batch %d x %d tokens" % (batch, tokens), name,
                                    str(e).splitlines()[0][:60]))
            continue
        gbps = kv_bytes / (graph_ms * 1e-3) / 1e9
        print("%-40s %12.1f %12.1f %10.0f %7.1f%% %s" % (
            "batch %d x %d tokens" % (batch, tokens), eager_ms * 1e3, graph_ms * 1e3, gbps,
            100 * gbps / copy_gbps, name))
