"""Notebook 08's conclusions, re-checked where they could break.

Section 7 trains a one-layer encoder-decoder for 300 steps to reverse strings of 6 distinct letters
and claims, in every run tried (ten seeds): the loss falls from above 2 to below 0.05, at least 95 %
of the next letters are right on strings never trained on, and at least 80 % of the cross-attention
peaks (mean of heads) fall on the anti-diagonal; with strings of 7 letters, the first two and "the
most common peak at every output position is the mirrored one", with the share below 80 % in one
of the ten seeds. The refuting control of
"the anti-diagonal is the algorithm": the same model trained to copy puts its peaks on the diagonal
and not on the anti-diagonal (and exercise 4's rotation puts them on a shifted diagonal). Section 6
claims that untrained, averaged over the heads, no source token gets half of a row's weight.

The seed-0 reversal run is the notebook's own (same call through ``helpers.cache.train_once``),
so it is loaded, not trained again, once the notebook has run.

The intervention (section 7, after the map): the last cross-attention's weights overwritten, on the
letter rows, with one-hot rows on the mirrored position (the model still writes >= 99 % of the
letters right), one-hot rows shifted by one (<= 5 % right, and >= 95 % of the time it writes the
letter it was made to read) and uniform rows (15-35 % right; at output positions 0-4 at least 95 %
of the letters written are letters of the source string: a second read measured 99-100 % there at
seeds 0-2, and 0.58 / 0.16 / 0.82 at the last position, which the prose leaves out). Written from
seeds 0-4, checked unchanged on held-out seeds 5-9. Strings of 7 letters, seeds 0-9: the model
reverses and the most common peak at each output position is the mirrored one in every seed, but
the share of peaks on the anti-diagonal fell to 0.6307 at seed 9 (a reader's check of the old claim
"at least 80 % ... in every run we tried (other seeds, strings of 7 letters)", which had been tested
at 7 letters only at seeds 0, 1, 2, 5): the notebook now claims the share at 6 letters only. The
modal-peak statement was written after seeing seed 9.

The shifted-by-one "<= 5 % right" follows from ">= 95 % copies the neighbour" (the letters are
distinct, so the neighbour's letter is never the right one): the notebook claims only the second,
the test below keeps both. The anti-diagonal is claimed as the algorithm of the 6-letter model only:
a sixth read found that at 10 letters and 1,000 steps (the settings prose's suggestion, with the
notebook's 300 * 64 strings) the model reverses while forcing the anti-diagonal leaves few letters
right at some seeds; the two 10-letter tests below hold what the prose now says, at seeds 0-9.
"""

from __future__ import annotations

import math
import random

import pytest
import torch
from seed_sets import ALL_SEEDS, HELD_OUT_SEEDS, WRITTEN_SEEDS, seed_id

from helpers import Decoder, Encoder, PositionalEncoding, Transformer, seed_everything
from helpers.attention import padding_mask, target_mask
from helpers.cache import train_once
from helpers.data import CharTokenizer
from helpers.exercises.nb08 import rotation_alignment
from helpers.training import train_seq2seq

LETTERS = "abcdefghij"
TASKS = {"reverse": lambda s: s[::-1], "copy": lambda s: s, "rotate": lambda s: s[2:] + s[:2]}


def reads(task: str, ls: int) -> torch.Tensor:
    """The source position output position t copies, for t < ls."""
    t = torch.arange(ls)
    return {"reverse": ls - 1 - t, "copy": t, "rotate": (t + 2) % ls}[task]


