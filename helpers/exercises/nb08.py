"""Checkers for the exercises of notebook 08 (the decoder and cross-attention)."""

from __future__ import annotations

import torch

from ._common import NotAttempted, call, checker

__all__ = ["MOVES", "ROTATION_SHIFT", "WRONG_TRIES", "check_cross_attention_zeros", "check_most_attended", "check_moves",
           "check_rotation_alignment", "moved_positions", "rotation_alignment"]


# Exercises 1 and 4 ask for predictions: a first wrong answer gets a hint, from the second on the
# measured answer as well (``WRONG_TRIES`` counts them in this session).
WRONG_TRIES = {"moves": 0, "rotation_alignment": 0}


def _wrong_try(exercise: str) -> bool:
    """Count a wrong answer; True for the first one (a hint only, not yet the answer)."""
    WRONG_TRIES[exercise] += 1
    return WRONG_TRIES[exercise] == 1


# Exercise 1: three changes to the running example; which decoder outputs move?
MOVES = {
    "a": "the source token at position 2 of sentence 1 ('black') becomes another word",
    "b": "the <pad> at source position 4 of sentence 2 becomes another word (the padding mask "
         "still marks it as padding)",
    "c": "the target token at position 1 of sentence 1 ('le') becomes another word",
}
_MOVE_HINTS = {  # the first wrong try: where to look, not the result
    "a": "which mask, if any, limits the source positions a target position's cross-attention may "
         "read? And what has the encoder done to the source tokens before the decoder reads them?",
    "b": "which attentions, in the encoder and in the decoder, may read source position 4 of "
         "sentence 2 under that padding mask?",
    "c": "which mask decides which target positions a target position may read, and which of them "
         "can see position 1?",
}
_MOVE_WHY = {  # the second wrong try, with the measured answer
    "a": "cross-attention has no causal mask: every target position reads every source position "
         "(and the encoder has already mixed the source tokens)",
    "b": "the padding mask hides that position from every attention, in the encoder and in "
         "cross-attention; nothing else reads it",
    "c": "the causal mask lets position t read the target positions up to t: the positions from "
         "1 on see the change, position 0 does not",
}


def moved_positions() -> dict[str, list[int]]:
    """Run the three changes of ``MOVES`` through an encoder-decoder of the running example's
    sizes and return, for each, the target positions of the changed sentence whose output moves."""
    from ..attention import padding_mask, target_mask
    from ..transformer import Transformer

    src = torch.tensor([[1, 2, 3, 4, 5], [1, 6, 4, 5, 0]])  # (B, Ls), 0 = <pad>
    tgt = torch.tensor([[1, 2, 3, 4], [1, 2, 6, 5]])  # (B, Lt)
    with torch.random.fork_rng(devices=[]):  # leaves the learner's random state alone
        torch.manual_seed(8)
        model = Transformer(7, 7, d_model=16, num_heads=4, num_layers=2, d_ff=32, dropout=0.0).eval()
    src_mask = padding_mask(src, 0)  # the original padding, kept for every run

    def run(s, t):
        with torch.no_grad():
            return model(s, t, src_mask, target_mask(t, 0))  # (B, Lt, |V_t|)

    base = run(src, tgt)
    changed = {"a": (0, src.clone(), tgt), "b": (1, src.clone(), tgt), "c": (0, src, tgt.clone())}
    changed["a"][1][0, 2] = 6
    changed["b"][1][1, 4] = 3
    changed["c"][2][0, 1] = 6
    moved = {}
    for key, (b, s, t) in changed.items():
        diff = (run(s, t) - base)[b].abs().amax(-1)  # (Lt,)
        moved[key] = [i for i, m in enumerate(diff.tolist()) if m > 1e-6]
    return moved


@checker("Exercise 1 (which outputs move?)")
def check_moves(answers):
    """``answers``: {"a": [...], "b": [...], "c": [...]}, for each change of ``MOVES`` the list of
    target positions (0..3) of the changed sentence whose decoder output changes."""
    if not isinstance(answers, dict):
        raise AssertionError(f'give a dict {{"a": [positions], "b": [...], "c": [...]}}, got '
                             f"{type(answers).__name__}")
    if any(answers.get(k) is None or answers.get(k) is Ellipsis for k in MOVES):
        raise NotAttempted
    given = {}
    for key in MOVES:
        value = answers[key]
        try:
            given[key] = sorted({int(i) for i in value})
        except (TypeError, ValueError):
            raise AssertionError(f"({key}): give a list of target positions such as [0, 2] (or [] "
                                 f"for none), got {value!r}") from None
        if any(not 0 <= i <= 3 for i in given[key]):
            raise AssertionError(f"({key}): the target positions are 0..3, got {value!r}")
    measured = moved_positions()
    wrong = [k for k in MOVES if given[k] != measured[k]]
    if wrong:
        if _wrong_try("moves"):
            raise AssertionError(f"{len(wrong)} of 3 predictions are wrong:\n" + "\n".join(
                f"({k}) {MOVES[k]}: you said {given[k]}; hint: {_MOVE_HINTS[k]}" for k in wrong)
                + "\nTry again; a second wrong answer shows the outputs that moved.")
        raise AssertionError(f"{len(wrong)} of 3 predictions are wrong:\n" + "\n".join(
            f"({k}) {MOVES[k]}: you said {given[k]}, the outputs that moved are {measured[k]}; "
            f"{_MOVE_WHY[k]}" for k in wrong))


