"""greedy_decode and beam_search on the helpers Transformer."""

import pytest
import torch
from torch import nn

from helpers import Transformer, beam_search, greedy_decode, padding_mask

BOS, EOS, PAD = 1, 2, 0


def tiny(seed=0, **kw):
    torch.manual_seed(seed)
    return Transformer(12, 12, d_model=16, num_heads=2, num_layers=1, d_ff=32, dropout=0.0,
                       max_len=32, **kw).eval()


class Scripted(nn.Module):
    """A hand-made 'model' whose next-token distribution depends only on the last token, so the
    best sequence is known: log p is given by ``table[last token]``."""

    def __init__(self, table):
        super().__init__()
        self.table = torch.log(torch.tensor(table))
        self.w = nn.Parameter(torch.zeros(1))

    def encode(self, src, src_mask=None, need_weights=True):
        return torch.zeros(src.shape[0], src.shape[1], 4)

    def decode(self, tgt, memory, src_mask=None, tgt_mask=None, need_weights=True, cache=None):
        return self.table[tgt]  # (B, Lt, V): row for each position's token


# tokens: 0 pad, 1 bos, 2 eos, 3 'a', 4 'b'. From bos, 'a' (0.6) beats 'b' (0.4), but after 'a'
# the model is unsure (eos 0.5 / 'a' 0.5) while after 'b' it is sure (eos 1.0):
#   greedy: bos a eos = 0.6 * 0.5 = 0.30;  best: bos b eos = 0.4.
TABLE = [
    [0.2, 0.2, 0.2, 0.2, 0.2],
    [1e-9, 1e-9, 1e-9, 0.6, 0.4],
    [1e-9, 1e-9, 1.0, 1e-9, 1e-9],
    [1e-9, 1e-9, 0.5, 0.5 - 2e-9, 1e-9],
    [1e-9, 1e-9, 1.0 - 3e-9, 1e-9, 1e-9],
]


def test_greedy_on_a_hand_made_model_and_beam_finds_the_better_sequence():
    model = Scripted(TABLE)
    src = torch.zeros(1, 3, dtype=torch.long)
    assert greedy_decode(model, src, 6, BOS, EOS).tolist() == [[BOS, 3, EOS]]
    assert beam_search(model, src, 1, 6, BOS, EOS).tolist() == [[BOS, 3, EOS]]
    assert beam_search(model, src, 2, 6, BOS, EOS).tolist() == [[BOS, 4, EOS]]


def test_greedy_learns_a_copy_task():
    # A tiny model trained for a few seconds to copy 3 digits decodes them back exactly.
    torch.manual_seed(0)
    model = Transformer(8, 8, d_model=32, num_heads=2, num_layers=1, d_ff=64, dropout=0.0,
                        max_len=16, norm_first=True)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    for _ in range(200):
        src = torch.randint(3, 8, (64, 3))
        tgt = torch.cat([torch.full((64, 1), BOS), src, torch.full((64, 1), EOS)], 1)
        logits = model(src, tgt[:, :-1], None, torch.ones(4, 4, dtype=torch.bool).tril())
        loss = nn.functional.cross_entropy(logits.reshape(-1, 8), tgt[:, 1:].reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
    src = torch.tensor([[3, 4, 5], [7, 7, 3], [6, 5, 4]])
    out = greedy_decode(model, src, 6, BOS, EOS)
    assert out[:, 1:4].tolist() == src.tolist() and (out[:, 4] == EOS).all()


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_beam_size_one_equals_greedy(seed):
    model = tiny(seed)
    src = torch.randint(3, 12, (1, 7), generator=torch.Generator().manual_seed(seed))
    g = greedy_decode(model, src, 10, BOS, EOS)
    b = beam_search(model, src, 1, 10, BOS, EOS)
    assert g.tolist() == b.tolist()


def test_greedy_with_padding_and_cache_matches_one_by_one():
    model = tiny(3)
    src = torch.tensor([[5, 6, 7, 8], [9, 10, PAD, PAD]])
    mask = padding_mask(src, PAD)
    batched = greedy_decode(model, src, 9, BOS, EOS, src_mask=mask)
    cached = greedy_decode(model, src, 9, BOS, EOS, src_mask=mask, use_cache=True)
    assert batched.tolist() == cached.tolist()
    assert batched[:, 0].tolist() == [BOS, BOS] and batched.shape[1] <= 9
    alone = greedy_decode(model, src[1:, :2], 9, BOS, EOS)
    n = alone.shape[1]
    assert batched[1, :n].tolist() == alone[0].tolist()


def test_beam_search_output_is_at_least_as_likely_as_greedy():
    model = tiny(4)
    src = torch.randint(3, 12, (1, 6), generator=torch.Generator().manual_seed(4))

    def logp(seq):
        seq = seq[:, : (seq[0] == EOS).nonzero()[0, 0] + 1] if (seq[0] == EOS).any() else seq
        with torch.no_grad():
            logits = model(src, seq[:, :-1], None, torch.ones(seq.shape[1] - 1, seq.shape[1] - 1,
                                                               dtype=torch.bool).tril())
        return torch.log_softmax(logits, -1)[0].gather(-1, seq[0, 1:, None]).sum().item()

    g = greedy_decode(model, src, 8, BOS, EOS)
    b = beam_search(model, src, 4, 8, BOS, EOS)
    assert b[0, 0] == BOS
    assert logp(b) >= logp(g) - 1e-5


def test_decoders_reject_bad_input():
    model = tiny()
    with pytest.raises(ValueError, match=r"src must be token ids of shape \(B, Ls\), got \(5,\)"):
        greedy_decode(model, torch.arange(5), 4, BOS, EOS)
    with pytest.raises(ValueError, match="max_len must be >= 1, got 0"):
        greedy_decode(model, torch.ones(1, 3, dtype=torch.long), 0, BOS, EOS)
    with pytest.raises(ValueError, match=r"src must be \(1, Ls\), got \(2, 3\)"):
        beam_search(model, torch.ones(2, 3, dtype=torch.long), 2, 4, BOS, EOS)
    with pytest.raises(ValueError, match="beam_size must be >= 1, got 0"):
        beam_search(model, torch.ones(1, 3, dtype=torch.long), 0, 4, BOS, EOS)


def test_decoders_restore_training_mode():
    model = tiny().train()
    greedy_decode(model, torch.ones(1, 3, dtype=torch.long), 4, BOS, EOS)
    beam_search(model, torch.ones(1, 3, dtype=torch.long), 2, 4, BOS, EOS)
    assert model.training