def train_and_measure(task: str, seed: int, ls: int = 6, steps: int = 300) -> dict:
    """Section 7's recipe for ``task``; accuracy and the shares of peaks on the task's alignment and
    on the anti-diagonal, over 200 strings never trained on. The strings are drawn as the notebook
    draws them, 300 * 64 whatever ``steps`` is: a learner who sets ``steps=1000`` in the training
    cell keeps those strings."""
    f = TASKS[task]
    rng = random.Random(0)
    strings = ["".join(rng.sample(LETTERS, ls)) for _ in range(300 * 64)]
    pairs = [(s, f(s)) for s in strings]
    tok = CharTokenizer(LETTERS)
    seed_everything(seed)
    model = Transformer(len(tok), len(tok), d_model=32, num_heads=2, num_layers=1, d_ff=64, dropout=0.0,
                        max_len=16)
    history = train_once(train_seq2seq, model, pairs, tok, steps=steps, batch_size=64, peak_lr=3e-3,
                         warmup_steps=30, smoothing=0.0, log_every=50)
    seen, test = set(strings), []
    while len(test) < 200:
        s = "".join(rng.sample(LETTERS, ls))
        if s not in seen and s not in test:
            test.append(s)
    src = torch.tensor([tok.encode(s) for s in test])
    tgt = torch.tensor([tok.encode(f(s), add_bos=True, add_eos=True) for s in test])
    dec_in = tgt[:, :-1]
    with torch.no_grad():
        logits = model(src, dec_in, padding_mask(src, 0), target_mask(dec_in, 0))
    peaks = model.decoder.layers[-1].cross_attn.attn_weights.mean(1)[:, :ls].argmax(-1)  # (200, ls)
    return {"loss": history["loss"],
            "accuracy": (logits.argmax(-1) == tgt[:, 1:]).float().mean().item(),
            "share": (peaks == reads(task, ls)).float().mean().item(),
            "anti_diagonal": (peaks == reads("reverse", ls)).float().mean().item(),
            "model": model, "src": src, "tgt": tgt}


def written_with(r: dict, pattern: torch.Tensor, ls: int = 6) -> torch.Tensor:
    """The notebook's intervention: the last cross-attention's letter rows recomputed as A V W_o
    with ``pattern`` (ls, ls) as every head's weights A; the letters the model then writes."""
    model, src, tgt = r["model"], r["src"], r["tgt"]

    def hook(module, args, out):
        v = module.split_heads(module.w_v(args[2]))
        return torch.cat([module.w_o(module.merge_heads(pattern @ v)), out[:, ls:]], dim=1)

    handle = model.decoder.layers[-1].cross_attn.register_forward_hook(hook)
    with torch.no_grad():
        logits = model(src, tgt[:, :-1], padding_mask(src, 0), target_mask(tgt[:, :-1], 0))
    handle.remove()
    return logits[:, :ls].argmax(-1)


@pytest.mark.parametrize(("seed", "ls"), [*((s, 6) for s in range(10)), *((s, 7) for s in range(10))])
def test_the_reversal_is_learned_by_reading_the_mirrored_position(seed, ls):
    """At 6 letters the notebook's two claims (>= 95 % right, >= 80 % of the peaks on the
    anti-diagonal) in all ten seeds. At 7 letters the model reverses in all ten seeds and the most
    common peak at every output position is the mirrored one, but the share is claimed only at 6
    letters: 7 letters, seed 9 gave 0.6307 (per position 0.54-0.75)."""
    r = train_and_measure("reverse", seed, ls)
    assert r["loss"][0] > 2.0 and r["loss"][-1] < 0.05, r["loss"]
    assert r["accuracy"] >= 0.95, r
    peaks = r["model"].decoder.layers[-1].cross_attn.attn_weights.mean(1)[:, :ls].argmax(-1)  # (200, ls)
    assert peaks.mode(0).values.tolist() == reads("reverse", ls).tolist(), peaks.mode(0).values
    if ls == 6:
        assert r["share"] >= 0.8, r


def test_at_7_letters_the_share_on_the_anti_diagonal_fell_below_80_percent_in_one_of_ten_seeds():
    """What the notebook says about strings of 7 letters (measured 0.9557, 0.9200, 0.9821, 0.9536,
    0.9729, 0.9436, 0.9664, 1.0000, 0.8971, 0.6307 at seeds 0-9)."""
    shares = [train_and_measure("reverse", seed, 7)["share"] for seed in range(10)]
    assert sum(s < 0.8 for s in shares) == 1, shares


