"""The decoders of examples/llm (a Llama-style dense model, a Qwen3-MoE-style one) on kreg.ops
from Python, over torch tensors: transformers makes the model with its own random weights
(seeded), kreg runs them, and transformers runs them too as the check. Prefill of a prompt, then
decode steps against a paged KV cache, timed; with --manifest, the kernels a manifest lists are
prewarmed first (and the manifest written after a run that found none).

    python3 examples/llm/model.py [--model llama|qwen3_moe] [--prompt N] [--decode N]
                                  [--runs N] [--bits 4|8|16] [--manifest FILE] [--first-ops]

--bits 4 or 8: the linear layers' weights (attention, dense MLP, LM head) quantized into MLX's
affine format with kreg.ops.quantize, their products on kreg.ops.quantized_matmul; transformers
gets the same weights dequantized. --first-ops: the first and a warm prefill again, op by op,
each op waited for, listing the ops whose first call took longest beside their warm one.

Exit status 0 when kreg's logits are as close to transformers in float32 as transformers in
bfloat16 is (see check_transformers.py).
"""
import argparse
import copy
import math
import os
import statistics
import sys
import time

import torch

import kreg
import hf_models

ops = kreg.ops


class OpTimer:
    """Stands for kreg.ops, waiting for the GPU before and after each call and keeping the
    op's name and wall time (ms), so that a first prefill's cost can be put on its ops."""

    def __init__(self, inner):
        self.inner = inner
        self.calls = []

    def __getattr__(self, name):
        op = getattr(self.inner, name)

        def timed(*args, **kwargs):
            torch.cuda.synchronize()
            start = time.perf_counter()
            out = op(*args, **kwargs)
            torch.cuda.synchronize()
            self.calls.append((name, (time.perf_counter() - start) * 1e3))
            return out
        return timed


def op_by_op(first, warm, first_total, warm_total, shown=8):
    """The calls whose first run took longest beside the same call of a warm one."""
    names = [n for n, _ in first]
    if names != [n for n, _ in warm]:
        return "  the first and the warm prefill called different ops: no comparison"
    extra = sorted(((f - w, i, n, f, w) for i, ((n, f), (_, w)) in
                    enumerate(zip(first, warm))), reverse=True)
    lines = ["  op by op (each op waited for): first prefill %.2f ms, warm %.2f ms; %d calls "
             "%.2f / %.2f ms, outside kreg.ops %.2f / %.2f ms" % (
                 first_total, warm_total, len(first), sum(f for _, f in first),
                 sum(w for _, w in warm), first_total - sum(f for _, f in first),
                 warm_total - sum(w for _, w in warm))]
    for d, i, n, f, w in extra[:shown]:
        lines.append("    call %3d %-18s first %7.3f ms, warm %7.3f ms (%+.3f)" % (i, n, f, w, d))
    return "\n".join(lines)


# The linear weights --bits quantizes, as transformers names them within a layer.
QUANTIZED = ("self_attn.q_proj.weight", "self_attn.k_proj.weight", "self_attn.v_proj.weight",
             "self_attn.o_proj.weight", "mlp.gate_proj.weight", "mlp.up_proj.weight",
             "mlp.down_proj.weight")


