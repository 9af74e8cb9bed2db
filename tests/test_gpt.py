"""helpers.GPT: shapes, causality, weight tying, KV-cache generation, training, errors."""

import pytest
import torch

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
