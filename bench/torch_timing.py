"""How the PyTorch comparison scripts time a call, the way kreg's benches do (call_timing.hpp):
CUDA events, the median of 5 repetitions of RUNS calls, eager and replayed from a CUDA graph."""
import statistics

import torch

RUNS = 20


def median_ms(launch):
    """Per call, ms: `launch` issues RUNS calls."""
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
    """(eager ms, graph-replayed ms) of one call."""
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