class Decoder:
    """The model of decoder.cpp, on the weights of a transformers model. With bits 4 or 8 the
    linear weights are quantized, and transformers' copies replaced by the dequantized ones."""

    def __init__(self, hf, c, max_tokens, bits=16):
        p = {k: v.detach() for k, v in hf.named_parameters()}
        self.c = c
        self.bits = bits
        if bits != 16:
            for name, w in p.items():
                if name == "lm_head.weight" or name.split(".", 3)[-1] in QUANTIZED:
                    q = tuple(ops.quantize(w, 64, bits))
                    w.copy_(ops.dequantize(*q, 64, bits))
                    p[name] = q
        self.embed = p["model.embed_tokens.weight"]
        self.final_norm = p["model.norm.weight"]
        self.lm_head = p["lm_head.weight"]
        self.layers = []
        for i in range(c["layers"]):
            pre = "model.layers.%d." % i
            w = {k: p[pre + v] for k, v in (
                ("input_norm", "input_layernorm.weight"), ("wq", "self_attn.q_proj.weight"),
                ("wk", "self_attn.k_proj.weight"), ("wv", "self_attn.v_proj.weight"),
                ("wo", "self_attn.o_proj.weight"), ("post_norm", "post_attention_layernorm.weight"))}
            if c["experts"]:
                w["q_norm"] = p[pre + "self_attn.q_norm.weight"]
                w["k_norm"] = p[pre + "self_attn.k_norm.weight"]
                w["router"] = p[pre + "mlp.gate.weight"]
                w["experts"] = hf_models.stacked_experts(p, pre + "mlp.experts.", c["experts"])
            else:
                w.update(gate=p[pre + "mlp.gate_proj.weight"], up=p[pre + "mlp.up_proj.weight"],
                         down=p[pre + "mlp.down_proj.weight"])
            self.layers.append(w)
        page = 64
        pages = math.ceil(max_tokens / page)
        shape = (pages, page, c["kv_heads"], c["head_dim"])
        self.k_cache = [torch.empty(shape, dtype=torch.bfloat16, device="cuda")
                        for _ in range(c["layers"])]
        self.v_cache = [torch.empty_like(k) for k in self.k_cache]
        self.block_table = torch.arange(pages, dtype=torch.int32, device="cuda").reshape(1, pages)
        self.position = 0

    def linear(self, x, w, epilogue="none", other=None):
        """x @ w.T, then the epilogue; a quantized w's product has none of its own, so what
        matmul's would add follows as an op."""
        if not isinstance(w, tuple):
            return ops.matmul(x, w.t(), epilogue=epilogue, other=other)
        y = ops.quantized_matmul(x, *w, group_size=64, bits=self.bits)
        if epilogue == "residual":
            return ops.add(y, other)
        if epilogue == "silu_gate":
            return ops.swiglu(y, other)
        assert epilogue == "none", epilogue
        return y

    def layer(self, i, x, positions, decoding):
        c, w, tokens = self.c, self.layers[i], x.shape[0]
        heads, kv, d = c["heads"], c["kv_heads"], c["head_dim"]
        n = ops.rms_norm(x, w["input_norm"], c["eps"])
        q = self.linear(n, w["wq"]).view(tokens, heads, d)
        k = self.linear(n, w["wk"]).view(tokens, kv, d)
        v = self.linear(n, w["wv"]).view(tokens, kv, d)
        if "q_norm" in w:
            q, k = ops.rms_norm(q, w["q_norm"], c["eps"]), ops.rms_norm(k, w["k_norm"], c["eps"])
        q = ops.rope(q, positions, c["rope_theta"], True)
        if decoding:
            ops.kv_append(self.k_cache[i], self.v_cache[i], k, v, positions,
                          rope_positions=positions, rope_base=c["rope_theta"], rope_neox=True)
            seq_lens = torch.tensor([self.position + 1], dtype=torch.int32, device="cuda")
            o = ops.decode_attention(q, self.k_cache[i], self.v_cache[i], self.block_table,
                                     seq_lens)
        else:
            k = ops.rope(k, positions, c["rope_theta"], True)
            ops.kv_append(self.k_cache[i], self.v_cache[i], k, v, positions)
            o = ops.attention(q[None], k[None], v[None], causal=True)
        h = self.linear(o.reshape(tokens, heads * d), w["wo"], "residual", x)
        n2 = ops.rms_norm(h, w["post_norm"], c["eps"])
        if "experts" in w:
            logits = ops.matmul(n2, w["router"].t())
            return ops.add(h, ops.moe(n2, logits, *w["experts"], top_k=c["top_k"]))
        up = self.linear(n2, w["up"])
        act = self.linear(n2, w["gate"], "silu_gate", up)
        return self.linear(act, w["down"], "residual", h)

    def logits(self, x):
        return self.linear(ops.rms_norm(x, self.final_norm, self.c["eps"]), self.lm_head)

    def prefill(self, ids):
        positions = torch.arange(len(ids), dtype=torch.int32, device="cuda")
        x = ops.embedding(self.embed, torch.tensor(ids, dtype=torch.int32, device="cuda"))
        for i in range(self.c["layers"]):
            x = self.layer(i, x, positions, False)
        self.position = len(ids)
        return self.logits(x[-1:])

    def decode(self, token):
        positions = torch.tensor([self.position], dtype=torch.int32, device="cuda")
        x = ops.embedding(self.embed, torch.tensor([token], dtype=torch.int32, device="cuda"))
        for i in range(self.c["layers"]):
            x = self.layer(i, x, positions, True)
        self.position += 1
        return self.logits(x)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="llama", choices=["llama", "qwen3_moe"])
    parser.add_argument("--prompt", type=int, default=512)
    parser.add_argument("--decode", type=int, default=32)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--bits", type=int, default=16, choices=[4, 8, 16])
    parser.add_argument("--manifest")
    parser.add_argument("--first-ops", action="store_true")
    args = parser.parse_args()
    c = hf_models.LLAMA if args.model == "llama" else hf_models.QWEN3_MOE
    prewarmed = 0
    start = time.perf_counter()
    if args.manifest and os.path.exists(args.manifest):
        prewarmed = kreg.device_registry().prewarm_manifest(args.manifest)
        # PyTorch too loads its kernels at their first use: the two small ones a step runs
        # (positions and token ids made on the GPU) are loaded here, in the same window.
        torch.arange(2, dtype=torch.int32, device="cuda")
        torch.tensor([0], dtype=torch.int32, device="cuda")
        torch.cuda.synchronize()
    prewarm_ms = (time.perf_counter() - start) * 1e3
    torch.manual_seed(args.seed)
    hf = hf_models.build(c)
    if c["experts"]:
        # A router whose logits spread wide, as trained routers' do (see decoder.cpp): its
        # weights rescaled to decoder.cpp's spread, 4 x 1.7 / sqrt(hidden) uniform.
        want = 4 * 1.7 / math.sqrt(3 * c["hidden"])
        with torch.no_grad():
            for name, p in hf.named_parameters():
                if name.endswith("mlp.gate.weight"):
                    p.mul_(want / p.float().std().item())
    model = Decoder(hf, c, args.prompt + args.decode, args.bits)
    g = torch.Generator().manual_seed(args.seed)
    prompt = torch.randint(0, c["vocab"], (args.prompt,), generator=g).tolist()
    steps = torch.randint(0, c["vocab"], (args.decode,), generator=g).tolist()

    def timed(call):
        t = time.perf_counter()
        out = call()
        torch.cuda.synchronize()
        return out, (time.perf_counter() - t) * 1e3

    global ops
    breakdown = None
    if args.first_ops:
        ops = OpTimer(kreg.ops)
        _, first = timed(lambda: model.prefill(prompt))
        first_calls, ops.calls = ops.calls, []
        _, again = timed(lambda: model.prefill(prompt))
        breakdown = op_by_op(first_calls, ops.calls, first, again)
        ops = kreg.ops
    else:
        _, first = timed(lambda: model.prefill(prompt))
    warm = [timed(lambda: model.prefill(prompt))[1] for _ in range(args.runs)]
    ours = [model.prefill(prompt)[0].double().cpu().numpy()]
    step_ms = []
    for token in steps:
        logits, ms = timed(lambda: model.decode(token))
        step_ms.append(ms)
        ours.append(logits[0].double().cpu().numpy())
    if args.manifest and not prewarmed:
        kreg.device_registry().write_manifest(args.manifest)

    truth = hf_models.run(copy.deepcopy(hf).float(), prompt, steps)
    theirs = hf_models.run(hf, prompt, steps)
    rel_k, same_k = hf_models.distances(ours, truth)
    rel_h, same_h = hf_models.distances(theirs, truth)
    limit = max(3e-2, 1.5 * max(rel_h))
    ok = max(rel_k) <= limit and sum(same_k) >= sum(same_h) - 1
    decode_ms = statistics.median(step_ms[1:] or step_ms)
    print("%s from Python (kreg.ops on torch tensors): %s linear weights, %d-token prefill, "
          "%d decode steps" % (c["model"], "bfloat16" if args.bits == 16 else
                               "%d-bit" % args.bits, args.prompt, args.decode))
    print("  prewarm of %d kernels %.1f ms; first prefill %.2f ms, warm median %.2f ms "
          "(%.2fx); decode step median %.2f ms (%.0f tokens/s)" % (
              prewarmed, prewarm_ms, first, statistics.median(warm),
              first / statistics.median(warm), decode_ms, 1e3 / decode_ms))
    print("  against transformers in float32: kreg worst relative L2 %.3e, same top token in %d "
          "of %d; transformers bfloat16 %.3e, %d: %s" % (
              max(rel_k), sum(same_k), len(ours), max(rel_h), sum(same_h),
              "within bfloat16 tolerance" if ok else "NOT within tolerance"))
    if breakdown:
        print("  (the first prefill above was taken op by op)")
        print(breakdown)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
