"""kreg.ops on torch tensors against float64 references."""

import math

import numpy as np
import pytest

import kreg
from conftest import framework, requires_gpu

pytestmark = requires_gpu


@pytest.fixture
def torch():
    return framework("torch")


def ref(t):
    return t.double().cpu().numpy()


def close(got, want, tol=1e-5):
    np.testing.assert_allclose(ref(got), want, rtol=tol, atol=tol)


def test_binary_ops(torch):
    a = torch.randn(33, 200, device="cuda")
    b = torch.randn(33, 200, device="cuda") + 3
    row = torch.randn(200, device="cuda")
    close(kreg.ops.add(a, b), ref(a) + ref(b))
    close(kreg.ops.add(a, row), ref(a) + ref(row))
    close(kreg.ops.sub(a, b), ref(a) - ref(b))
    close(kreg.ops.mul(a, b), ref(a) * ref(b))
    close(kreg.ops.div(a, b), ref(a) / ref(b))
    close(kreg.ops.scale(a, 0.5), ref(a) * 0.5)
    close(kreg.ops.swiglu(a, b), ref(a) / (1 + np.exp(-ref(a))) * ref(b))
    out = kreg.ops.add(a, b)
    assert isinstance(out, torch.Tensor) and out.shape == a.shape


def test_casts(torch):
    a = torch.randn(1000, device="cuda")
    h = kreg.ops.cast(a, torch.float16)
    assert h.dtype == torch.float16 and torch.equal(h, a.half())
    bf = kreg.ops.cast(a, "bfloat16")
    assert bf.dtype == torch.bfloat16 and torch.equal(bf, a.bfloat16())


def test_norms(torch):
    x = torch.randn(17, 256, device="cuda")
    w = torch.randn(256, device="cuda")
    bias = torch.randn(256, device="cuda")
    r = torch.randn(17, 256, device="cuda")
    xd = ref(x)
    rms = xd / np.sqrt((xd**2).mean(-1, keepdims=True) + 1e-6) * ref(w)
    close(kreg.ops.rms_norm(x, w, 1e-6), rms, 1e-4)
    norm, h = kreg.ops.add_rms_norm(x, r, w, 1e-6)
    hd = xd + ref(r)
    close(h, hd)
    close(norm, hd / np.sqrt((hd**2).mean(-1, keepdims=True) + 1e-6) * ref(w), 1e-4)
    mean = xd.mean(-1, keepdims=True)
    var = xd.var(-1, keepdims=True)
    close(kreg.ops.layer_norm(x, w, bias, 1e-5), (xd - mean) / np.sqrt(var + 1e-5) * ref(w) + ref(bias), 1e-4)


def test_layouts(torch):
    x = torch.randn(31, 45, device="cuda")
    assert torch.equal(kreg.ops.transpose(x), x.t().contiguous())
    y = torch.randn(3, 31, 45, device="cuda")
    assert torch.equal(kreg.ops.permute021(y), y.permute(0, 2, 1).contiguous())


def test_rope(torch):
    tokens, heads, dim = 7, 4, 64
    x = torch.randn(tokens, heads, dim, device="cuda")
    pos = torch.arange(5, 5 + tokens, device="cuda", dtype=torch.int32)
    xd = ref(x)
    inv = 10000.0 ** (-np.arange(0, dim, 2) / dim)
    ang = (np.arange(5, 5 + tokens)[:, None] * inv[None, :])[:, None, :]
    c, s = np.cos(ang), np.sin(ang)
    want = xd.copy()
    want[..., 0::2] = xd[..., 0::2] * c - xd[..., 1::2] * s
    want[..., 1::2] = xd[..., 0::2] * s + xd[..., 1::2] * c
    close(kreg.ops.rope(x, pos), want, 1e-4)
    close(kreg.ops.rope(x, 5), want, 1e-4)


