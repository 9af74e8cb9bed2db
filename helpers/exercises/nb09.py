"""Checkers for the exercises of notebook 09 (the full Transformer).

Exercises 2 and 4 ask for predictions: a first wrong answer gets what was given and a hint; from
the second on, the measured answer as well (``WRONG_TRIES`` counts them in this session). Exercise
1's first wrong count gets a hint, the expected count from the second on; exercise 3's first wrong
shapes get a hint about the wrong dimension, the expected shape from the second try on."""

from __future__ import annotations

import numbers

import torch

from ._common import NotAttempted, call, checker

__all__ = ["EMBEDDING_DEC_IN", "PASSES_MAX_LEN", "SHAPE_STEPS", "WRONG_TRIES", "check_decoder_passes", "check_embedding_rows",
           "check_param_count", "check_shapes", "decoder_passes", "embedding_rows_with_gradient",
           "transformer_param_count"]

WRONG_TRIES = {"decoder_passes": 0, "embedding_rows": 0, "param_count": 0, "shapes": 0}


def _fail(exercise: str, problems: list[tuple[str, object, object, str]]) -> None:
    """Raise for the wrong answers: (question, given, measured, hint). The first wrong try of an
    exercise shows the hints only; later ones the measured answers too."""
    WRONG_TRIES[exercise] += 1
    first = WRONG_TRIES[exercise] == 1
    parts = [f"{question}: you said {given}; " + (f"hint: {hint}" if first else f"measured: {want} ({hint})")
             for question, given, want, hint in problems]
    ending = ". Try again; a second wrong answer shows the measured values." if first else ""
    raise AssertionError("; ".join(parts) + ending)


def transformer_param_count(src_vocab, tgt_vocab, d_model, num_layers, d_ff, norm_first=False,
                            tie_weights=False) -> int:
    """The reference formula (used by the checker and the unit tests)."""
    d = d_model
    mha = 4 * d * d + 4 * d
    ffn = 2 * d * d_ff + d_ff + d
    norm = 2 * d
    enc_layer = mha + ffn + 2 * norm
    dec_layer = 2 * mha + ffn + 3 * norm
    final_norms = 2 * norm if norm_first else 0
    out = (0 if tie_weights else d * tgt_vocab) + tgt_vocab
    return (src_vocab + tgt_vocab) * d + num_layers * (enc_layer + dec_layer) + final_norms + out


def _param_mistakes(case) -> list[tuple[int, str]]:
    """The differences (learner's count - the right one) that named mistakes give on ``case``, each
    with its hint; a hint is given only when the learner's difference matches on a second case too
    (two mistakes can give the same number on one case)."""
    s, t, d, n, f, nf, tie = case
    layer_norms = n * 5 * 2 * d  # 2 per encoder layer + 3 per decoder layer, 2·d_model each
    mistakes = [
        (-layer_norms, f"{layer_norms} too few: that is {layer_norms // (2 * d)} blocks of 2·d_model. Which "
                       "blocks inside the layers have 2·d_model parameters?"),
        (-n * 2 * d, f"{n * 2 * d} too few: one LayerNorm (2·d_model) per layer pair. An encoder layer has "
                     "two sublayers, a decoder layer three: how many LayerNorms does each have?"),
        (-t, f"{t} too few, one per target word: did you count the output projection's bias? (tying "
             "shares its matrix, never its bias)"),
        (-n * 3 * 4 * d, f"{n * 12 * d} too few (12·d_model per layer pair): did you count every "
                         "attention's biases?"),
        (-n * 2 * (f + d), f"{n * 2 * (f + d)} too few (d_ff + d_model per feed-forward network): did you "
                           "count the feed-forward networks' biases?"),
        (-n * (4 * d * d + 4 * d + 2 * d), f"{n * (4 * d * d + 6 * d)} too few, one attention and one LayerNorm per "
                                           "decoder layer: a decoder layer has three sublayers; did you count "
                                           "its cross-attention?"),
        (-n * (4 * d * d + 4 * d), f"{n * (4 * d * d + 4 * d)} too few, one attention per decoder layer: did you "
                                   "count the decoder's cross-attention?"),
    ]
    if not nf:
        mistakes += [(4 * d, f"4·d_model = {4 * d} too many: that is two LayerNorms. With norm_first=False "
                             "(post-LN), each sublayer ends with its own norm: does a stack add a final one?")]
    if nf:
        mistakes += [(-4 * d, f"4·d_model = {4 * d} too few: with norm_first=True, what does each stack add "
                              "after its last layer?"),
                     (-2 * d, f"2·d_model = {2 * d} too few: that is one LayerNorm's weight and bias. With "
                              "norm_first=True, how many stacks end with a final LayerNorm?")]
    if tie:
        mistakes += [(d * t, f"d_model·tgt_vocab = {d * t} too many: with tie_weights=True, how many "
                             "matrices of that size does the model hold?"),
                     (-(s + t) * d, f"d_model·(src_vocab + tgt_vocab) = {(s + t) * d} too few: the model "
                                    "holds one matrix of tgt_vocab x d_model, shared by the target embedding "
                                    "and the output projection (count it once), and the source embedding "
                                    "keeps its own (tie_weights does not tie it)"),
                     (-s * d, f"d_model·src_vocab = {s * d} too few: tie_weights shares the target "
                              "embedding's matrix with the output projection; the source embedding keeps "
                              "its own")]
    return mistakes


