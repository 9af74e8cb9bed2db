"""helpers.GPT: shapes, causality, weight tying, KV-cache generation, training, errors."""

import pytest
import torch
import torch.nn.functional as F

from helpers import GPT, EncoderLayer, causal_mask, count_parameters
from helpers.data import toy_language as tl
from helpers.gpt import GPTBlock, complete_greedy
from helpers.training import train_lm


def small(tie=True, seed=0):
    torch.manual_seed(seed)
    return GPT(11, d_model=16, num_heads=2, num_layers=2, d_ff=32, max_len=20, tie_weights=tie).eval()


def test_forward_shape_and_causality():
    m = small()
    ids = torch.randint(0, 11, (3, 9))
    out = m(ids)
    assert out.shape == (3, 9, 11)
    ids2 = ids.clone()
    ids2[:, 5:] = (ids2[:, 5:] + 1) % 11
    torch.testing.assert_close(m(ids2)[:, :5], out[:, :5])
    assert not torch.allclose(m(ids2)[:, 5:], out[:, 5:])


def test_block_equals_encoder_layer_with_causal_mask_and_torch():
    torch.manual_seed(0)
    block = GPTBlock(16, 4, 32).eval()
    enc = EncoderLayer(16, 4, 32, norm_first=True).eval()
    enc.load_state_dict(block.state_dict())
    x = torch.randn(2, 7, 16)
    torch.testing.assert_close(block(x, causal_mask(7)), enc(x, causal_mask(7)))


def test_weight_tying_parameter_count():
    tied, untied = small(True), small(False)
    assert tied.lm_head.weight is tied.tok_embed.weight
    assert untied.lm_head.weight is not untied.tok_embed.weight
    assert count_parameters(untied) - count_parameters(tied) == 11 * 16


def test_cached_forward_equals_full_forward():
    m = small()
    ids = torch.randint(0, 11, (2, 8))
    full = m(ids)
    cache = m.new_cache()
    parts = [m(ids[:, :3], cache=cache), m(ids[:, 3:4], cache=cache), m(ids[:, 4:], cache=cache)]
    torch.testing.assert_close(torch.cat(parts, dim=1), full)


@pytest.mark.parametrize("kwargs", [dict(temperature=0), dict(temperature=1.0),
                                    dict(temperature=0.7, top_k=3), dict(temperature=1.3, top_p=0.8)])
def test_generate_same_ids_with_and_without_cache(kwargs):
    m = small()
    prompt = torch.randint(0, 11, (4, 3))
    a = m.generate(prompt, 12, use_cache=True, generator=torch.Generator().manual_seed(5), **kwargs)
    b = m.generate(prompt, 12, use_cache=False, generator=torch.Generator().manual_seed(5), **kwargs)
    assert a.shape == (4, 15) and torch.equal(a, b) and torch.equal(a[:, :3], prompt)


def test_generate_restores_training_mode():
    m = small().train()
    m.generate(torch.zeros(1, 1, dtype=torch.long), 2, temperature=0)
    assert m.training


@pytest.mark.parametrize("call, match", [
    (lambda m: m.generate(torch.zeros(1, 15, dtype=torch.long), 6), "longer than max_len"),
    (lambda m: m.generate(torch.zeros(1, 21, dtype=torch.long), 0), "longer than max_len"),
    (lambda m: m(torch.full((1, 3), 11)), "vocabulary has 11 tokens"),
    (lambda m: m(torch.full((1, 3), -1)), "vocabulary"),
    (lambda m: m(torch.zeros(3, dtype=torch.long)), r"shape \(B, L\)"),
    (lambda m: m.generate(torch.zeros(1, 2, dtype=torch.long), 3, top_k=0), "k >= 1"),
    (lambda m: m.generate(torch.zeros(1, 2, dtype=torch.long), 3, top_p=0.0), r"p in \(0, 1\]"),
    (lambda m: m.generate(torch.zeros(1, 2, dtype=torch.long), 3, temperature=-1), "temperature"),
    (lambda m: m.generate(torch.zeros(1, 2, dtype=torch.long), -1), "max_new_tokens"),
    # settings are refused even when nothing is generated (they were silently accepted)
    (lambda m: m.generate(torch.zeros(1, 2, dtype=torch.long), 0, temperature=-1), "temperature"),
    (lambda m: m.generate(torch.zeros(1, 2, dtype=torch.long), 0, top_k=-3), "top_k"),
    (lambda m: m.generate(torch.zeros(1, 2, dtype=torch.long), 0, top_p=1.5), "top_p"),
])
def test_errors(call, match):
    with pytest.raises(ValueError, match=match):
        call(small())


def test_float_ids_rejected():
    with pytest.raises(TypeError, match="integer token ids"):
        small()(torch.zeros(1, 3))


