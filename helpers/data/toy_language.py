"""A small language whose samples can be checked exactly (notebook 12).

It grows out of notebook 01's running example "the big cat chased a mouse". Sentences are drawn
from a probabilistic grammar (below) with a seeded ``random.Random``: nothing is downloaded. The
same grammar gives a parser (``is_sentence``), the exact probability of any string
(``log_prob``) and the exact entropy of the language (``entropy_per_sentence``), so a language
model's loss can be compared with the best loss any model could reach.

What makes a wrong sentence easy to spot:

- **agreement**: the verb agrees with its subject ("the cat sleeps", "the cats sleep"), also
  across a relative clause ("the cat that sees the dogs sleeps"); "a" only before a singular
  noun, "some" only before a plural one;
- **determiners**: every noun phrase starts with one ("the", "a", "some");
- **adjectives before nouns**: at most one, between the determiner and the noun;
- **an optional subordinate clause**: the subject may take one relative clause "that ..." (never
  nested: the language is finite);
- **sentence ends**: every sentence ends with ".".

The grammar is unambiguous (each sentence has exactly one derivation; the tests check it), so the
entropy of a sentence is the expected sum of the entropies of the choices made to produce it.
"""

from __future__ import annotations

import functools
import math
import numbers
import operator
import random
from collections.abc import Iterable, Sequence

import torch

from .. import _checks

__all__ = [
    "GRAMMAR",
    "VOCAB",
    "decode",
    "encode",
    "entropy_per_sentence",
    "entropy_per_token",
    "expected_tokens_per_sentence",
    "is_sentence",
    "length_distribution",
    "log_prob",
    "num_sentences",
    "pack_sentences",
    "packed_best_loss",
    "sentences",
    "shape",
    "shapes",
    "tokenize",
]

_ADJECTIVES = ("big", "small", "black", "grey")
_NOUNS = {"sg": ("cat", "mouse", "dog", "bird"), "pl": ("cats", "mice", "dogs", "birds")}
_TRANSITIVE = {"sg": ("chased", "chases", "sees"), "pl": ("chased", "chase", "see")}
_INTRANSITIVE = {"sg": ("sleeps", "runs"), "pl": ("sleep", "run")}


def _uniform(words: Sequence[str]) -> list[tuple[float, tuple[str, ...]]]:
    return [(1.0 / len(words), (w,)) for w in words]


# Nonterminal -> [(probability, right-hand side)]. Symbols that are not keys are words.
GRAMMAR: dict[str, list[tuple[float, tuple[str, ...]]]] = {
    "S": [(0.5, ("SUBJ_sg", "VP_sg", ".")), (0.5, ("SUBJ_pl", "VP_pl", "."))],
    "ADJ": [(0.6, ())] + [(0.1, (a,)) for a in _ADJECTIVES],
    "OBJ": [(0.5, ("NP_sg",)), (0.5, ("NP_pl",))],
    "DET_sg": [(0.6, ("the",)), (0.4, ("a",))],
    "DET_pl": [(0.6, ("the",)), (0.4, ("some",))],
}
for _n in ("sg", "pl"):
    GRAMMAR[f"SUBJ_{_n}"] = [(0.7, (f"NP_{_n}",)), (0.3, (f"NP_{_n}", "that", f"VP_{_n}"))]
    GRAMMAR[f"NP_{_n}"] = [(1.0, (f"DET_{_n}", "ADJ", f"N_{_n}"))]
    GRAMMAR[f"VP_{_n}"] = [(0.6, (f"VT_{_n}", "OBJ")), (0.4, (f"VI_{_n}",))]
    GRAMMAR[f"N_{_n}"] = _uniform(_NOUNS[_n])
    GRAMMAR[f"VT_{_n}"] = _uniform(_TRANSITIVE[_n])
    GRAMMAR[f"VI_{_n}"] = _uniform(_INTRANSITIVE[_n])


def _words() -> list[str]:
    seen: dict[str, None] = {}
    for rules in GRAMMAR.values():
        for _, rhs in rules:
            for sym in rhs:
                if sym not in GRAMMAR and sym != ".":
                    seen[sym] = None
    return list(seen)