@pytest.mark.parametrize("seed", range(10))
def test_intervention_the_model_writes_what_cross_attention_points_at(seed):
    """Thresholds written from seeds 0-4 (mirrored 1.000, shifted 0.000 right, uniform 0.225-0.260),
    checked unchanged on held-out seeds 5-9."""
    r, ls = train_and_measure("reverse", seed), 6
    t = torch.arange(ls)
    right, neighbour = r["tgt"][:, 1 : ls + 1], r["src"][:, (ls - t) % ls]
    mirrored = written_with(r, torch.nn.functional.one_hot(ls - 1 - t, ls).float())
    shifted = written_with(r, torch.nn.functional.one_hot((ls - t) % ls, ls).float())
    uniform = written_with(r, torch.full((ls, ls), 1 / ls))
    assert (mirrored == right).float().mean() >= 0.99
    assert (shifted == right).float().mean() <= 0.05
    assert (shifted == neighbour).float().mean() >= 0.95
    assert 0.15 <= (uniform == right).float().mean() <= 0.35
    in_source = (uniform[:, :, None] == r["src"][:, None, :]).any(-1).float().mean(0)  # (ls,)
    assert in_source[: ls - 1].min() >= 0.95, f"seed {seed}: uniform rows write source letters {in_source.tolist()}"


def test_control_a_model_trained_to_copy_reads_the_diagonal_not_the_anti_diagonal():
    r = train_and_measure("copy", 0)
    assert r["accuracy"] >= 0.95 and r["share"] >= 0.8, r
    assert r["anti_diagonal"] < 0.05, r


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_exercise_4_the_rotation_model_reads_the_shifted_diagonal(seed):
    r = train_and_measure("rotate", seed)
    assert r["accuracy"] >= 0.95 and r["share"] >= 0.8, r
    if seed == 0:  # the checker's own run gives the same answer
        assert rotation_alignment()[0] == reads("rotate", 6).tolist()


def test_untrained_cross_attention_averaged_over_heads_stays_below_half():
    """Section 6's set-up (d_model 16, 4 heads, 2 layers), embeddings and decoder from 10 seeds each
    (0-4 written, 5-9 held out; a second read measured at most 0.358 over the 10 x 10)."""
    src = torch.tensor([[1, 2, 3, 4, 5], [1, 6, 4, 5, 0]])
    tgt = torch.tensor([[1, 2, 3, 4], [1, 2, 6, 5]])
    largest = []
    for s0 in range(10):
        seed_everything(s0)
        src_embed, tgt_embed = torch.nn.Embedding(7, 16), torch.nn.Embedding(7, 16)
        pos, encoder = PositionalEncoding(16, max_len=32), Encoder(2, 16, 4, 32).eval()
        with torch.no_grad():
            memory = encoder(pos(src_embed(src) * math.sqrt(16)), padding_mask(src, 0))
            y = pos(tgt_embed(tgt) * math.sqrt(16))
        for s1 in range(10):
            seed_everything(s1)
            dec = Decoder(2, 16, 4, 32, dropout=0.0).eval()
            with torch.no_grad():
                dec(y, memory, target_mask(tgt, 0), padding_mask(src, 0))
            largest += [layer.cross_attn.attn_weights[0].mean(0).max().item() for layer in dec.layers]
    assert max(largest) < 0.5, max(largest)


@pytest.mark.parametrize("seed", range(10))
def test_an_untrained_reversal_model_pays_more_than_a_uniform_guess(seed):
    """Section 7: "a uniform guess costs ln 13; an untrained model ... pays more, in every seed we
    tried" (the loss on the first 64 training pairs before any step). Written from seeds 0-4
    (3.19-3.63 measured by the reader, unpinned), held out 5-9."""
    from helpers.training import collate, label_smoothed_cross_entropy

    rng = random.Random(0)
    strings = ["".join(rng.sample(LETTERS, 6)) for _ in range(64)]
    tok = CharTokenizer(LETTERS)
    seed_everything(seed)
    model = Transformer(len(tok), len(tok), d_model=32, num_heads=2, num_layers=1, d_ff=64, dropout=0.0,
                        max_len=16)
    b = collate([(s, s[::-1]) for s in strings], tok)
    with torch.no_grad():
        loss = label_smoothed_cross_entropy(model(b.src, b.tgt_in, b.src_mask, b.tgt_mask), b.tgt_out, 0, 0.0)
    assert loss.item() > math.log(len(tok)), f"seed {seed}: {loss.item():.4f}"