@checker("Exercise 2 (which source token does each target token read?)")
def check_most_attended(fn):
    """``fn(weights, src_tokens)``: weights (num_heads, Lt, Ls) -> list of Lt source tokens, the
    one with the largest head-averaged weight for each target position."""
    gen = torch.Generator().manual_seed(1)  # a case where the mean, the max and each head disagree
    weights = torch.softmax(3.0 * torch.randn(2, 4, 5, generator=gen), dim=-1)  # (h, Lt, Ls)
    src = ["le", "chat", "noir", "dort", "<eos>"]
    got = call(fn, weights, src)
    assert isinstance(got, list | tuple), f"return a list of tokens, got {type(got).__name__}"
    got = list(got)
    mean = weights.mean(0)  # (Lt, Ls)
    want = [src[j] for j in mean.argmax(-1).tolist()]
    if got == mean.argmax(-1).tolist():
        raise AssertionError(f"you returned the source positions {got}; return the tokens at those "
                             f"positions (src_tokens[j]), not their indices")
    wrong_axis = [src[j] for j in mean.argmax(0).tolist()]
    if got == wrong_axis:
        raise AssertionError(f"expected {len(want)} tokens (one per target position), got {len(got)}: "
                             "rows are target positions (Lt), columns source positions (Ls); which "
                             "dimension should the argmax run along?")
    assert len(got) == len(want), f"one token per target position: expected {len(want)}, got {len(got)}"
    for h in range(weights.shape[0]):
        one_head = [src[j] for j in weights[h].argmax(-1).tolist()]
        if got == one_head:
            raise AssertionError(f"your tokens {got} are those of head {h} alone; the exercise "
                                 "combines all heads")
    largest = [src[j] for j in weights.amax(0).argmax(-1).tolist()]
    if got == largest:
        raise AssertionError(f"your tokens {got} follow the largest weight of any head; the exercise "
                             "asks for the head-averaged weight")
    wrong = [t for t, (g, w) in enumerate(zip(got, want, strict=True)) if g != w]
    assert not wrong, f"wrong token at target position(s) {wrong}; you gave {got}"


@checker("Exercise 3 (which cross-attention weights are exactly zero?)")
def check_cross_attention_zeros(fn):
    """``fn(src, tgt, pad_id)``: source ids (B, Ls) and decoder-input ids (B, Lt) -> a boolean
    (B, Lt, Ls) tensor, True exactly where a decoder's cross-attention weight is 0 (for every head
    and layer). Verified by running a decoder."""
    from ..attention import padding_mask, target_mask
    from ..layers import Decoder

    src = torch.tensor([[5, 6, 7, 8, 9], [5, 6, 7, 0, 0]])  # (B, Ls) = (2, 5), 0 = <pad>
    tgt = torch.tensor([[1, 3, 4, 5], [1, 3, 0, 0]])  # (B, Lt) = (2, 4), padded target too
    got = call(fn, src, tgt, 0)
    assert isinstance(got, torch.Tensor) and got.dtype == torch.bool, (
        f"return a boolean tensor, got {getattr(got, 'dtype', type(got).__name__)}")
    assert got.shape == (2, 4, 5), (f"expected shape (B, Lt, Ls) = (2, 4, 5), one flag per target "
                                    f"position and source position, got {tuple(got.shape)}")
    torch.manual_seed(0)
    dec = Decoder(2, 8, 2, 16).eval()
    y, memory = torch.randn(2, 4, 8), torch.randn(2, 5, 8)  # (B, Lt, d_model), (B, Ls, d_model)
    with torch.no_grad():
        dec(y, memory, target_mask(tgt, 0), padding_mask(src, 0))
    zero = torch.stack([layer.cross_attn.attn_weights == 0 for layer in dec.layers])  # (N, B, h, Lt, Ls)
    want = zero.all(0).all(1)  # (B, Lt, Ls): zero in every layer and head
    if torch.equal(got, ~want):
        raise AssertionError("your True and False are swapped: True should mark the weights that are 0")
    causal = torch.ones(4, 5, dtype=torch.bool).triu(1)
    if torch.equal(got, want | causal):
        raise AssertionError("you marked cells above the diagonal too: does cross-attention use the "
                             "causal mask? (count how many source positions exist when decoding starts)")
    if torch.equal(got, want | (tgt == 0)[:, :, None]):
        raise AssertionError("you marked whole rows of the padded target positions: which mask does "
                             "cross-attention receive, the target's or the source's?")
    if torch.equal(got, want & (tgt != 0)[:, :, None]):
        raise AssertionError("you marked the source <pad> columns only in the real target rows: a padded "
                             "target row still gets a softmax over the real source tokens, with weight 0 "
                             "on the source padding like every other row (cross-attention never sees "
                             "the target's padding)")
    wrong = (got != want).nonzero().tolist()
    assert not wrong, (f"{len(wrong)} of 40 flags are wrong, e.g. (b, t, j) = {wrong[0]}: you said "
                       f"{bool(got[tuple(wrong[0])])} there, the decoder's weight there is "
                       f"{'0' if want[tuple(wrong[0])] else 'not 0'}")