# Token ids: 0 = <pad> (only ever padding), 1 = "." (ends a sentence, and starts a prompt), words.
VOCAB: list[str] = ["<pad>", ".", *_words()]
_STOI = {w: i for i, w in enumerate(VOCAB)}


# ---------------------------------------------------------------- text <-> tokens <-> ids
def tokenize(text: str) -> list[str]:
    """'the big cat sleeps.' -> ['the', 'big', 'cat', 'sleeps', '.'] (the full stop is a token)."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    return text.replace(".", " . ").split()


def encode(text: str) -> list[int]:
    """Text -> token ids; raises ValueError naming words that are not in ``VOCAB``."""
    words = tokenize(text)
    unknown = list(dict.fromkeys(w for w in words if w not in _STOI or w == "<pad>"))
    if unknown:
        raise ValueError(f"unknown word(s) {', '.join(map(repr, unknown))} in {text!r}; the "
                         f"language knows only {' '.join(VOCAB[1:])}")
    return [_STOI[w] for w in words]


def decode(ids: Iterable[int]) -> str:
    """Token ids -> text ('the cat sleeps. a dog runs.'); padding is skipped.

    ``ids`` is one sequence: a list of ints or a 1-D integer tensor (decode a batch row by row)."""
    if isinstance(ids, torch.Tensor):
        if ids.dim() != 1:
            raise ValueError(f"decode: ids must be one sequence of token ids (L,), got shape "
                             f"{tuple(ids.shape)}; for a batch (B, L) decode each row: "
                             f"[decode(row) for row in ids]")
        if ids.is_floating_point() or ids.is_complex() or ids.dtype == torch.bool:
            raise TypeError(f"decode: ids must hold integer token ids (e.g. torch.long), got dtype "
                            f"{ids.dtype}")
        ids = ids.tolist()
    if isinstance(ids, str | bytes) or not isinstance(ids, Iterable):
        raise TypeError(f"decode: ids must be a sequence of token ids (ints), got {_checks.got(ids)}")
    words = []
    for i in (_token_id(i) for i in ids):
        if not 0 <= i < len(VOCAB):
            raise ValueError(f"id {i} is outside the vocabulary of {len(VOCAB)} tokens")
        if i != 0:
            words.append(VOCAB[i])
    return " ".join(words).replace(" .", ".")


def _token_id(i) -> int:
    """One id as an int: ints (Python, NumPy, 0-d integer tensors), never 2.7, True or '3'."""
    if isinstance(i, bool) or (isinstance(i, torch.Tensor) and i.dtype == torch.bool):
        raise TypeError(f"decode: ids must be ints, got {i!r}")
    try:
        return operator.index(i)
    except TypeError:
        raise TypeError(f"decode: ids must be ints (token ids), got {_checks.got(i)}") from None


def _word_classes() -> dict[str, str]:
    classes = {".": ".", "that": "that"}
    for sym, rules in GRAMMAR.items():
        for _, rhs in rules:
            if len(rhs) == 1 and rhs[0] not in GRAMMAR and rhs[0] not in classes:
                classes[rhs[0]] = sym.split("_")[0]  # DET, ADJ, N, VT, VI
    return classes


_CLASSES = _word_classes()


def shape(text: str) -> str:
    """The sentence's word classes: 'the big cat chased a mouse.' -> 'DET ADJ N VT DET N .'
    (unknown words are kept as they are). Counts structure, whatever nouns and verbs were chosen."""
    return " ".join(_CLASSES.get(w, w) for w in tokenize(text))


@functools.cache
def _shapes_of(sym: str) -> frozenset[tuple[str, ...]]:
    """Every sequence of word classes that ``sym`` can derive (a word gives its class)."""
    if sym not in GRAMMAR:
        return frozenset({(_CLASSES[sym],)})
    out: set[tuple[str, ...]] = set()
    for _, rhs in GRAMMAR[sym]:
        partial: set[tuple[str, ...]] = {()}
        for s in rhs:
            partial = {a + b for a in partial for b in _shapes_of(s)}
        out |= partial
    return frozenset(out)


def shapes() -> frozenset[str]:
    """Every shape (``shape``) a sentence of the language can have, e.g. 'DET ADJ N VT DET N .':
    the structure the grammar allows, whatever nouns and verbs fill it (24 of them). A sample whose
    shape is not among them is not a sentence; one whose shape is may still break agreement."""
    return frozenset(" ".join(classes) for classes in _shapes_of("S"))


# ---------------------------------------------------------------- generator
def _expand(sym: str, rng: random.Random, out: list[str]) -> None:
    if sym not in GRAMMAR:
        out.append(sym)
        return
    rules = GRAMMAR[sym]
    r, acc, chosen = rng.random(), 0.0, rules[-1][1]
    for p, rhs in rules:
        acc += p
        if r < acc:
            chosen = rhs
            break
    for s in chosen:
        _expand(s, rng, out)


def sentences(n: int, seed: int = 0) -> list[str]:
    """``n`` sentences drawn from the grammar with ``random.Random(seed)``, e.g. 'the big cat
    chases a mouse.' The same seed gives the same sentences."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ValueError(f"n must be a non-negative int, got {n!r}")
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        words: list[str] = []
        _expand("S", rng, words)
        out.append(" ".join(words).replace(" .", "."))
    return out