def test_bad_constructor_arguments():
    with pytest.raises(ValueError, match="vocab_size"):
        GPT(0)
    with pytest.raises(ValueError, match="divisible"):
        GPT(10, d_model=30, num_heads=4)


def test_train_lm_learns_the_toy_language_a_little():
    torch.manual_seed(0)
    m = GPT(len(tl.VOCAB), d_model=32, num_heads=2, num_layers=1, d_ff=64, max_len=24)
    t = torch.tensor([[1] + sum((tl.encode(s) for s in tl.sentences(8, seed=i)), [])[:16]
                      for i in range(64)])
    x, y = t[:, :-1], t[:, 1:]
    h = train_lm(m, x, y, steps=60, batch_size=16, warmup_steps=5, log_every=20)
    assert h["step"] == [20, 40, 60] and h["loss"][-1] < h["loss"][0]
    assert not m.training
    with pytest.raises(ValueError, match="inputs and targets"):
        train_lm(m, x, y[:, :-1], steps=1)


def test_complete_greedy_groups_by_length():
    m = small()
    prompts = [[1, 2], [3, 4, 5], [6, 7]]
    out = complete_greedy(m, prompts, 4)
    for p, o in zip(prompts, out, strict=True):
        want = m.generate(torch.tensor([p]), 4, temperature=0)[0, len(p):].tolist()
        assert o == want


# ---- notebook 13's options -------------------------------------------------------------------

from torch import nn  # noqa: E402

from helpers import kv_cache_bytes, sliding_window_mask  # noqa: E402
from helpers.data.toy_language import pack_sentences  # noqa: E402
from helpers.modern import (  # noqa: E402
    ModernBlock,
    RollingKVCache,
    cache_nbytes,
    max_attention_logit,
    window_sink_mask,
)
from helpers.positional import LearnedPositions  # noqa: E402
from helpers.training import train_lm_cached  # noqa: E402


class Notebook12GPT(nn.Module):
    """notebook 12's GPT exactly as it was built before notebook 13's options (a frozen copy of
    its constructor and forward), to check that the defaults did not change it."""

    def __init__(self, vocab_size, d_model, num_heads, num_layers, d_ff, max_len, tie_weights=True):
        super().__init__()
        self.tok_embed = nn.Embedding(vocab_size, d_model)
        self.positions = LearnedPositions(max_len, d_model)
        self.dropout = nn.Dropout(0.0)
        self.blocks = nn.ModuleList(GPTBlock(d_model, num_heads, d_ff, 0.0) for _ in range(num_layers))
        self.norm = nn.LayerNorm(d_model)
        self.lm_head = nn.Linear(d_model, vocab_size, bias=False)
        if tie_weights:
            self.lm_head.weight = self.tok_embed.weight
        self.apply(GPT._init_weights)

    def forward(self, ids):
        x = self.dropout(self.positions(self.tok_embed(ids), 0))
        mask = causal_mask(ids.shape[1]) if ids.shape[1] > 1 else None
        for block in self.blocks:
            x = block(x, mask)
        return self.lm_head(self.norm(x))


@pytest.mark.parametrize("tie", [True, False])
def test_defaults_are_notebook_12_bit_for_bit(tie):
    torch.manual_seed(3)
    old = Notebook12GPT(13, 16, 2, 2, 32, 20, tie_weights=tie).eval()
    torch.manual_seed(3)
    new = GPT(13, d_model=16, num_heads=2, num_layers=2, d_ff=32, max_len=20, tie_weights=tie).eval()
    explicit = GPT(13, d_model=16, num_heads=2, num_layers=2, d_ff=32, max_len=20, tie_weights=tie,
                   num_kv_heads=None, window=None, sinks=0, norm="layer", qk_norm=False,
                   positions="learned")
    old_state, new_state = old.state_dict(), new.state_dict()
    assert list(old_state) == list(new_state) == list(explicit.state_dict())
    assert all(torch.equal(old_state[k], new_state[k]) for k in old_state)
    assert count_parameters(old) == count_parameters(new)
    ids = torch.randint(0, 13, (3, 11))
    assert torch.equal(old(ids), new(ids))
    assert not new.modern and isinstance(new.blocks[0], GPTBlock)


def modern(seed=0, **options):
    torch.manual_seed(seed)
    return GPT(11, d_model=16, num_heads=4, num_layers=2, d_ff=32, max_len=40, **options).eval()


OPTIONS = [dict(), dict(num_kv_heads=2), dict(num_kv_heads=1, positions="rope"),
           dict(norm="rms", qk_norm=True), dict(positions="sinusoidal", num_kv_heads=2)]