@checker("Exercise 1 (parameter count)")
def check_param_count(fn):
    """``fn(src_vocab, tgt_vocab, d_model, num_layers, d_ff, norm_first, tie_weights)`` -> int.
    A first wrong count gets a hint; from the second on, the expected count as well."""
    cases = [(11, 13, 16, 2, 32, False, False), (11, 13, 16, 2, 32, True, False),
             (11, 13, 16, 2, 32, False, True), (40, 30, 64, 3, 256, True, True),
             (1000, 1000, 512, 6, 2048, False, False)]
    for case in cases:
        got = call(fn, *case)
        want = transformer_param_count(*case)
        if got == want:
            continue
        args = dict(zip(("src_vocab", "tgt_vocab", "d_model", "num_layers", "d_ff", "norm_first",
                         "tie_weights"), case, strict=True))
        s, t, d, n, f, nf, tie = case
        other = (s + 9, t + 4, d + 8, n + 1, f + 16, nf, tie)  # the same switches, other sizes
        other_diff = call(fn, *other) - transformer_param_count(*other)
        hints = [hint for (diff, hint), (other_want, _) in zip(_param_mistakes(case), _param_mistakes(other), strict=True)
                 if got - want == diff and other_diff == other_want]
        WRONG_TRIES["param_count"] += 1
        shown = "" if WRONG_TRIES["param_count"] == 1 else f", expected {want} (difference {got - want});"
        hint = hints[0] if hints else "count block by block: embeddings, each layer, final norms, output"
        ending = " (A second wrong try shows the expected count.)" if not shown else ""
        raise AssertionError(f"{args}: got {got}{shown} {hint}{ending}" if shown else f"{args}: got {got}, {hint}{ending}")


# Exercise 2: how much work greedy decoding does without a cache.
PASSES_MAX_LEN = 8


def decoder_passes(max_len: int = PASSES_MAX_LEN) -> tuple[int, int]:
    """Run ``helpers.greedy_decode`` (no cache) on an untrained model with an end token that never
    comes, and count the decoder's calls and the target positions it processes in all, per sentence."""
    from ..decoding import greedy_decode
    from ..transformer import Transformer

    with torch.random.fork_rng(devices=[]):  # leaves the learner's random state alone
        torch.manual_seed(0)
        model = Transformer(8, 8, d_model=16, num_heads=4, num_layers=2, d_ff=32, dropout=0.0).eval()
    seen: list[int] = []
    hook = model.decoder.register_forward_pre_hook(lambda module, args: seen.append(args[0].shape[1]))
    try:
        greedy_decode(model, torch.tensor([[3, 4, 5, 6, 2]]), max_len, 1, -1)
    finally:
        hook.remove()
    return len(seen), sum(seen)


