"""PyTorch on the mixture-of-experts layers of bench/moe_bench.cpp, timed the same way
(bench/torch_timing.py): softmax routing to the top 8, renormalized, and SwiGLU experts, two ways:
- loop: over the chosen experts, gathering their tokens, as transformers' Qwen3-MoE block does
  (data-dependent, so eager only);
- bmm: every token through every expert in three batched products, weighted by a dense routing
  matrix (reads every expert's weights once; replayed from a CUDA graph).
GB/s counts the weights of the chosen experts, as kreg's bench does.

    python3 bench/moe_torch.py
"""
import torch
import torch.nn.functional as F

from torch_timing import median_ms, time_call, RUNS


def route(logits, k):
    probs = torch.softmax(logits.float(), dim=-1)
    weights, ids = torch.topk(probs, k, dim=-1)
    return weights / weights.sum(dim=-1, keepdim=True), ids


def loop_layer(x, logits, gate, up, down, k):
    weights, ids = route(logits, k)
    out = torch.zeros_like(x)
    for e in torch.unique(ids).tolist():
        token, slot = torch.where(ids == e)
        rows = x[token]
        h = F.silu(rows @ gate[e].t()) * (rows @ up[e].t())
        out.index_add_(0, token, (h @ down[e].t()) * weights[token, slot, None].to(x.dtype))
    return out


def bmm_layer(x, logits, gate, up, down, k):
    weights, ids = route(logits, k)
    dense = torch.zeros(logits.shape, device=x.device, dtype=torch.float32)
    dense.scatter_(1, ids, weights)
    xs = x.unsqueeze(0).expand(gate.shape[0], -1, -1)
    h = F.silu(torch.bmm(xs, gate.transpose(1, 2))) * torch.bmm(xs, up.transpose(1, 2))
    y = torch.bmm(h, down.transpose(1, 2))  # [experts, tokens, hidden]
    return torch.einsum("eth,te->th", y.float(), dense).to(x.dtype)


print("%-46s %9s %9s %8s %9s %9s" % ("torch moe bfloat16, tokens x experts/top-k, h->f",
                                     "loop us", "bmm us", "experts", "loop GB/s", "bmm GB/s"))
for tokens, experts, k, hidden, ffn in ((1, 64, 8, 4096, 1408), (16, 64, 8, 4096, 1408),
                                        (1, 64, 8, 2048, 768), (16, 64, 8, 2048, 768),
                                        (512, 64, 8, 2048, 768), (2048, 64, 8, 2048, 768)):
    def rand(*shape):
        return torch.rand(*shape, device="cuda", dtype=torch.bfloat16) * 2 - 1
    x, logits = rand(tokens, hidden), rand(tokens, experts)
    gate, up, down = rand(experts, ffn, hidden), rand(experts, ffn, hidden), rand(experts, hidden, ffn)
    chosen = torch.unique(route(logits, k)[1]).numel()
    loop_layer(x, logits, gate, up, down, k)
    torch.cuda.synchronize()
    loop_ms = median_ms(lambda: [loop_layer(x, logits, gate, up, down, k) for _ in range(RUNS)])
    bmm = "%9s" % "-"
    bmm_gbps = "%9s" % "-"
    if tokens * experts * max(hidden, ffn) * 2 * 3 < 8e9:  # the dense intermediates fit
        bmm_ms = time_call(lambda: bmm_layer(x, logits, gate, up, down, k))[1]
        bmm = "%9.1f" % (bmm_ms * 1e3)
        bmm_gbps = "%9.0f" % (6.0 * chosen * hidden * ffn / (bmm_ms * 1e-3) / 1e9)
    print("%-46s %9.1f %s %8d %9.0f %s" % (
        "%d x %d/%d, %d -> %d" % (tokens, experts, k, hidden, ffn), loop_ms * 1e3, bmm, chosen,
        6.0 * chosen * hidden * ffn / (loop_ms * 1e-3) / 1e9, bmm_gbps))