@pytest.mark.parametrize("options", OPTIONS)
@pytest.mark.parametrize("window, sinks", [(4, 0), (4, 2), (3, 1), (1, 0), (20, 0)])
def test_rolling_cache_equals_full_attention_under_the_banded_sink_mask(options, window, sinks):
    m = modern(window=window, sinks=sinks, **options)
    ids = torch.randint(0, 11, (2, 14))
    with torch.no_grad():
        full = m(ids)  # all positions at once under the banded (+ sink) mask
        cache = m.new_cache()
        parts = [m(ids[:, :5], cache=cache)] + [m(ids[:, t:t + 1], cache=cache) for t in range(5, 14)]
    torch.testing.assert_close(torch.cat(parts, dim=1), full)
    assert all(isinstance(c, RollingKVCache) for c in cache)
    assert len(cache[0]) == min(14, sinks + window - 1)
    assert cache[0].positions.tolist() == [p for p in range(14) if p < sinks or p > 14 - window]
    a = m.generate(ids[:, :3], 10, temperature=1.0, generator=torch.Generator().manual_seed(1))
    b = m.generate(ids[:, :3], 10, temperature=1.0, generator=torch.Generator().manual_seed(1),
                   use_cache=False)
    assert torch.equal(a, b)


@pytest.mark.parametrize("options", OPTIONS)
def test_window_covering_the_sequence_is_causal_attention(options):
    m = modern(**options)
    ids = torch.randint(0, 11, (2, 12))
    with torch.no_grad():
        causal = m(ids)
        torch.testing.assert_close(m.set_window(12)(ids), causal)
        torch.testing.assert_close(m.set_window(40, 3)(ids), causal)
        assert not torch.allclose(m.set_window(3)(ids), causal)


def test_window_mask_is_the_sliding_window_mask_plus_sinks():
    pos = torch.arange(9)
    assert torch.equal(window_sink_mask(pos, pos, 3), sliding_window_mask(9, 3))
    assert torch.equal(window_sink_mask(pos, pos, None), causal_mask(9))
    with_sinks = window_sink_mask(pos, pos, 3, 2)
    assert torch.equal(with_sinks, sliding_window_mask(9, 3) | (causal_mask(9) & (pos[None, :] < 2)))


def test_modern_forward_is_causal_and_blocks_are_modern():
    for options in OPTIONS[1:]:
        m = modern(**options)
        assert m.modern and isinstance(m.blocks[0], ModernBlock)
        ids = torch.randint(0, 11, (2, 10))
        changed = ids.clone()
        changed[:, 6:] = (changed[:, 6:] + 1) % 11
        with torch.no_grad():
            torch.testing.assert_close(m(changed)[:, :6], m(ids)[:, :6])


def test_gqa_model_caches_only_the_kv_heads():
    for kv in (4, 2, 1):
        m = modern(num_kv_heads=kv)
        ids = torch.randint(0, 11, (3, 9))
        cache = m.new_cache()
        with torch.no_grad():
            for t in range(9):
                m(ids[:, t:t + 1], cache=cache)
        assert cache[0].k.shape == (3, kv, 9, 4)
        assert cache_nbytes(cache) == kv_cache_bytes(2, kv, 4, 9, batch_size=3)
        w_k = m.blocks[0].self_attn.w_k if kv == 4 else m.blocks[0].self_attn.k_proj  # 4 = MHA
        assert sum(p.numel() for p in w_k.parameters()) == kv * 4 * 16 + kv * 4


def test_cache_nbytes_counts_a_shared_storage_once_and_whole():
    cache = [RollingKVCache(4)]
    packed = torch.zeros(2, 1, 3, 5, 8)  # (B, L, 3, h, d_k): q, k and v in one buffer
    cache[0].k, cache[0].v = packed[:, :, 1].transpose(1, 2), packed[:, :, 2].transpose(1, 2)
    assert cache_nbytes(cache) == packed.numel() * 4  # the views keep all of it alive
    assert cache_nbytes([RollingKVCache(4)]) == 0


def test_rms_norm_and_qk_norm_modules():
    m = modern(norm="rms", qk_norm=True, positions="rope")
    from helpers import RMSNorm
    assert isinstance(m.norm, RMSNorm) and isinstance(m.blocks[0].norm1, RMSNorm)
    assert isinstance(m.blocks[0].self_attn.q_norm, RMSNorm)
    assert m.blocks[0].self_attn.q_norm.weight.shape == (4,)
    names = {n for n, _ in m.named_parameters()}
    assert "blocks.0.self_attn.k_norm.weight" in names and "positions.embed.weight" not in names
    assert count_parameters(modern(norm="rms")) < count_parameters(modern(norm="layer", num_kv_heads=2)) + 10**6


