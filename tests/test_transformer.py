"""The helpers Transformer: shapes, masks, nn.Transformer equality (like with like), weight tying,
parameter count, greedy decoding and input errors."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from helpers import (
    Transformer,
    causal_mask,
    copy_attention_weights,
    greedy_decode,
    padding_mask,
    target_mask,
)
from helpers.exercises.nb09 import transformer_param_count

SV, TV, D, H, N, FF = 11, 13, 16, 4, 2, 32
SRC = torch.tensor([[5, 6, 7, 0, 0], [5, 6, 7, 8, 9]])  # (B, Ls), 0 = <pad>
TGT = torch.tensor([[1, 3, 4, 0], [1, 3, 4, 2]])  # (B, Lt)


def model(**kw):
    torch.manual_seed(0)
    args = dict(d_model=D, num_heads=H, num_layers=N, d_ff=FF, dropout=0.0, max_len=32)
    return Transformer(SV, TV, **{**args, **kw}).eval()


def test_forward_shape_and_encode_decode():
    m = model()
    src_mask, tgt_mask = padding_mask(SRC, 0), target_mask(TGT, 0)
    logits = m(SRC, TGT, src_mask, tgt_mask)
    assert logits.shape == (2, 4, TV)
    memory = m.encode(SRC, src_mask)
    assert memory.shape == (2, 5, D)
    torch.testing.assert_close(m.decode(TGT, memory, src_mask, tgt_mask), logits)


def test_embeddings_are_scaled_and_positions_added():
    m = model()
    x = m.src_embed(SRC) * D**0.5 + m.pos.pe[:5]
    torch.testing.assert_close(m.encode(SRC), m.encoder(x))


def load_into_torch(m, ref):
    for mine, theirs in zip(m.encoder.layers, ref.encoder.layers, strict=True):
        copy_attention_weights(mine.self_attn, theirs.self_attn)
    for mine, theirs in zip(m.decoder.layers, ref.decoder.layers, strict=True):
        copy_attention_weights(mine.self_attn, theirs.self_attn)
        copy_attention_weights(mine.cross_attn, theirs.multihead_attn)
    for mine, theirs in zip([*m.encoder.layers, *m.decoder.layers],
                            [*ref.encoder.layers, *ref.decoder.layers], strict=True):
        theirs.linear1.load_state_dict(mine.feed_forward.linear1.state_dict())
        theirs.linear2.load_state_dict(mine.feed_forward.linear2.state_dict())
        for name in ("norm1", "norm2", "norm3"):
            if hasattr(mine, name):
                getattr(theirs, name).load_state_dict(getattr(mine, name).state_dict())


@pytest.mark.filterwarnings("ignore:enable_nested_tensor is True")
@pytest.mark.parametrize("norm_first", [False, True])
def test_equals_nn_transformer_like_with_like(norm_first):
    m = model(norm_first=norm_first)
    ref = nn.Transformer(D, H, N, N, FF, 0.0, batch_first=True, norm_first=norm_first).eval()
    load_into_torch(m, ref)
    if norm_first:  # both have a final LayerNorm after each stack
        ref.encoder.norm.load_state_dict(m.encoder.norm.state_dict())
        ref.decoder.norm.load_state_dict(m.decoder.norm.state_dict())
    else:  # nn.Transformer always adds final norms; the post-LN paper model has none
        ref.encoder.norm = nn.Identity()
        ref.decoder.norm = nn.Identity()
    src_mask, tgt_mask = padding_mask(SRC, 0), causal_mask(4)
    src_x = m.pos(m.src_embed(SRC) * D**0.5)
    tgt_x = m.pos(m.tgt_embed(TGT) * D**0.5)
    h = ref(src_x, tgt_x, tgt_mask=~tgt_mask, src_key_padding_mask=SRC == 0,
            memory_key_padding_mask=SRC == 0)
    torch.testing.assert_close(m(SRC, TGT, src_mask, tgt_mask), m.out_proj(h))


def test_nn_transformer_final_norms_make_a_difference():
    m = model()
    ref = nn.Transformer(D, H, N, N, FF, 0.0, batch_first=True).eval()
    load_into_torch(m, ref)
    n_ref = sum(p.numel() for p in ref.parameters())
    n_ours = sum(p.numel() for p in [*m.encoder.parameters(), *m.decoder.parameters()])
    assert n_ref - n_ours == 2 * 2 * D  # two extra LayerNorms of 2 * d_model parameters
    with torch.no_grad():  # fresh (gain 1, shift 0) they almost repeat the last norm; trained, not
        ref.decoder.norm.weight.uniform_(0.5, 1.5)
    src_x, tgt_x = m.pos(m.src_embed(SRC) * D**0.5), m.pos(m.tgt_embed(TGT) * D**0.5)
    h = ref(src_x, tgt_x, tgt_mask=~causal_mask(4))
    assert not torch.allclose(m(SRC, TGT, None, causal_mask(4)), m.out_proj(h), atol=1e-2)


def test_weight_tying_shares_one_tensor():
    m = model(tie_weights=True)
    assert m.out_proj.weight is m.tgt_embed.weight
    untied = model()
    n_tied = sum(p.numel() for p in m.parameters())
    n_untied = sum(p.numel() for p in untied.parameters())
    assert n_untied - n_tied == TV * D
    m.train()
    m(SRC, TGT, None, causal_mask(4)).sum().backward()
    assert m.tgt_embed.weight.grad is m.out_proj.weight.grad


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("tie", [False, True])
def test_parameter_count_formula(norm_first, tie):
    m = model(norm_first=norm_first, tie_weights=tie)
    got = sum(p.numel() for p in m.parameters())
    assert got == transformer_param_count(SV, TV, D, N, FF, norm_first, tie)


def test_decoder_is_causal_end_to_end():
    m = model()
    a = m(SRC, TGT, None, causal_mask(4))
    changed = TGT.clone()
    changed[:, 3] = 7
    b = m(SRC, changed, None, causal_mask(4))
    torch.testing.assert_close(a[:, :3], b[:, :3])
    assert not torch.allclose(a[:, 3], b[:, 3])


def test_greedy_decode_matches_a_hand_written_loop():
    m = model()
    src_mask = padding_mask(SRC, 0)
    out = greedy_decode(m, SRC, max_len=6, bos_id=1, eos_id=2, src_mask=src_mask)
    ys = torch.ones(2, 1, dtype=torch.long)
    with torch.no_grad():
        memory = m.encode(SRC, src_mask)
        for _ in range(5):
            logits = m.decode(ys, memory, src_mask, causal_mask(ys.shape[1]))
            ys = torch.cat([ys, logits[:, -1].argmax(-1, keepdim=True)], dim=1)
    n = out.shape[1]
    assert out[:, 0].tolist() == [1, 1] and 2 <= n <= 6
    for row in range(2):  # identical up to and including the first eos; eos after that
        seq = ys[row, :n].tolist()
        if 2 in seq:
            k = seq.index(2)
            assert out[row, : k + 1].tolist() == seq[: k + 1] and set(out[row, k:].tolist()) == {2}
        else:
            assert out[row].tolist() == seq
    cached = greedy_decode(m, SRC, max_len=6, bos_id=1, eos_id=2, src_mask=src_mask, use_cache=True)
    assert torch.equal(cached, out)


def test_input_errors():
    m = model()
    with pytest.raises(ValueError, match=r"src must be token ids of shape \(B, L\), got \(5,\)"):
        m.encode(SRC[0])
    with pytest.raises(TypeError, match=r"src must hold integer token ids \(torch.long\), got torch.float32"):
        m.encode(SRC.float())
    with pytest.raises(ValueError, match=r"tgt holds ids in 1\.\.13, but the vocabulary has 13 tokens"):
        m(SRC, torch.tensor([[1, 13]]).expand(2, 2))
    with pytest.raises(ValueError, match=r"longer than max_len=32"):
        m.encode(torch.ones(1, 40, dtype=torch.long))
    with pytest.raises(ValueError, match=r"d_model=10 is not divisible by num_heads=4"):
        Transformer(SV, TV, d_model=10, num_heads=4)