def test_softmax_and_reductions(torch):
    x = torch.randn(9, 300, device="cuda")
    xd = ref(x) * 0.5
    e = np.exp(xd - xd.max(-1, keepdims=True))
    close(kreg.ops.softmax(x, 0.5), e / e.sum(-1, keepdims=True))
    close(kreg.ops.row_sum(x), ref(x).sum(-1), 1e-4)
    close(kreg.ops.row_max(x), ref(x).max(-1))
    am = kreg.ops.argmax(x)
    assert am.dtype == torch.int64 and am.tolist() == ref(x).argmax(-1).tolist()


def test_gelu_embedding_gemv(torch):
    x = torch.randn(1000, device="cuda")
    xd = ref(x)
    close(kreg.ops.gelu(x), 0.5 * xd * (1 + np.vectorize(math.erf)(xd / math.sqrt(2))), 1e-5)
    table = torch.randn(50, 16, device="cuda")
    ids = torch.tensor([[3, 7], [49, 0]], device="cuda", dtype=torch.int32)
    assert torch.equal(kreg.ops.embedding(table, ids), table[ids.long()])
    w = torch.randn(64, 128, device="cuda")
    v = torch.randn(128, device="cuda")
    close(kreg.ops.gemv(w, v), ref(w) @ ref(v), 1e-4)