def test_qk_norm_bounds_the_logits():
    m = modern(qk_norm=True)
    with torch.no_grad():
        for block in m.blocks:
            block.self_attn.q_proj.weight.mul_(100.0)  # huge queries: the norm undoes it
            block.self_attn.k_proj.weight.mul_(100.0)
    ids = torch.randint(0, 11, (2, 12))
    largest = max_attention_logit(m, ids)
    assert 0 < largest <= 2.0 + 1e-5  # sqrt(d_k) * max |gamma_q gamma_k| = sqrt(4) * 1
    plain = modern()
    with torch.no_grad():
        for block in plain.blocks:
            block.self_attn.w_q.weight.mul_(100.0)
            block.self_attn.w_k.weight.mul_(100.0)
    assert max_attention_logit(plain, ids) > 2.0


def test_max_attention_logit_matches_explicit_scores():
    m = small()
    ids = torch.randint(0, 11, (2, 7))
    with torch.no_grad():
        h = m.blocks[0].norm1(m.positions(m.tok_embed(ids)))
        attn = m.blocks[0].self_attn
        q, k = attn.split_heads(attn.w_q(h)), attn.split_heads(attn.w_k(h))
        s0 = (q @ k.transpose(-2, -1) / attn.d_k ** 0.5).masked_fill(~causal_mask(7), float("-inf"))
    assert max_attention_logit(m, ids) >= s0.max().item() - 1e-6
    g = modern(num_kv_heads=2)
    value = max_attention_logit(g, ids)
    assert value == max(b.self_attn.max_logit.item() for b in g.blocks)


def test_rope_model_has_no_position_table_and_ignores_absolute_offsets_in_scores():
    m = modern(positions="rope")
    assert count_parameters(m) < count_parameters(modern(num_kv_heads=4, norm="rms")) + 40 * 16
    assert not any("positions" in n for n, _ in m.named_parameters())


@pytest.mark.parametrize("kwargs, match", [
    (dict(num_kv_heads=3), "multiple"), (dict(num_kv_heads=0), "num_kv_heads"),
    (dict(norm="batch"), "norm"), (dict(positions="alibi"), "positions"),
    (dict(qk_norm="yes"), "qk_norm"), (dict(window=0), "window"), (dict(window=2.5), "window"),
    (dict(sinks=2), "needs a window"), (dict(window=4, sinks=-1), "sinks"),
])
def test_bad_options(kwargs, match):
    with pytest.raises((ValueError, TypeError), match=match):
        GPT(11, d_model=16, num_heads=4, num_layers=1, d_ff=8, max_len=8, **kwargs)


def test_set_window_checks_and_returns_the_model():
    m = modern()
    assert m.set_window(3, 1) is m and (m.window, m.sinks) == (3, 1)
    with pytest.raises(ValueError, match="needs a window"):
        m.set_window(None, 2)
    with pytest.raises(ValueError, match="RollingKVCache: window"):
        RollingKVCache(0)
    with pytest.raises(ValueError, match="RollingKVCache: window"):
        RollingKVCache(None)


def test_pack_sentences_is_notebook_12s_packing():
    texts = tl.sentences(50, seed=0)
    x, y = pack_sentences(map(tl.encode, texts), length=32)
    assert x.shape[1] == 32 and (x[:, 0] == 1).all()
    assert int((y >= 0).sum()) == sum(len(tl.encode(s)) for s in texts)
    assert torch.equal(x[:, 1:][y[:, :-1] >= 0], y[:, :-1][y[:, :-1] >= 0])
    with pytest.raises(ValueError, match="length"):
        pack_sentences([[2, 3]], length=1)
    with pytest.raises(ValueError, match="does not fit"):
        pack_sentences([list(range(2, 12))], length=5)
    # ids that are not whole non-negative numbers are refused, not packed as floats or negatives
    for bad in ([[2, 2.7]], [[2, -1]], [[True, 3]], [torch.tensor([2.0, 3.0])]):
        with pytest.raises(ValueError, match="non-negative int ids"):
            pack_sentences(bad, length=8)
    assert torch.equal(pack_sentences([torch.tensor([2, 3])], length=8)[0], pack_sentences([[2, 3]], length=8)[0])