# ---------------------------------------------------------------- parser
def _inside(words: tuple[str, ...]):
    """inside(sym, i) -> {j: probability that ``sym`` derives words[i:j]} (memoised)."""

    @functools.cache
    def inside(sym: str, i: int) -> dict[int, float]:
        if sym not in GRAMMAR:
            return {i + 1: 1.0} if i < len(words) and words[i] == sym else {}
        ends: dict[int, float] = {}
        for p, rhs in GRAMMAR[sym]:
            partial = {i: p}
            for s in rhs:
                nxt: dict[int, float] = {}
                for k, pk in partial.items():
                    for j, pj in inside(s, k).items():
                        nxt[j] = nxt.get(j, 0.0) + pk * pj
                partial = nxt
            for j, pj in partial.items():
                ends[j] = ends.get(j, 0.0) + pj
        return ends

    return inside


def log_prob(text: str) -> float:
    """Natural log of the probability that the grammar generates exactly this sentence
    (``-inf`` for a string that is not a sentence of the language)."""
    return _log_prob_words(tuple(tokenize(text)))


@functools.lru_cache(maxsize=65536)
def _log_prob_words(words: tuple[str, ...]) -> float:
    p = _inside(words)("S", 0).get(len(words), 0.0) if words else 0.0
    return math.log(p) if p > 0 else -math.inf


def is_sentence(text: str) -> bool:
    """True when ``text`` is one sentence of the language (ending with '.'), else False."""
    return log_prob(text) > -math.inf


# ---------------------------------------------------------------- exact statistics
def _entropy(rules) -> float:
    return -sum(p * math.log(p) for p, _ in rules if p > 0)


@functools.cache
def _sym_stats(sym: str) -> tuple[float, float, int]:
    """(entropy in nats, expected number of tokens, number of distinct strings) of ``sym``."""
    if sym not in GRAMMAR:
        return 0.0, 1.0, 1
    h, length, count = _entropy(GRAMMAR[sym]), 0.0, 0
    for p, rhs in GRAMMAR[sym]:
        stats = [_sym_stats(s) for s in rhs]
        h += p * sum(s[0] for s in stats)
        length += p * sum(s[1] for s in stats)
        count += math.prod(s[2] for s in stats)
    return h, length, count


def entropy_per_sentence() -> float:
    """Exact entropy of a sentence, in nats: E[-log p(sentence)]."""
    return _sym_stats("S")[0]


def expected_tokens_per_sentence() -> float:
    """Expected number of tokens in a sentence, its '.' included."""
    return _sym_stats("S")[1]


def entropy_per_token() -> float:
    """The entropy rate of a stream of independent sentences, in nats per token: the lowest
    average next-token cross-entropy any model can reach on such a stream."""
    return entropy_per_sentence() / expected_tokens_per_sentence()


def num_sentences() -> int:
    """How many different sentences the language has (it is finite)."""
    return _sym_stats("S")[2]