def decode_reference(q, k_cache, v_cache, table, lens, scale, soft_cap=0.0, window_left=-1):
    """float64 attention of each sequence's query over the keys its table points at."""
    qd, kd, vd = ref(q), ref(k_cache), ref(v_cache)
    batch, q_heads, dim = qd.shape
    page = kd.shape[1]
    group = q_heads // kd.shape[2]
    out = np.zeros_like(qd)
    for b in range(batch):
        length = int(lens[b])
        first = max(0, length - 1 - window_left) if window_left >= 0 else 0
        rows = [(table[b][t // page], t % page) for t in range(first, length)]
        if not rows:
            continue
        keys = np.stack([kd[p, r] for p, r in rows])  # tokens x kv_heads x dim
        values = np.stack([vd[p, r] for p, r in rows])
        for h in range(q_heads):
            s = keys[:, h // group] @ qd[b, h] * scale
            if soft_cap > 0:
                s = soft_cap * np.tanh(s / soft_cap)
            p = np.exp(s - s.max())
            out[b, h] = (p / p.sum()) @ values[:, h // group]
    return out


@pytest.mark.parametrize("dtype_name", ["float16", "bfloat16"])
def test_decode_attention(torch, dtype_name):
    dtype = getattr(torch, dtype_name)
    gen = torch.Generator(device="cuda").manual_seed(5)
    batch, q_heads, kv_heads, dim, page = 3, 16, 4, 128, 16
    lens = [1, 17, 401]
    max_pages = (max(lens) + page - 1) // page
    pages = batch * max_pages
    k_cache = torch.rand(pages, page, kv_heads, dim, device="cuda", generator=gen).to(dtype) * 2 - 1
    v_cache = torch.rand(pages, page, kv_heads, dim, device="cuda", generator=gen).to(dtype) * 2 - 1
    q = torch.rand(batch, q_heads, dim, device="cuda", generator=gen).to(dtype) * 2 - 1
    order = torch.randperm(pages, device="cuda", generator=gen).to(torch.int32)
    table = order.reshape(batch, max_pages)
    seq_lens = torch.tensor(lens, dtype=torch.int32, device="cuda")
    tol = 2e-3 if dtype_name == "float16" else 1.6e-2
    table_host = table.cpu().tolist()
    got = kreg.ops.decode_attention(q, k_cache, v_cache, table, seq_lens)
    assert isinstance(got, torch.Tensor) and got.shape == q.shape and got.dtype == dtype
    want = decode_reference(q, k_cache, v_cache, table_host, lens, 1 / math.sqrt(dim))
    np.testing.assert_allclose(ref(got), want, atol=tol, rtol=0)
    got = kreg.ops.decode_attention(q, k_cache, v_cache, table, seq_lens, scale=0.3,
                                    soft_cap=2.0, window_left=64)
    want = decode_reference(q, k_cache, v_cache, table_host, lens, 0.3, 2.0, 64)
    np.testing.assert_allclose(ref(got), want, atol=tol, rtol=0)
    got = kreg.ops.decode_attention(q, k_cache, v_cache, table, seq_lens, splits=3)
    want = decode_reference(q, k_cache, v_cache, table_host, lens, 1 / math.sqrt(dim))
    np.testing.assert_allclose(ref(got), want, atol=tol, rtol=0)
    with pytest.raises(kreg.InvalidArgument, match="splits"):
        kreg.ops.decode_attention(q, k_cache, v_cache, table, seq_lens, splits=257)
    with pytest.raises(kreg.InvalidArgument, match="block_table"):
        kreg.ops.decode_attention(q, k_cache, v_cache, table.to(torch.int64), seq_lens)


def attention_reference(q, k, v, causal, scale, mask=None):
    """float64 attention of one sequence: q [len_q, heads, d], k, v [len_k, kv_heads, d]."""
    qd, kd, vd = ref(q), ref(k), ref(v)
    group = qd.shape[1] // kd.shape[1]
    kd, vd = np.repeat(kd, group, axis=1), np.repeat(vd, group, axis=1)
    s = np.einsum("ihd,jhd->hij", qd, kd) * scale
    len_q, len_k = qd.shape[0], kd.shape[0]
    hidden = np.zeros((len_q, len_k), dtype=bool)
    if causal:
        hidden |= np.arange(len_k)[None, :] > np.arange(len_q)[:, None] + (len_k - len_q)
    if mask is not None:
        hidden = hidden | ~mask
    s = np.where(hidden[None], -np.inf, s)
    top = s.max(-1, keepdims=True)
    w = np.exp(s - np.where(np.isfinite(top), top, 0))
    total = w.sum(-1, keepdims=True)
    w = np.where(total > 0, w / np.where(total > 0, total, 1), 0)
    return np.einsum("hij,jhd->ihd", w, vd)


@pytest.mark.parametrize("dtype_name", ["float16", "bfloat16"])
def test_attention(torch, dtype_name):
    dtype = getattr(torch, dtype_name)
    gen = torch.Generator(device="cuda").manual_seed(9)
    tol = 2e-3 if dtype_name == "float16" else 1.6e-2

    def rand(*shape):
        return (torch.rand(*shape, device="cuda", generator=gen) * 2 - 1).to(dtype)

    q, k, v = rand(2, 70, 8, 64), rand(2, 90, 2, 64), rand(2, 90, 2, 64)
    got = kreg.ops.attention(q, k, v, causal=True)
    assert isinstance(got, torch.Tensor) and got.shape == q.shape and got.dtype == dtype
    for b in range(2):
        want = attention_reference(q[b], k[b], v[b], True, 1 / 8)
        np.testing.assert_allclose(ref(got[b]), want, atol=tol, rtol=0)

    # Packed sequences of 5 and 40 queries over 5 and 60 keys, with a boolean mask.
    lens_q, lens_k = [5, 40], [5, 60]
    qp, kp, vp = rand(45, 4, 128), rand(65, 4, 128), rand(65, 4, 128)
    cu_q = torch.tensor([0, 5, 45], dtype=torch.int32, device="cuda")
    cu_k = torch.tensor([0, 5, 65], dtype=torch.int32, device="cuda")
    keep = torch.rand(2, 1, 40, 60, device="cuda", generator=gen) < 0.8
    got = kreg.ops.attention(qp, kp, vp, cu_q, cu_k, mask=keep, scale=0.2)
    assert got.shape == qp.shape
    for b, (q0, k0) in enumerate(((0, 0), (5, 5))):
        lq, lk = lens_q[b], lens_k[b]
        want = attention_reference(qp[q0:q0 + lq], kp[k0:k0 + lk], vp[k0:k0 + lk], False, 0.2,
                                   keep[b, 0, :lq, :lk].cpu().numpy())
        np.testing.assert_allclose(ref(got[q0:q0 + lq]), want, atol=tol, rtol=0)
    with pytest.raises(kreg.InvalidArgument, match="both cu_seqlens"):
        kreg.ops.attention(qp, kp, vp, cu_q)


@pytest.mark.parametrize("dtype_name", ["float16", "bfloat16"])
def test_kv_append(torch, dtype_name):
    dtype = getattr(torch, dtype_name)
    pages, page, kv_heads, dim, tokens = 5, 16, 2, 128, 9
    gen = torch.Generator(device="cuda").manual_seed(3)
    k_cache = torch.zeros(pages, page, kv_heads, dim, device="cuda", dtype=dtype)
    v_cache = torch.zeros_like(k_cache)
    k = (torch.rand(tokens, kv_heads, dim, device="cuda", generator=gen) * 2 - 1).to(dtype)
    v = (torch.rand(tokens, kv_heads, dim, device="cuda", generator=gen) * 2 - 1).to(dtype)
    slots = torch.tensor([3, 70, 16, -1, 79, 0, 41, 55, 20], dtype=torch.int32, device="cuda")
    positions = torch.arange(100, 100 + tokens, dtype=torch.int32, device="cuda")
    assert kreg.ops.kv_append(k_cache, v_cache, k, v, slots, rope_positions=positions) is None
    turned = kreg.ops.rope(k, positions)
    k_rows = k_cache.reshape(pages * page, kv_heads, dim)
    v_rows = v_cache.reshape(pages * page, kv_heads, dim)
    written = [i for i, s in enumerate(slots.tolist()) if s >= 0]
    where = slots[written].long()
    assert torch.equal(v_rows[where], v[written])
    tol = 2e-3 if dtype_name == "float16" else 1.6e-2
    np.testing.assert_allclose(ref(k_rows[where]), ref(turned[written]), atol=tol, rtol=0)
    untouched = torch.ones(pages * page, dtype=torch.bool, device="cuda")
    untouched[where] = False
    assert not k_rows[untouched].any() and not v_rows[untouched].any()
    with pytest.raises(kreg.InvalidArgument, match="written in place"):
        kreg.ops.kv_append(k_cache.cpu(), v_cache, k, v, slots)
    with pytest.raises(kreg.InvalidArgument, match="row-major"):
        kreg.ops.kv_append(k_cache.transpose(0, 1), v_cache.transpose(0, 1), k, v, slots)


@pytest.mark.parametrize("dtype_name", ["float16", "bfloat16"])
def test_matmul(torch, dtype_name):
    dtype = getattr(torch, dtype_name)
    gen = torch.Generator(device="cuda").manual_seed(11)

    def rand(*shape):
        return (torch.rand(*shape, device="cuda", generator=gen) * 2 - 1).to(dtype)

    def rel(got, want):
        got, want = ref(got), want
        return np.linalg.norm(got - want) / np.linalg.norm(want)

    tol = 1e-3 if dtype_name == "float16" else 6e-3
    x = rand(2, 5, 256)  # decode-sized rows with leading dimensions
    w = rand(384, 256)  # a linear layer's weight, read as its transpose in place
    bias = rand(384)
    y = kreg.ops.matmul(x, w.t(), bias=bias)
    assert y.shape == (2, 5, 384) and y.dtype == dtype
    assert rel(y, ref(x) @ ref(w).T + ref(bias)) < tol
    a = rand(300, 192)
    b = rand(192, 136)
    up = rand(300, 136)
    gated = kreg.ops.matmul(a, b, epilogue="silu_gate", other=up, out_dtype=torch.float32)
    assert gated.dtype == torch.float32
    s = ref(a) @ ref(b)
    assert rel(gated, s / (1 + np.exp(-s)) * ref(up)) < 1e-4
    with pytest.raises(kreg.InvalidArgument, match="unknown epilogue"):
        kreg.ops.matmul(a, b, epilogue="relu")
    with pytest.raises(kreg.InvalidArgument, match="do not chain"):
        kreg.ops.matmul(a, up)


@pytest.mark.parametrize("dtype_name", ["float16", "bfloat16"])
def test_quantized_matmul(torch, dtype_name):
    dtype = getattr(torch, dtype_name)
    gen = torch.Generator(device="cuda").manual_seed(5)

    def rand(*shape):
        return (torch.rand(*shape, device="cuda", generator=gen) * 2 - 1).to(dtype)

    w = rand(320, 512)
    for bits, group in ((4, 64), (8, 128), (4, 32)):
        w_q, scales, biases = kreg.ops.quantize(w, group, bits)
        assert w_q.dtype == torch.uint32 and w_q.shape == (320, 512 * bits // 32)
        assert scales.shape == (320, 512 // group) and biases.dtype == dtype
        # The codes, unpacked here as MLX packs them: element j of a word in bits j * bits up.
        words = w_q.cpu().view(torch.int32).numpy().view(np.uint32).astype(np.uint64)
        per = 32 // bits
        codes = np.stack([(words >> (bits * j)) & ((1 << bits) - 1) for j in range(per)], -1)
        codes = codes.reshape(320, 512).astype(np.float64)
        s = np.repeat(ref(scales), group, axis=1)
        b = np.repeat(ref(biases), group, axis=1)
        decoded = ref(kreg.ops.dequantize(w_q, scales, biases, group, bits))
        assert np.allclose(decoded, s * codes + b, rtol=1e-2, atol=1e-3)
        # Half a step, or about one at a group's far extreme (zero's exact code may shrink
        # it), plus the rounding of the scale (times up to 255) and the bias.
        assert np.all(np.abs(decoded - ref(w)) <= np.abs(s) * 1.6 + 4e-3)
        tol = 1e-3 if dtype_name == "float16" else 6e-3
        for rows in (1, 16, 40):  # the decode kernel, then dequantize + matmul
            x = rand(rows, 512)
            bias = rand(320)
            y = kreg.ops.quantized_matmul(x, w_q, scales, biases, group_size=group, bits=bits,
                                          bias=bias)
            assert y.shape == (rows, 320) and y.dtype == dtype
            want = ref(x) @ decoded.T + ref(bias)
            assert np.linalg.norm(ref(y) - want) / np.linalg.norm(want) < tol
    with pytest.raises(kreg.InvalidArgument, match="transpose=True"):
        kreg.ops.quantized_matmul(x, w_q, scales, biases, transpose=False)
    with pytest.raises(kreg.InvalidArgument, match="bits must be 4 or 8"):
        kreg.ops.quantize(w, 64, 3)


def ggml_blocks(fmt, n, k, rng):
    """Random llama.cpp blocks for an [n, k] weight, and the weights they decode to."""
    if fmt == "Q8_0":
        blocks = rng.integers(0, 256, (n, k // 32, 34), dtype=np.uint8)
        d = (rng.integers(1, 17, (n, k // 32)) / 2048).astype(np.float16)
        blocks[:, :, 0:2] = d[..., None].view(np.uint8)
        q = blocks[:, :, 2:].view(np.int8).astype(np.float32)
        w = d.astype(np.float32)[..., None] * q
        return blocks.reshape(n, -1), w.reshape(n, k)
    blocks = rng.integers(0, 256, (n, k // 256, 144), dtype=np.uint8)
    d = (rng.integers(1, 17, (n, k // 256)) / 4096).astype(np.float16)
    dmin = (rng.integers(1, 17, (n, k // 256)) / 8192).astype(np.float16)
    blocks[:, :, 0:2] = d[..., None].view(np.uint8)
    blocks[:, :, 2:4] = dmin[..., None].view(np.uint8)
    s = blocks[:, :, 4:16].astype(np.int32)
    sc = np.concatenate([s[..., 0:4] & 63, (s[..., 8:12] & 15) | ((s[..., 0:4] >> 6) << 4)], -1)
    mn = np.concatenate([s[..., 4:8] & 63, (s[..., 8:12] >> 4) | ((s[..., 4:8] >> 6) << 4)], -1)
    qs = blocks[:, :, 16:].reshape(n, k // 256, 4, 32)
    q = np.stack([qs & 15, qs >> 4], 3).reshape(n, k // 256, 8, 32).astype(np.float32)
    scale = d.astype(np.float32)[..., None] * sc.astype(np.float32)
    offset = dmin.astype(np.float32)[..., None] * mn.astype(np.float32)
    w = scale[..., None] * q - offset[..., None]
    return blocks.reshape(n, -1), w.reshape(n, k)


@pytest.mark.parametrize("dtype_name", ["float16", "bfloat16"])
@pytest.mark.parametrize("fmt", ["Q8_0", "Q4_K"])
def test_ggml_matmul(torch, dtype_name, fmt):
    dtype = getattr(torch, dtype_name)
    rng = np.random.default_rng(11)
    blocks, w = ggml_blocks(fmt, 100, 1024, rng)
    tol = 1e-3 if dtype_name == "float16" else 6e-3
    for rows in (1, 16, 33):
        x = torch.tensor(rng.uniform(-1, 1, (rows, 1024)), dtype=torch.float32).to(dtype).cuda()
        y = kreg.ops.ggml_matmul(x, torch.tensor(blocks).cuda(), fmt)
        assert y.shape == (rows, 100) and y.dtype == dtype
        want = ref(x) @ w.T.astype(np.float64)
        assert np.linalg.norm(ref(y) - want) / np.linalg.norm(want) < tol
    with pytest.raises(kreg.InvalidArgument, match="unknown GGML format"):
        kreg.ops.ggml_matmul(x, torch.tensor(blocks).cuda(), "Q5_K")


@pytest.mark.parametrize("dtype_name", ["float16", "bfloat16"])
def test_moe(torch, dtype_name):
    dtype = getattr(torch, dtype_name)
    gen = torch.Generator(device="cuda").manual_seed(11)

    def rand(*shape, scale=1.0):
        return ((torch.rand(*shape, device="cuda", generator=gen) * 2 - 1) * scale).to(dtype)

    tokens, experts, k, hidden, ffn = 40, 16, 4, 128, 72
    x = rand(tokens, hidden)
    logits = rand(tokens, experts, scale=4.0)
    gate, up = rand(experts, ffn, hidden, scale=0.2), rand(experts, ffn, hidden, scale=0.2)
    down = rand(experts, hidden, ffn)
    weights, ids = kreg.ops.moe_route(logits, k)
    assert weights.dtype == torch.float32 and ids.dtype == torch.int32
    assert weights.shape == ids.shape == (tokens, k)
    # The router against a float64 softmax and its top k (ties to the lower expert).
    p = np.exp(ref(logits) - ref(logits).max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    order = np.argsort(-p, axis=1, kind="stable")[:, :k]
    assert np.array_equal(ids.cpu().numpy(), order)
    top = np.take_along_axis(p, order, 1)
    np.testing.assert_allclose(ref(weights), top / top.sum(1, keepdims=True), rtol=1e-5, atol=1e-6)
    # The layer against float64 experts run token by token.
    want = np.zeros((tokens, hidden))
    xs, gs, us, ds = ref(x), ref(gate), ref(up), ref(down)
    for t in range(tokens):
        for j in range(k):
            e = order[t, j]
            g, u = gs[e] @ xs[t], us[e] @ xs[t]
            want[t] += ref(weights)[t, j] * (ds[e] @ (g / (1 + np.exp(-g)) * u))
    out = kreg.ops.moe(x, logits, gate, up, down, top_k=k)
    assert isinstance(out, torch.Tensor) and out.shape == x.shape and out.dtype == dtype
    tol = 2e-3 if dtype_name == "float16" else 1.2e-2
    assert np.linalg.norm(ref(out) - want) / np.linalg.norm(want) < tol
    by_hand = kreg.ops.moe_experts(x, weights, ids, gate, up, down)
    assert np.linalg.norm(ref(by_hand) - want) / np.linalg.norm(want) < tol
    with pytest.raises(kreg.InvalidArgument, match="top_k must be 1 to 8"):
        kreg.ops.moe_route(logits, 9)