@checker("Exercise 2 (how much work is greedy decoding?)")
def check_decoder_passes(calls, positions):
    """``calls``: how many times section 8's greedy loop runs the decoder for ``max_len=8`` when no
    sentence ever says <eos>; ``positions``: how many target positions those calls process in all,
    for one sentence."""
    if any(v is None or v is Ellipsis for v in (calls, positions)):
        raise NotAttempted
    for name, v in (("calls", calls), ("positions", positions)):
        if isinstance(v, bool) or not isinstance(v, numbers.Integral):
            raise AssertionError(f"{name}: give a whole number, got {v!r}")
    calls, positions = int(calls), int(positions)
    want_calls, want_positions = decoder_passes()
    n = PASSES_MAX_LEN
    problems = []
    if calls != want_calls:
        hint = ("the output starts with <bos> already in place, so it needs max_len - 1 new tokens"
                if calls == n else "one decoder call per new token")
        problems.append(("calls", calls, f"the decoder ran {want_calls} times", hint))
    if positions != want_positions:
        if positions == want_calls:
            hint = ("that is one position per call; without a cache each call re-reads the whole "
                    "prefix: 1, then 2, then 3 positions ...")
        elif positions == n * (n + 1) // 2:
            hint = "the longest prefix the decoder reads is max_len - 1 tokens, not max_len"
        elif positions == want_calls * (n - 1):
            hint = "the prefix grows by one token per call: it is not max_len - 1 long every time"
        else:
            hint = "add up the length of the prefix at each call"
        problems.append(("positions", positions, f"the decoder processed {want_positions} target positions in all",
                         hint))
    if problems:
        _fail("decoder_passes", problems)


# Exercise 3: the stated model and batch, and the tensors whose shapes the learner predicts.
SHAPE_MODEL = dict(src_vocab_size=30, tgt_vocab_size=40, d_model=64, num_heads=8, num_layers=3,
                   d_ff=256)
SHAPE_STEPS = ("decoder input", "memory", "queries per head (cross-attention)",
               "cross-attention weights", "decoder self-attention weights",
               "feed-forward hidden (decoder)", "logits")


def _true_shapes() -> dict[str, tuple[int, ...]]:
    """Run the stated model on a batch of 4 sources of 9 ids and 4 targets of 7 ids (<bos> .. <eos>)
    and record the shapes (with hooks, nothing computed by hand)."""
    from ..attention import padding_mask, target_mask
    from ..transformer import Transformer

    with torch.random.fork_rng(devices=[]):  # leaves the learner's random state alone
        torch.manual_seed(0)
        model = Transformer(**SHAPE_MODEL, dropout=0.0).eval()
        src = torch.randint(3, 30, (4, 9))  # (B, Ls)
        tgt = torch.randint(3, 40, (4, 7))  # (B, 7): <bos> y1 .. y5 <eos>
    dec_in = tgt[:, :-1]
    seen: dict[str, tuple[int, ...]] = {"decoder input": tuple(dec_in.shape)}
    layer = model.decoder.layers[0]

    def record(module, inputs, output):  # returns None: the output stays as it is
        seen["feed-forward hidden (decoder)"] = tuple(output.shape)

    hooks = [layer.feed_forward.linear1.register_forward_hook(record)]
    with torch.no_grad():
        memory = model.encode(src, padding_mask(src, 0))
        logits = model.decode(dec_in, memory, padding_mask(src, 0), target_mask(dec_in, 0))
    for h in hooks:
        h.remove()
    b, heads, lt, _ = layer.cross_attn.attn_weights.shape  # one query row per target position
    seen["queries per head (cross-attention)"] = (b, heads, lt, layer.cross_attn.d_k)
    seen["memory"] = tuple(memory.shape)
    seen["cross-attention weights"] = tuple(layer.cross_attn.attn_weights.shape)
    seen["decoder self-attention weights"] = tuple(layer.self_attn.attn_weights.shape)
    seen["logits"] = tuple(logits.shape)
    return seen


