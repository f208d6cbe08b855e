"""Runs the weights and tokens that `example_llm --dump DIR` wrote through transformers'
LlamaForCausalLM or Qwen3MoeForCausalLM, and compares the logits of the prefill's last token and
of every decode step with kreg's. The reference is transformers in float32; transformers in
bfloat16 against the same reference shows what bfloat16 alone costs. Then times transformers'
prefill and decode steps (eager; with --compile, also torch.compile's prefill and transformers'
compiled decode steps: greedy generate with a static cache).

    python3 examples/llm/check_transformers.py DIR [--runs N] [--compile]

Exit status 0 when kreg's logits are as close to float32 as bfloat16 allows: every step within
a relative L2 distance of max(3e-2, 1.5 x transformers-bfloat16's worst), and the largest logit
the float32 model's in as many steps as transformers-bfloat16 manages, less one.
"""
import argparse
import json
import os
import statistics
import sys
import time

import numpy as np
import torch

import hf_models


def load_weights(folder, index):
    weights = {}
    for w in index["weights"]:
        raw = np.fromfile(os.path.join(folder, w["name"] + ".bf16"), dtype=np.int16)
        weights[w["name"]] = torch.from_numpy(raw).view(torch.bfloat16).reshape(w["shape"])
    return weights


def compiled_decode(model, prompt, steps, runs):
    """transformers' own compiled decoding: greedy `generate` with a static KV cache, whose
    decode steps transformers compiles (CUDA graphs through torch.compile) when its version
    does. A step's time is the difference between generating steps + 1 tokens and 1 token
    (the prefill alone), over steps."""
    if steps < 1:
        return "transformers generate: no decode steps to time"
    ids = torch.tensor([prompt], device="cuda")

    def generate_ms(new):
        torch.cuda.synchronize()
        t = time.perf_counter()
        with torch.no_grad():
            model.generate(ids, max_new_tokens=new, min_new_tokens=new, do_sample=False,
                           cache_implementation="static", pad_token_id=0)
        torch.cuda.synchronize()
        return (time.perf_counter() - t) * 1e3

    first = generate_ms(steps + 1)  # compiles, when transformers compiles
    generate_ms(steps + 1)
    long = statistics.median(generate_ms(steps + 1) for _ in range(runs))
    short = statistics.median(generate_ms(1) for _ in range(runs))
    step = (long - short) / steps
    return ("transformers generate, static cache (compiled decode steps): first call of %d "
            "tokens %.1f ms; warm %.2f ms, 1 token %.2f ms: decode step %.3f ms (%.0f tokens/s)"
            % (steps + 1, first, long, short, step, 1e3 / step))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("folder")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--compile", action="store_true")
    args = parser.parse_args()
    index = json.load(open(os.path.join(args.folder, "index.json")))
    c = dict(index["config"], model=index["model"])
    weights = load_weights(args.folder, index)
    prompt, steps = index["prompt"], index["decode"]
    ours = np.fromfile(os.path.join(args.folder, index["logits"]), dtype=np.float32)
    ours = ours.reshape(1 + len(steps), c["vocab"]).astype(np.float64)

    reference = hf_models.build(c, torch.float32)
    hf_models.fill(reference, weights, c["experts"])
    truth = hf_models.run(reference, prompt, steps)
    del reference
    start = time.perf_counter()
    model = hf_models.build(c)
    hf_models.fill(model, weights, c["experts"])
    torch.cuda.synchronize()
    load_s = time.perf_counter() - start
    t = time.perf_counter()
    theirs = hf_models.run(model, prompt, steps)
    first_ms = (time.perf_counter() - t) * 1e3

    rel_k, same_k = hf_models.distances(ours, truth)
    rel_h, same_h = hf_models.distances(theirs, truth)
    limit = max(3e-2, 1.5 * max(rel_h))
    ok = max(rel_k) <= limit and sum(same_k) >= sum(same_h) - 1
    # A dump of 4- or 8-bit weights holds them dequantized: the weights kreg's products used.
    bits = index.get("bits", 16)
    print("%s, %d steps (prefill + %d decode), against transformers %s in float32:" % (
        c["model"], len(ours), len(steps), __import__("transformers").__version__))
    if bits != 16:
        print("  (linear weights %d-bit in kreg, dequantized for transformers)" % bits)
    print("  kreg bfloat16:         worst relative L2 %.3e (median %.3e), same top token in %d" % (
        max(rel_k), statistics.median(rel_k), sum(same_k)))
    print("  transformers bfloat16: worst relative L2 %.3e (median %.3e), same top token in %d" % (
        max(rel_h), statistics.median(rel_h), sum(same_h)))
    print("  %s (limit %.3e)" % ("within bfloat16 tolerance" if ok else "NOT within tolerance",
                                 limit))

    def prefill(m):
        with torch.no_grad():
            out = m(input_ids=torch.tensor([prompt], device="cuda"), use_cache=True)
        torch.cuda.synchronize()
        return out

    warm = []
    for _ in range(args.runs):
        t = time.perf_counter()
        prefill(model)
        warm.append((time.perf_counter() - t) * 1e3)
    step_ms = []
    with torch.no_grad():
        past = prefill(model).past_key_values
        for token in steps:
            t = time.perf_counter()
            out = model(input_ids=torch.tensor([[token]], device="cuda"), past_key_values=past,
                        use_cache=True)
            torch.cuda.synchronize()
            step_ms.append((time.perf_counter() - t) * 1e3)
            past = out.past_key_values
    print("transformers eager: weights in %.1f s; first prefill and decode %.1f ms, warm prefill "
          "median %.2f ms; decode step median %.2f ms" % (
              load_s, first_ms, statistics.median(warm), statistics.median(step_ms[1:] or step_ms)))
    if args.compile:
        compiled = torch.compile(model)
        t = time.perf_counter()
        prefill(compiled)
        first_c = (time.perf_counter() - t) * 1e3
        warm_c = []
        for _ in range(args.runs):
            t = time.perf_counter()
            prefill(compiled)
            warm_c.append((time.perf_counter() - t) * 1e3)
        print("transformers torch.compile: first prefill %.1f ms, warm median %.2f ms" % (
            first_c, statistics.median(warm_c)))
        del compiled
        print(compiled_decode(model, prompt, len(steps), args.runs))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