def test_train_lm_cached_loads_the_same_weights_and_retrains_on_a_new_recipe(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTENTION_TUTORIAL_CACHE", str(tmp_path))
    x, y = pack_sentences(map(tl.encode, tl.sentences(200, seed=0)), length=16)

    def make(**options):
        def build():
            torch.manual_seed(0)
            return GPT(len(tl.VOCAB), d_model=16, num_heads=4, num_layers=1, d_ff=16, max_len=16, **options)
        return build

    logged = []
    m1, h1 = train_lm_cached(make(num_kv_heads=2), x, y, 6, name="t", batch_size=8, warmup_steps=2,
                             log_every=3, on_log=lambda m, h: logged.append(h["step"][-1]))
    m2, h2 = train_lm_cached(make(num_kv_heads=2), x, y, 6, name="t", batch_size=8, warmup_steps=2,
                             log_every=3)
    assert (h1["cached"], h2["cached"]) == (False, True) and logged == [3, 6]
    assert h1["loss"] == h2["loss"]
    assert all(torch.equal(a, b) for a, b in zip(m1.state_dict().values(), m2.state_dict().values(),
                                                   strict=True))
    _, h3 = train_lm_cached(make(num_kv_heads=1), x, y, 6, name="t", batch_size=8, warmup_steps=2,
                            log_every=3)
    _, h4 = train_lm_cached(make(num_kv_heads=2), x, y, 7, name="t", batch_size=8, warmup_steps=2,
                            log_every=3)
    assert not h3["cached"] and not h4["cached"] and len(list(tmp_path.glob("gpt-t-*.pt"))) == 3


def test_train_lm_cached_trains_on_the_threads_asked_and_restores_the_setting(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTENTION_TUTORIAL_CACHE", str(tmp_path))
    x, y = pack_sentences(map(tl.encode, tl.sentences(100, seed=0)), length=16)
    seen = []

    def build():
        torch.manual_seed(0)
        return GPT(len(tl.VOCAB), d_model=16, num_heads=2, num_layers=1, d_ff=16, max_len=16)

    before = torch.get_num_threads()
    train_lm_cached(build, x, y, 2, name="thr", batch_size=8, warmup_steps=1, log_every=1,
                    on_log=lambda m, h: seen.append(torch.get_num_threads()))
    assert seen == [1, 1] and torch.get_num_threads() == before
    with pytest.raises(ValueError, match="threads"):
        train_lm_cached(build, x, y, 2, name="thr", threads=0)


# ------------------------------------------------------------------ today's block, streaming, FLOPs
import math  # noqa: E402

from torch.utils.flop_counter import FlopCounterMode  # noqa: E402

from helpers.gpt import flops_per_token, forward_flops, sample_sentences  # noqa: E402
from helpers.modern import ModernAttention, PreallocatedKVCache, SwiGLU  # noqa: E402
from helpers.positional import apply_rope  # noqa: E402

BEFORE = torch.load(__import__("pathlib").Path(__file__).parent / "data" / "gpt_before_issue25.pt",
                    weights_only=True)


@pytest.mark.parametrize("name", sorted(BEFORE["models"]))
def test_saved_models_from_before_issue_25_are_rebuilt_bit_for_bit(name):
    """tests/data/gpt_before_issue25.pt: initial weights, logits and sampled ids of six GPTs, saved
    with the code before this issue. The new arguments' defaults rebuild the same weights and, in
    the same build of torch, the same outputs bit for bit. One change is on purpose: a RoPE model
    with sinks now sees them as StreamingLLM does (just before its window), so its logits agree up
    to position sinks + window - 1 and differ after."""
    saved = BEFORE["models"][name]
    torch.manual_seed(3)
    m = GPT(13, d_model=16, num_heads=4, num_layers=2, d_ff=32, max_len=20, **saved["kwargs"]).eval()
    state = m.state_dict()
    assert list(state) == list(saved["state"])
    assert all(torch.equal(state[k], saved["state"][k]) for k in state)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with torch.no_grad():
            logits = m(BEFORE["ids"])
        generated = m.generate(BEFORE["ids"][:, :4], 8, temperature=1.0, generator=torch.Generator().manual_seed(0))
    finally:
        torch.set_num_threads(threads)
    same_build = (BEFORE["torch"], BEFORE["cpu"]) == (str(torch.__version__), torch.backends.cpu.get_cpu_capability())
    check = torch.equal if same_build else (lambda a, b: torch.allclose(a, b, rtol=1e-5, atol=1e-6))
    if name == "rope_window_sinks":
        last_same = m.sinks + m.window - 1
        assert check(logits[:, : last_same + 1], saved["logits"][:, : last_same + 1])
        assert not torch.allclose(logits[:, last_same + 1:], saved["logits"][:, last_same + 1:])
    else:
        assert check(logits, saved["logits"])
        assert torch.equal(generated, saved["generated"])


def llama_like(**changes):
    torch.manual_seed(0)
    options = dict(d_model=16, num_heads=4, num_layers=2, d_ff=24, max_len=12, tie_weights=False, num_kv_heads=2,
                   norm="rms", positions="rope", activation="swiglu", bias=False)
    return GPT(11, **{**options, **changes}).eval()


def test_activation_options_build_the_feed_forward_asked_for():
    x = torch.randn(2, 5, 16)
    for activation, want in (("relu", torch.relu), ("gelu", lambda t: F.gelu(t, approximate="none"))):
        ff = modern(activation=activation).blocks[0].feed_forward
        torch.testing.assert_close(ff(x), ff.linear2(want(ff.linear1(x))))
    ff = llama_like().blocks[0].feed_forward
    assert isinstance(ff, SwiGLU) and all(lin.bias is None for lin in (ff.gate, ff.up, ff.down))
    torch.testing.assert_close(ff(x), ff.down(F.silu(ff.gate(x)) * ff.up(x)))
    assert sum(p.numel() for p in ff.parameters()) == 3 * 16 * 24


def test_bias_false_removes_every_bias_and_norm_eps_reaches_every_rms_norm():
    m = llama_like(qk_norm=True, norm_eps=1e-3, activation="gelu")
    assert not [n for n, _ in m.named_parameters() if n.endswith("bias")]
    eps = [mod.eps for mod in m.modules() if type(mod).__name__ == "RMSNorm"]
    assert len(eps) == 2 * 2 + 1 + 2 * 2 and set(eps) == {1e-3}  # block norms, final norm, q/k norms
    with_bias = modern(norm="rms")
    assert sum(n.endswith("bias") for n, _ in with_bias.named_parameters()) == 2 * (4 + 2)


def test_new_options_enter_the_cache_key_config_only_when_set():
    assert set(small().config) == {"vocab_size", "d_model", "num_heads", "num_layers", "d_ff", "max_len",
                                   "dropout", "tie_weights", "num_kv_heads", "norm", "qk_norm", "positions"}
    assert llama_like().config["activation"] == "swiglu" and llama_like().config["bias"] is False


@pytest.mark.parametrize("kwargs, match", [
    (dict(activation="tanh"), "activation must be one of"),
    (dict(norm_eps=0.0), "norm_eps must be a number in"),
    (dict(norm_eps=1e-5), "sets the epsilon of RMSNorm"),
    (dict(bias=1), "bias must be True or False"),
])
def test_bad_new_options(kwargs, match):
    with pytest.raises((ValueError, TypeError), match=match):
        GPT(11, d_model=16, num_heads=4, **kwargs)


@pytest.mark.parametrize("positions", ["rope", "none"])
def test_streaming_past_max_len_with_a_window(positions):
    m = modern(positions=positions, window=4, sinks=1)  # max_len 40
    ids = torch.randint(0, 11, (2, 60))
    with torch.no_grad():
        full = m(ids)  # 60 > max_len: allowed
        cache = m.new_cache()
        steps = torch.cat([m(ids[:, :7], cache=cache)] + [m(ids[:, t:t + 1], cache=cache) for t in range(7, 60)], 1)
    torch.testing.assert_close(steps, full)
    assert len(cache[0]) == 1 + 4 - 1 and cache[0].seen == 60
    out = m.generate(ids[:, :3], 70, temperature=0)
    assert out.shape == (2, 73)
    assert torch.equal(out, m.generate(ids[:, :3], 70, temperature=0, use_cache=False))


@pytest.mark.parametrize("options", [dict(), dict(positions="sinusoidal", window=4), dict(positions="rope"),
                                     dict(positions="none")])
def test_past_max_len_is_refused_with_a_message_naming_max_len(options):
    m = modern(**options)
    with pytest.raises(ValueError, match="longer than max_len=40"):
        m(torch.zeros(1, 41, dtype=torch.long))
    with pytest.raises(ValueError, match="longer than max_len=40"):
        m.generate(torch.zeros(1, 30, dtype=torch.long), 11)


def test_rolling_cache_holds_keys_before_rope_and_rotates_them_by_their_place_in_the_cache():
    """StreamingLLM: the cache stores keys unrotated; a decoding step rotates the cached keys by
    their index in the cache (sinks first, then the window) and the query by the last index."""
    m = modern(positions="rope", window=3, sinks=2)
    attn, block = m.blocks[0].self_attn, m.blocks[0]
    ids = torch.randint(0, 11, (1, 9))
    with torch.no_grad():
        cache = m.new_cache()
        m(ids[:, :8], cache=cache)
        x = m.tok_embed(ids)  # (1, 9, d_model): block 0's input (RoPE adds nothing to it)
        h = block.norm1(x)
        raw_k = attn._heads(attn.k_proj(h), attn.num_kv_heads)  # unrotated keys of every position
        assert cache[0].positions.tolist() == [0, 1, 6, 7]
        torch.testing.assert_close(cache[0].k, raw_k[:, :, [0, 1, 6, 7]])
        out = block(x[:, 8:], None, cache=cache[0], start=8, window=3, sinks=2)  # one decoding step
        q = apply_rope(attn._heads(attn.q_proj(h[:, 8:]), attn.num_heads), torch.tensor([4]))
        k = apply_rope(raw_k[:, :, [0, 1, 6, 7, 8]], torch.arange(5))  # places 0..4 in the cache
        w = torch.softmax(q @ k.transpose(-2, -1) / 2.0, -1)  # (1, h, 1, 5); d_k = 4
        v = attn._heads(attn.v_proj(h), attn.num_kv_heads)[:, :, [0, 1, 6, 7, 8]]
        attended = attn.out_proj((w @ v).transpose(1, 2).reshape(1, 1, 16))
        ffn_in = x[:, 8:] + attended
    torch.testing.assert_close(out, ffn_in + block.feed_forward(block.norm2(ffn_in)))


@pytest.mark.parametrize("method, factor", [("pi", 2.0), ("ntk", 4.0), (None, 1.0)])
def test_rope_scaling_is_position_interpolation_or_a_larger_base(method, factor):
    m = modern(positions="rope").set_rope_scaling(method, factor)
    attn = m.blocks[0].self_attn
    x, pos = torch.randn(1, 4, 7, 4), torch.arange(7)
    if method == "pi":
        want = apply_rope(x, pos / factor)
    elif method == "ntk":
        want = apply_rope(x, pos, base=10000.0 * factor ** (4 / 2))  # d_k = 4: d/(d-2) = 2
    else:
        want = apply_rope(x, pos)
    torch.testing.assert_close(attn._rotate(x, pos), want)
    m.set_rope_scaling(None)
    assert attn.rope_scaling is None


def test_rope_scaling_bad_arguments():
    with pytest.raises(ValueError, match="needs positions='rope'"):
        modern().set_rope_scaling("pi", 2.0)
    with pytest.raises(ValueError, match="method must be one of"):
        modern(positions="rope").set_rope_scaling("yarn", 2.0)
    with pytest.raises(ValueError, match="factor must be a number >= 1"):
        modern(positions="rope").set_rope_scaling("ntk", 0.5)


@pytest.mark.parametrize("options", [dict(), dict(positions="rope", num_kv_heads=2),
                                     dict(norm="rms", activation="swiglu", bias=False, tie_weights=False)])
def test_forward_flops_is_what_pytorch_counts(options):
    m = modern(**options)
    ids = torch.randint(0, 11, (3, 13))
    with FlopCounterMode(display=False) as counter, torch.no_grad():
        m(ids, need_weights=True)  # the path of explicit matmuls (the CPU fused kernel is not counted)
    assert counter.get_total_flops() == 3 * forward_flops(m, 13)


def test_flops_per_token_is_2n_plus_attention_and_3x_to_train():
    m = modern()
    n = sum(p.numel() for name, p in m.named_parameters() if p.dim() == 2 and "embed" not in name) + 11 * 16
    assert flops_per_token(m, 1) == 2 * n + 2 * 2 * 2 * 1 * 16  # lm_head counted once (tied)
    assert flops_per_token(m, 10, training=True) == 3 * flops_per_token(m, 10)
    with FlopCounterMode(display=False) as counter, torch.no_grad():
        cache = m.new_cache()
        m(torch.zeros(1, 9, dtype=torch.long), cache=cache)
    with FlopCounterMode(display=False) as step, torch.no_grad():
        m(torch.zeros(1, 1, dtype=torch.long), cache=cache, need_weights=True)  # the 10th token
    assert step.get_total_flops() == flops_per_token(m, 10)
    assert counter.get_total_flops() > 0


def test_preallocated_cache_writes_in_place_and_equals_the_growing_cache():
    m = modern(positions="rope", num_kv_heads=2)
    ids = torch.randint(0, 11, (2, 12))
    with torch.no_grad():
        grow, pre = m.new_cache(), m.new_cache(capacity=12)
        a = [m(ids[:, :5], cache=grow)] + [m(ids[:, t:t + 1], cache=grow) for t in range(5, 12)]
        b = [m(ids[:, :5], cache=pre)]
        buffer = pre[0].k.untyped_storage().data_ptr()
        b += [m(ids[:, t:t + 1], cache=pre) for t in range(5, 12)]
    torch.testing.assert_close(torch.cat(b, 1), torch.cat(a, 1))
    assert pre[0].k.untyped_storage().data_ptr() == buffer and len(pre[0]) == 12
    with pytest.raises(ValueError, match="do not fit its capacity 12"):
        m(ids[:, :1], cache=pre)
    with pytest.raises(ValueError, match="capacity must be an int >= 1"):
        PreallocatedKVCache(0)


def test_suppressed_ids_are_never_generated():
    m = small()
    with torch.no_grad():
        m.lm_head.weight[3] *= 0
        m.lm_head.weight[3, 0] = 50.0  # token 3 would win almost everywhere
    prompt = torch.ones(200, 1, dtype=torch.long)
    free = m.generate(prompt, 5, temperature=1.0, generator=torch.Generator().manual_seed(0))
    banned = m.generate(prompt, 5, temperature=1.0, generator=torch.Generator().manual_seed(0), suppress=[3, 0])
    assert (free[:, 1:] == 3).any() and not ((banned[:, 1:] == 3) | (banned[:, 1:] == 0)).any()
    greedy = complete_greedy(m, [[1, 2], [4]], 4, suppress=[3])
    assert all(3 not in row for row in greedy)
    with pytest.raises(ValueError, match="outside the vocabulary"):
        m.generate(prompt, 2, suppress=[11])
    with pytest.raises(ValueError, match="bans every token"):
        m.generate(prompt, 2, suppress=range(11))


def test_sample_sentences_never_writes_pad_and_keeps_every_generated_word():
    torch.manual_seed(0)
    m = GPT(len(tl.VOCAB), d_model=16, num_heads=2, num_layers=1, d_ff=16, max_len=32).eval()
    with torch.no_grad():
        m.lm_head.weight[0] += 5 * m.lm_head.weight[1]  # make <pad> likely
    texts = sample_sentences(m, 50, temperature=2.0, seed=0, max_new_tokens=8)
    assert not any("<pad>" in t for t in texts)
    assert all(len(tl.tokenize(t)) <= 8 for t in texts)


def test_llama_shaped_flops_scale_like_6n_per_trained_token():
    m = llama_like()
    n = sum(p.numel() for p in m.parameters() if p.dim() == 2) - m.tok_embed.weight.numel()
    per_token = flops_per_token(m, 1, training=True)
    assert per_token == 6 * n + 3 * 2 * 2 * 2 * 16
    assert math.isclose(per_token / n, 6, rel_tol=0.05)
    assert isinstance(m.blocks[0].self_attn, ModernAttention)


@pytest.mark.parametrize("sink_positions", ["cache", "absolute"])
def test_both_sink_positions_stream_exactly_with_the_rolling_cache(sink_positions):
    m = modern(positions="rope", num_kv_heads=2).set_window(3, 2, sink_positions)
    ids = torch.randint(0, 11, (2, 30))
    with torch.no_grad():
        full = m(ids)
        cache = m.new_cache()
        steps = torch.cat([m(ids[:, :4], cache=cache)] + [m(ids[:, t:t + 1], cache=cache) for t in range(4, 30)], 1)
    torch.testing.assert_close(steps, full)
    other = modern(positions="rope", num_kv_heads=2).set_window(
        3, 2, "absolute" if sink_positions == "cache" else "cache")
    with torch.no_grad():
        torch.testing.assert_close(other(ids)[:, :5], full[:, :5])  # the same until the window leaves the sinks
        assert not torch.allclose(other(ids)[:, 5:], full[:, 5:])
    with pytest.raises(ValueError, match="sink_positions must be one of"):
        m.set_window(3, 1, "relative")


def test_suppress_given_as_a_string_is_refused_not_read_digit_by_digit():
    with pytest.raises(TypeError, match="suppress must be a sequence of token ids"):
        small().generate(torch.ones(1, 1, dtype=torch.long), 1, suppress="12")  # was: ids 1 and 2


def test_sample_sentences_refuses_a_model_of_another_vocabulary_and_a_bad_seed():
    for vocab in (10, 40):  # was: wrong words (10) or a bare IndexError (40)
        m = GPT(vocab, d_model=16, num_heads=2, num_layers=1, d_ff=16, max_len=32)
        with pytest.raises(ValueError, match=r"toy language's 27 tokens .* vocab_size=" + str(vocab)):
            sample_sentences(m, 2)
    m = GPT(len(tl.VOCAB), d_model=16, num_heads=2, num_layers=1, d_ff=16, max_len=32)
    for seed in (1.5, None, True):
        with pytest.raises(TypeError, match="seed must be an int"):
            sample_sentences(m, 2, seed=seed)


def test_flops_per_token_training_must_be_a_bool():
    with pytest.raises(TypeError, match="training must be True or False"):
        flops_per_token(small(), 3, training="yes")


@pytest.mark.parametrize("tie", [True, False])
def test_backward_pass_costs_twice_the_forward_as_pytorch_counts_it(tie):
    """Notebook 12, section 4: forward + backward = 3 x the forward, measured by FlopCounterMode."""
    from torch.utils.flop_counter import FlopCounterMode

    m, ids = small(tie), torch.randint(0, 11, (3, 9))
    with FlopCounterMode(display=False) as fwd:
        m(ids, need_weights=True)
    with FlopCounterMode(display=False) as both:
        m(ids, need_weights=True).logsumexp(-1).mean().backward()
    assert fwd.get_total_flops() == 3 * forward_flops(m, 9)  # 3 rows
    assert both.get_total_flops() == 3 * fwd.get_total_flops()