# Exercise 4: a model trained to rotate its input; where does its cross-attention look?
ROTATION_SHIFT = 2  # "fcabje" -> "abjefc": output position t writes source letter (t + 2) mod 6


def rotation_strings(steps: int = 300) -> tuple[list[str], list[str]]:
    """(training strings, test strings) of exercise 4: ``steps * 64`` draws of 6 distinct letters to
    train on, then 200 distinct strings that training never drew, as in section 7."""
    import random

    letters, ls = "abcdefghij", 6
    rng = random.Random(0)
    strings = ["".join(rng.sample(letters, ls)) for _ in range(steps * 64)]
    seen, test = set(strings), []
    while len(test) < 200:  # strings the model never trained on
        s = "".join(rng.sample(letters, ls))
        if s not in seen and s not in test:
            test.append(s)
    return strings, test


def rotation_alignment(seed: int = 0, steps: int = 300) -> tuple[list[int], float]:
    """Train section 7's model (1 layer each, d_model 32, 2 heads, ``steps`` Adam steps, cached on
    disk) to rotate strings of 6 distinct letters left by ``ROTATION_SHIFT``; return, for each output
    position t < 6, the source position where its head-averaged cross-attention peaks most often
    over 200 strings it never trained on (``rotation_strings``), and the share of (string, t) peaks
    at (t + shift) mod 6."""
    from ..attention import padding_mask, target_mask
    from ..cache import train_once
    from ..data import CharTokenizer
    from ..training import train_seq2seq
    from ..transformer import Transformer

    letters, ls, shift = "abcdefghij", 6, ROTATION_SHIFT
    strings, test = rotation_strings(steps)
    pairs = [(s, s[shift:] + s[:shift]) for s in strings]
    tok = CharTokenizer(letters)
    with torch.random.fork_rng(devices=[]):  # section 7's seed_everything(seed), without side effects
        torch.manual_seed(seed)
        model = Transformer(len(tok), len(tok), d_model=32, num_heads=2, num_layers=1, d_ff=64,
                            dropout=0.0, max_len=16)
    train_once(train_seq2seq, model, pairs, tok, steps=steps, batch_size=64, peak_lr=3e-3,
               warmup_steps=30, smoothing=0.0, log_every=50)
    src = torch.tensor([tok.encode(s) for s in test])  # (200, Ls)
    tgt = torch.tensor([tok.encode(s[shift:] + s[:shift], add_bos=True, add_eos=True) for s in test])
    dec_in = tgt[:, :-1]  # (200, Lt)
    with torch.no_grad():
        model(src, dec_in, padding_mask(src, 0), target_mask(dec_in, 0))
    peaks = model.decoder.layers[-1].cross_attn.attn_weights.mean(1)[:, :ls].argmax(-1)  # (200, Ls)
    reads = [int(torch.mode(peaks[:, t]).values) for t in range(ls)]
    share = float((peaks == (torch.arange(ls) + shift) % ls).float().mean())
    return reads, share


@checker("Exercise 4 (a different task, a different alignment)")
def check_rotation_alignment(reads):
    """``reads``: 6 ints, the learner's prediction of the source position each output position
    t = 0..5 of the rotation model reads (checked against ``rotation_alignment()``)."""
    if reads is None or reads is Ellipsis:
        raise NotAttempted
    try:
        given = [int(i) for i in reads]
    except (TypeError, ValueError):
        raise AssertionError(f"give a list of 6 source positions, one per output position t = 0..5, "
                             f"got {reads!r}") from None
    if len(given) != 6 or any(not 0 <= i <= 5 for i in given):
        raise AssertionError(f"give 6 source positions in 0..5 (one per output position), got {given}")
    measured, share = rotation_alignment()
    if given == measured:
        return
    if given == list(range(5, -1, -1)):
        hint = "that is the reversal's anti-diagonal; this model was trained on another task"
    elif given == list(range(6)):
        hint = "that is copying (output t reads source t); the target is the source rotated"
    elif given == [(t - ROTATION_SHIFT) % 6 for t in range(6)]:
        hint = "rotated the other way: output t of 'abjefc' (from 'fcabje') is which source letter?"
    else:
        hint = "write the target under the source and follow each letter"
    if _wrong_try("rotation_alignment"):
        end = " " if hint.endswith("?") else ". "
        raise AssertionError(f"you predicted {given}; hint: {hint}{end}Try again; a second wrong answer "
                             "shows where the trained model's cross-attention peaks.")
    raise AssertionError(f"you predicted {given}; the trained model's cross-attention peaks at "
                         f"{measured} (for {share:.0%} of the output letters of 200 strings it never trained on at "
                         f"exactly those positions): {hint}")