@pytest.mark.parametrize("seed", (0, 1, 2))
def test_longer_strings_8_letters_in_300_steps_10_letters_not(seed):
    """The settings cell's prose on Ls (a fifth read: at Ls = 10 the model did not learn in 300 steps).
    Measured (pinned), seeds 0-2: 8 letters, 300 steps: last loss 0.0033-0.0101, all letters right;
    9 letters, 300 steps: last loss 0.0110-0.1608 (not claimed); 10 letters, 300 steps: 0.7482,
    0.8345, 0.7677 right."""
    eight = train_and_measure("reverse", seed, 8)
    assert eight["loss"][-1] < 0.05 and eight["accuracy"] >= 0.95, eight
    short = train_and_measure("reverse", seed, 10)
    assert 0.74 <= short["accuracy"] < 0.85, short["accuracy"]


def ten_letters_1000_steps(seed: int) -> tuple[float, float]:
    """The learner's run of the settings prose: Ls = 10, ``steps=1000`` in the training cell (the
    notebook's 300 * 64 strings); next-letter accuracy, and the share of letters right when the
    last cross-attention is forced onto the anti-diagonal (the notebook's intervention)."""
    r, t = train_and_measure("reverse", seed, 10, steps=1000), torch.arange(10)
    mirrored = written_with(r, torch.nn.functional.one_hot(9 - t, 10).float(), ls=10)
    return r["accuracy"], (mirrored == r["tgt"][:, 1:11]).float().mean().item()


@pytest.mark.parametrize("seed", ALL_SEEDS, ids=seed_id)
def test_10_letters_after_1000_steps_more_than_98_percent_right(seed):
    """Cell 29: "after 1,000 steps more than 98 %". Written from seeds 0-4 as "more than 99 %" (all
    1.0000); held-out seed 6 gave 0.9886 (5, 9: 0.9973, 0.9959), so the prose was re-scoped to 98 %
    and what it says about 10 letters is now the measurement of seeds 0-9, not a threshold."""
    accuracy, _ = ten_letters_1000_steps(seed)
    assert accuracy > 0.98, accuracy


def test_10_letters_after_1000_steps_forcing_the_anti_diagonal_keeps_all_letters_at_one_seed_few_at_others():
    """Cells 29 and 48: at 10 letters and 1,000 steps the model reverses, and whether it does so
    through the anti-diagonal depends on the seed. A sixth read measured (notebook recipe) letters
    right with the anti-diagonal forced, seeds 0-9: 0.8505, 0.1550, 0.4005, 0.9025, 0.8925 |
    0.0000, 0.0455, 1.0000, 0.9090, 0.0415 (share of head-mean peaks on the anti-diagonal 0.4835,
    0.0860, 0.2285, 0.2890, 0.9450 | 0.0985, 0.1015, 0.9345, 0.7630, 0.1025: not a measure of it at
    this length, seed 4 puts 94.5 % of its peaks there and still loses 11 % of the letters).
    Written from seeds 0-4: "in some seeds the model gets more than 99 % right while forcing the
    anti-diagonal leaves fewer than half": held on held-out seeds 5 and 9. Written from seeds 0-4
    and failed on held-out seed 7: "forcing the anti-diagonal loses letters at every seed" (seed 7
    keeps all): so the prose names the seeds."""
    runs = {seed: ten_letters_1000_steps(seed) for seed in ALL_SEEDS}
    for seeds in (WRITTEN_SEEDS, HELD_OUT_SEEDS):
        assert any(acc > 0.99 and forced < 0.5 for acc, forced in (runs[s] for s in seeds)), runs
    assert [s for s in ALL_SEEDS if runs[s][1] < 0.5] == [1, 2, 5, 6, 9], runs
    assert [s for s in ALL_SEEDS if runs[s][1] == 1.0] == [7], runs