@checker("Exercise 3 (the shape at each step)")
def check_shapes(shapes):
    """``shapes``: {step name: shape tuple} for every name in ``SHAPE_STEPS``."""
    assert isinstance(shapes, dict), f"give a dict {{step: shape}}, got {type(shapes).__name__}"
    if any(v is None or v is Ellipsis for v in shapes.values()):
        raise NotAttempted
    missing = [k for k in SHAPE_STEPS if k not in shapes]
    assert not missing, f"these steps have no shape yet: {missing}"
    want = _true_shapes()
    bad = []
    for k in SHAPE_STEPS:
        try:
            got = tuple(int(n) for n in shapes[k])
        except (TypeError, ValueError):
            raise AssertionError(f"{k!r}: give a tuple of ints such as (4, 9), got {shapes[k]!r}") from None
        if got != want[k]:
            bad.append((k, got))
    if not bad:
        return
    k, got = bad[0]
    want_k = want[k]
    WRONG_TRIES["shapes"] += 1
    first = WRONG_TRIES["shapes"] == 1
    hint = {
        "decoder input": "the decoder reads the target without one of its tokens",
        "memory": "the encoder's output: one vector of d_model per source position",
        "feed-forward hidden (decoder)": "the first linear map of the feed-forward network widens each "
                                         "position's vector: to how many features?",
        "queries per head (cross-attention)": "split into heads, the queries have four dimensions: the "
                                              "batch, the heads, the positions that ask, the features of one head",
        "cross-attention weights": "one row per query, one column per key: where do the queries "
                                   "and the keys of cross-attention come from?",
        "decoder self-attention weights": "one row per query, one column per key",
        "logits": "which vocabulary does the output projection score?",
    }.get(k, "follow the tensor through the model")
    if len(got) != len(want_k):
        what = f"{len(got)} numbers where the tensor has {len(want_k)} dimensions"
    else:
        where = [i for i, (a, b) in enumerate(zip(got, want_k, strict=True)) if a != b]
        what = ("dimension" + ("s " if len(where) > 1 else " ") + ", ".join(str(i) for i in where)
                + (" are" if len(where) > 1 else " is") + " wrong")
        by_dim = _DIM_HINTS.get(k, {})
        if all(i in by_dim for i in where):
            hint = "; ".join(dict.fromkeys(by_dim[i] for i in where))  # each hint once
        if sorted(got) == sorted(want_k):  # the right sizes, in another order
            hint = "the right sizes in the wrong order: " + _ORDER_HINTS.get(k, hint)
    shown = (" Try again; a second wrong try shows the expected shape." if first
             else f" Expected {want_k}.")
    raise AssertionError(f"{len(bad)} of {len(SHAPE_STEPS)} shapes are wrong; the first: {k!r}, you "
                         f"gave {got}: {what}. Hint: {hint}{'' if hint.endswith('?') else '.'}{shown}")


# Hints for one wrong dimension of a shape (by its index), where the step's own hint would not name it.
_READS = "one position per token the decoder reads: the target without its last token"
_DIM_HINTS = {
    "queries per head (cross-attention)": {
        0: "one query tensor per sentence of the batch",
        1: "how many heads does the model have?",
        2: "cross-attention's queries come from the decoder: how many positions does the decoder read?",
        3: "how wide is one head? d_model is split among the heads",
    },
    "cross-attention weights": {
        2: "one row per query: cross-attention's queries come from the decoder",
        3: "one column per key: cross-attention's keys come from the encoder's memory",
    },
    "decoder self-attention weights": {
        0: "one weight matrix per sentence of the batch",
        1: "how many heads does the model have?",
        2: "one row per query, one query per token the decoder reads: the target without its last token",
        3: "one column per key, and self-attention's keys are the decoder's own positions, like its queries",
    },
    "feed-forward hidden (decoder)": {
        0: "one vector per position of each sentence of the batch",
        1: _READS,
        2: "the first linear map of the feed-forward network widens each position's vector: to how many "
           "features?",
    },
    "logits": {
        0: "one row of scores per position of each sentence of the batch",
        1: _READS,
        2: "which vocabulary does the output projection score?",
    },
}

