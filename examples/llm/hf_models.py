"""transformers' counterparts of examples/llm's decoders: the configs, and kreg's stacked experts
put into whichever layout this version of transformers keeps them in. Used by model.py and
check_transformers.py."""
import torch

LLAMA = dict(model="llama", vocab=32000, hidden=2048, layers=4, heads=16, kv_heads=4,
             head_dim=128, ffn=8192, experts=0, top_k=0, moe_ffn=0, rope_theta=500000.0,
             eps=1e-6)
QWEN3_MOE = dict(LLAMA, model="qwen3_moe", experts=64, top_k=8, moe_ffn=768,
                 rope_theta=1000000.0)


def build(c, dtype=torch.bfloat16):
    """An untrained model of config dict `c` (the keys of LLAMA), on the GPU."""
    import transformers

    common = dict(vocab_size=c["vocab"], hidden_size=c["hidden"], num_hidden_layers=c["layers"],
                  num_attention_heads=c["heads"], num_key_value_heads=c["kv_heads"],
                  head_dim=c["head_dim"], rms_norm_eps=c["eps"], max_position_embeddings=4096,
                  tie_word_embeddings=False, attention_bias=False, rope_theta=c["rope_theta"],
                  rope_parameters={"rope_type": "default", "rope_theta": c["rope_theta"]})
    if c["model"] == "llama":
        config = transformers.LlamaConfig(intermediate_size=c["ffn"], mlp_bias=False, **common)
        cls = transformers.LlamaForCausalLM
    else:
        config = transformers.Qwen3MoeConfig(
            intermediate_size=c["ffn"], moe_intermediate_size=c["moe_ffn"],
            num_experts=c["experts"], num_experts_per_tok=c["top_k"], norm_topk_prob=True,
            decoder_sparse_step=1, mlp_only_layers=[], **common)
        cls = transformers.Qwen3MoeForCausalLM
    with torch.device("cuda"):
        model = cls(config).to(dtype)
    model.eval()
    set_rope(model, c["rope_theta"], c["head_dim"])
    return model


def set_rope(model, theta, head_dim):
    """Makes the rotary frequencies theta's, whatever the config spelled."""
    want = 1.0 / (theta ** (torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim))
    for module in model.modules():
        if hasattr(module, "inv_freq"):
            module.inv_freq = want.to(module.inv_freq.device)
            if hasattr(module, "original_inv_freq"):
                module.original_inv_freq = module.inv_freq
            if hasattr(module, "attention_scaling"):
                module.attention_scaling = 1.0


def expert_layout(params, base):
    """'modules' (experts.E.gate_proj.weight ...) or 'stacked' (experts.gate_up_proj, down_proj)."""
    if base + "0.gate_proj.weight" in params:
        return "modules"
    if base + "gate_up_proj" in params:
        return "stacked"
    raise SystemExit("no known expert layout among: %s" %
                     sorted(n for n in params if n.startswith(base))[:6])


def stacked_experts(params, base, experts):
    """(gate, up, down) as [E, F, H], [E, F, H], [E, H, F] from a model's parameters."""
    if expert_layout(params, base) == "modules":
        return tuple(torch.stack([params[base + "%d.%s_proj.weight" % (e, k)]
                                  for e in range(experts)]) for k in ("gate", "up", "down"))
    gate_up = params[base + "gate_up_proj"]
    down = params[base + "down_proj"]
    if gate_up.shape[1] != 2 * down.shape[2] and gate_up.shape[2] == 2 * down.shape[1]:
        gate_up, down = gate_up.transpose(1, 2), down.transpose(1, 2)  # [E, in, out] storage
    f = gate_up.shape[1] // 2
    return (gate_up[:, :f].contiguous(), gate_up[:, f:].contiguous(), down.contiguous())


def fill(model, weights, experts):
    """Copies weights named as examples/llm/decoder.cpp names them into the model."""
    params = dict(model.named_parameters())
    filled = set()

    def put(name, value):
        p = params[name]
        if tuple(p.shape) != tuple(value.shape):
            raise SystemExit("%s: transformers has %s, kreg %s" % (name, tuple(p.shape),
                                                                  tuple(value.shape)))
        with torch.no_grad():
            p.copy_(value.to(p.device, p.dtype))
        filled.add(name)

    for name, value in weights.items():
        if ".mlp.experts." not in name:
            put(name, value)
    for prefix in sorted({n.rsplit(".mlp.experts.", 1)[0] for n in weights if ".mlp.experts." in n}):
        gate, up, down = (weights[prefix + ".mlp.experts." + k] for k in ("gate", "up", "down"))
        base = prefix + ".mlp.experts."
        if expert_layout(params, base) == "modules":
            for e in range(experts):
                put(base + "%d.gate_proj.weight" % e, gate[e])
                put(base + "%d.up_proj.weight" % e, up[e])
                put(base + "%d.down_proj.weight" % e, down[e])
        else:
            stacked = torch.cat([gate, up], dim=1)  # [E, 2F, H], the gate first
            if tuple(params[base + "gate_up_proj"].shape) != tuple(stacked.shape):
                stacked = stacked.transpose(1, 2)
            put(base + "gate_up_proj", stacked.contiguous())
            d = down if tuple(params[base + "down_proj"].shape) == tuple(down.shape) else \
                down.transpose(1, 2)
            put(base + "down_proj", d.contiguous())
    missing = sorted(set(params) - filled)
    if missing:
        raise SystemExit("parameters not given: %s" % missing[:8])


def run(model, prompt, steps):
    """The logits (float64, on the host) of the prompt's last token and of each decode step,
    fed the given tokens."""
    import numpy as np

    out = []
    with torch.no_grad():
        res = model(input_ids=torch.tensor([prompt], device="cuda"), use_cache=True)
        out.append(res.logits[0, -1].double().cpu().numpy())
        past = res.past_key_values
        for token in steps:
            res = model(input_ids=torch.tensor([[token]], device="cuda"), past_key_values=past,
                        use_cache=True)
            past = res.past_key_values
            out.append(res.logits[0, -1].double().cpu().numpy())
    return np.stack(out)


def distances(ours, theirs):
    """Per step: the relative L2 distance of `ours` from `theirs`, and whether the largest
    logits agree."""
    import numpy as np

    rel = [float(np.linalg.norm(a - b) / np.linalg.norm(b)) for a, b in zip(ours, theirs)]
    same = [int(np.argmax(a)) == int(np.argmax(b)) for a, b in zip(ours, theirs)]
    return rel, same