@functools.cache
def _length_probs(sym: str) -> dict[int, float]:
    if sym not in GRAMMAR:
        return {1: 1.0}
    out: dict[int, float] = {}
    for p, rhs in GRAMMAR[sym]:
        lengths = {0: 1.0}
        for part in rhs:  # the lengths of a sequence: the sums of its parts' lengths
            nxt: dict[int, float] = {}
            for a, pa in lengths.items():
                for b, pb in _length_probs(part).items():
                    nxt[a + b] = nxt.get(a + b, 0.0) + pa * pb
            lengths = nxt
        for n, pn in lengths.items():
            out[n] = out.get(n, 0.0) + p * pn
    return out


def length_distribution() -> dict[int, float]:
    """Exact probability of each sentence length in tokens ('.' included): {length: p}."""
    return dict(sorted(_length_probs("S").items()))


def packed_best_loss(texts: Sequence[str], length: int = 32) -> float:
    """The loss per scored token, on ``pack_sentences`` rows of these sentences, of the grammar made
    aware of the room left in a row: a sentence only starts where it fits, so one that starts with
    r tokens of room left has length <= r, and this model gives it p(s) / P(length <= r). For rows
    of 32 tokens it is about 0.01 below the grammar's own loss. It is the loss of one model on a
    finite sample, not a floor: a row's first sentence is also one that did not fit in the previous
    row (longer on average), which a model could exploit too."""
    if isinstance(length, bool) or not isinstance(length, int) or length < 2:
        raise ValueError(f"packed_best_loss: length must be an int >= 2, got {length!r}")
    if len(texts) == 0:
        raise ValueError("packed_best_loss: texts is empty; give at least one sentence")
    cdf, total, tokens, used = {}, 0.0, 0, 1  # used: tokens of the current row, its start included
    probs = length_distribution()
    for text in texts:
        n = len(tokenize(text))
        if used + n > length + 1:  # the row is full: the sentence starts the next one
            used = 1
        room = length + 1 - used
        if room not in cdf:
            cdf[room] = sum(p for k, p in probs.items() if k <= room)
        total += -log_prob(text) + math.log(cdf[room])
        tokens += n
        used += n
    return total / tokens

# ---------------------------------------------------------------- rows for training
def _sentence_ids(ids) -> list[int]:
    """One sentence's ids as a list of ints; anything else (floats, negative ids) is refused."""
    ids = list(ids)
    for i in ids:
        whole = (isinstance(i, numbers.Integral) and not isinstance(i, bool)) or (
            isinstance(i, torch.Tensor) and i.dim() == 0 and not i.is_floating_point() and i.dtype != torch.bool)
        if not whole or int(i) < 0:
            raise ValueError(f"pack_sentences: token_ids must hold lists of non-negative int ids (as tl.encode "
                             f"gives), got {_checks.got(i)} in a sentence")
    return [int(i) for i in ids]


def pack_sentences(token_ids: Sequence[Sequence[int]], length: int = 32, start_id: int = 1,
                   pad_id: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """Notebook 12's rows: each starts with ``start_id`` ("." in the toy language) followed by as
    many whole sentences (lists of ids) as fit in ``length`` + 1 tokens, padded with ``pad_id``.
    Returns inputs (N, length) and next-token labels (N, length), -100 at padding (not scored)."""
    if isinstance(length, bool) or not isinstance(length, int) or length < 2:
        raise ValueError(f"pack_sentences: length must be an int >= 2, got {length!r}")
    rows, row = [], [start_id]
    for ids in token_ids:
        ids = _sentence_ids(ids)
        if len(ids) + 1 > length + 1:
            raise ValueError(f"pack_sentences: a sentence of {len(ids)} tokens does not fit a row of "
                             f"length {length}")
        if len(row) + len(ids) > length + 1:
            rows.append(row + [pad_id] * (length + 1 - len(row)))
            row = [start_id]
        row += [int(i) for i in ids]
    t = torch.tensor(rows + [row + [pad_id] * (length + 1 - len(row))])  # (N, length + 1)
    x, y = t[:, :-1], t[:, 1:].clone()
    y[y == pad_id] = -100  # padding is not scored
    return x, y