# Where the right sizes come in the wrong order: what fixes the order, without the layout itself.
_ORDER_HINTS = {
    "queries per head (cross-attention)": "after .view(B, L, h, d_k) splits the heads off, .transpose(1, 2) "
                                          "puts the heads before the positions, so that each head holds one "
                                          "matrix of positions x features",
}


# Exercise 4: which rows of the target embedding does one training step change?
EMBEDDING_DEC_IN = (1, 3, 4, 5, 6)  # <bos> le chat noir dort: the decoder input of one sentence


def _labels() -> list[int]:
    """The labels of the one sentence: the decoder input shifted by one, ending with <eos> (2)."""
    return [*EMBEDDING_DEC_IN[1:], 2]


def embedding_rows_with_gradient() -> dict[str, list[int]]:
    """One teacher-forced backward pass of the running example's first sentence through an untied
    and a tied ``helpers.Transformer``; the target-embedding rows whose gradient is not zero."""
    import torch.nn.functional as F

    from ..attention import padding_mask, target_mask
    from ..transformer import Transformer

    src = torch.tensor([[3, 4, 5, 6, 2]])  # (1, Ls)
    tgt = torch.tensor([[*EMBEDDING_DEC_IN, 2]])  # (1, L): <bos> le chat noir dort <eos>
    dec_in, labels = tgt[:, :-1], tgt[:, 1:]
    assert labels[0].tolist() == _labels()
    rows = {}
    for name, tie in (("untied", False), ("tied", True)):
        with torch.random.fork_rng(devices=[]):  # leaves the learner's random state alone
            torch.manual_seed(0)
            model = Transformer(8, 8, d_model=16, num_heads=4, num_layers=2, d_ff=32, dropout=0.0,
                                tie_weights=tie)
        logits = model(src, dec_in, padding_mask(src, 0), target_mask(dec_in, 0))
        F.cross_entropy(logits.flatten(0, 1), labels.flatten()).backward()
        grad = model.tgt_embed.weight.grad  # (|V_t|, d_model)
        rows[name] = [i for i in range(grad.shape[0]) if float(grad[i].abs().max()) > 0]
    return rows


@checker("Exercise 4 (which embedding rows does one step change?)")
def check_embedding_rows(untied, tied):
    """``untied``, ``tied``: the target-embedding rows (token ids 0..7) that get a non-zero
    gradient from one teacher-forced step on <bos> le chat noir dort <eos>, without and with tying."""
    if any(v is None or v is Ellipsis for v in (untied, tied)):
        raise NotAttempted
    given = {}
    for name, v in (("untied", untied), ("tied", tied)):
        try:
            given[name] = sorted({int(i) for i in v})
        except (TypeError, ValueError):
            raise AssertionError(f"{name}: give a list (or set) of token ids such as [1, 3], got "
                                 f"{v!r}") from None
    measured = embedding_rows_with_gradient()
    problems = []
    if given["untied"] != measured["untied"]:
        hint = ("an embedding table is a lookup: only the rows of the ids the decoder reads take part "
                "in the forward pass" if given["untied"] == list(range(8)) else
                "which ids does the decoder read? (the labels are not looked up in tgt_embed)")
        problems.append(("untied", given["untied"], f"the rows with a gradient are {measured['untied']}", hint))
    if given["tied"] != measured["tied"]:
        if given["tied"] == sorted(set(EMBEDDING_DEC_IN) | set(_labels())):
            hint = ("both uses counted, but the output projection scores every word at every position, and "
                    "the softmax's gradient pushes every score, not only the label's")
        elif given["tied"] == measured["untied"]:
            hint = ("with tying, the same matrix also scores the words at the output: whose scores does "
                    "the softmax's gradient push, only the labels' or every word's?")
        elif given["tied"] == [i for i in measured["tied"] if i != 0]:
            hint = ("the decoder never reads <pad> (id 0), but the output scores it like every other word: "
                    "the softmax gives it a probability too; what does that do to its row at the output?")
        else:
            hint = "the matrix is used twice: add up both uses"
        problems.append(("tied", given["tied"], f"the rows with a gradient are {measured['tied']}", hint))
    if problems:
        _fail("embedding_rows", problems)
