"""helpers.GPT: shapes, causality, weight tying, KV-cache generation, training, errors."""

import pytest
import torch

from helpers import GPT, EncoderLayer, causal_mask, count_parameters
from helpers import toy_language as tl
from helpers.gpt import GPTBlock, complete_greedy, train_lm


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
