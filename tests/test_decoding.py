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


class PrefixTable(nn.Module):
    """A hand-made 'model' whose next-token distribution is looked up by the whole output so far
    (``table[prefix]``, prefixes without bos; a prefix not in the table is followed by eos)."""

    def __init__(self, table, vocab=8):
        super().__init__()
        self.table, self.vocab = table, vocab
        self.w = nn.Parameter(torch.zeros(1))

    def encode(self, src, src_mask=None, need_weights=True):
        return torch.zeros(src.shape[0], src.shape[1], 4)

    def decode(self, tgt, memory, src_mask=None, tgt_mask=None, need_weights=True, cache=None):
        logits = torch.full((tgt.shape[0], tgt.shape[1], self.vocab), -1e9)  # (B, Lt, V)
        for b, row in enumerate(tgt.tolist()):
            for t in range(len(row)):
                for token, p in self.table.get(tuple(row[1 : t + 1]), {EOS: 1.0}).items():
                    logits[b, t, token] = float(torch.tensor(p).log())
        return logits

    def log_p(self, seq):
        """Total log-probability of a decoded sequence (bos first, up to and with its eos)."""
        seq = seq[0].tolist()
        return sum(float(torch.tensor(self.table.get(tuple(seq[1:t]), {EOS: 1.0})[seq[t]]).log())
                   for t in range(1, len(seq)))


# From bos, token 3 (0.40) beats 4 (0.35). After 3 the model is unsure (3: 0.35, 6: 0.33, 7: 0.32)
# and then sure of eos; after 4 it splits evenly between 6 and 7, each then ending with eos (0.6).
# Greedy: bos 3 3 eos = 0.40 * 0.35 * 1.0 = 0.14. Beam 2 keeps (3) and (4) after step 1, but at
# step 2 both children of 4 (0.35 * 0.5 = 0.175) beat every child of 3 (at most 0.14): greedy's
# prefix falls out of the beam, which ends with bos 4 6 eos or bos 4 7 eos = 0.105 < 0.14.
BEAM_TRAP = {(): {3: 0.40, 4: 0.35, 5: 0.25},
             (3,): {3: 0.35, 6: 0.33, 7: 0.32},
             (4,): {6: 0.5, 7: 0.5},
             (4, 6): {EOS: 0.6, 3: 0.4}, (4, 7): {EOS: 0.6, 3: 0.4}}


def test_beam_search_is_a_heuristic_that_can_lose_to_greedy():
    """Beam search usually finds a likelier sequence than greedy decoding, but not always: here
    greedy's prefix falls out of a beam of 2, and the beam's answer is less likely than greedy's.
    (A beam of 3 happens to find an even likelier one: wider is not monotonically better either.)"""
    model = PrefixTable(BEAM_TRAP)
    src = torch.zeros(1, 2, dtype=torch.long)
    greedy = greedy_decode(model, src, 6, BOS, EOS)
    beam2 = beam_search(model, src, 2, 6, BOS, EOS)
    assert greedy.tolist() == [[BOS, 3, 3, EOS]]
    assert beam2[0, 1].item() == 4 and beam2[0, -1].item() == EOS
    assert round(model.log_p(greedy), 2) == -1.97 and round(model.log_p(beam2), 2) == -2.25
    assert model.log_p(beam2) < model.log_p(greedy)
    beam3 = beam_search(model, src, 3, 6, BOS, EOS)
    assert model.log_p(beam3) > model.log_p(greedy)  # [bos, 5, eos]: 0.25


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
