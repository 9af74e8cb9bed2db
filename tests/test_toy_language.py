"""helpers.data.toy_language: generator, parser, exact probabilities and entropy."""

import math
import random

import pytest

from helpers.data import toy_language as tl


def test_sentences_are_seeded_and_parse():
    a, b = tl.sentences(200, seed=4), tl.sentences(200, seed=4)
    assert a == b and a != tl.sentences(200, seed=5)
    assert all(tl.is_sentence(s) and s.endswith(".") for s in a)


@pytest.mark.parametrize("text", [
    "the cat sleep.",  # agreement
    "the cats sleeps.",
    "a cats sleep.",  # determiner agreement
    "some cat sleeps.",
    "cat sleeps.",  # missing determiner
    "the cat big sleeps.",  # adjective after the noun
    "the big small cat sleeps.",  # two adjectives
    "the cats that chases a dog sleep.",  # agreement inside the relative clause
    "the cats that chase a dog sleeps.",  # agreement across the relative clause
    "the cat that that runs sleeps.",
    "the cat sleeps",  # no full stop
    "the cat sleeps. the dog runs.",  # two sentences
    "the cat chases.",  # transitive verb without object
    "the cat sleeps a dog.",
    "",
])
def test_parser_rejects(text):
    assert not tl.is_sentence(text) and tl.log_prob(text) == -math.inf


def test_parser_accepts_full_stop_either_way():
    assert tl.is_sentence("the big cat chased a mouse.") and tl.is_sentence("the big cat chased a mouse .")


def test_log_prob_exact_for_one_sentence():
    # S -> SUBJ_sg VP_sg . : 0.5; SUBJ_sg -> NP: 0.7; the: 0.6; big: 0.1; cat: 1/4;
    # VP -> VT OBJ: 0.6; chased: 1/3; OBJ -> NP_sg: 0.5; a: 0.4; no adjective: 0.6; mouse: 1/4
    p = 0.5 * 0.7 * 0.6 * 0.1 * 0.25 * 0.6 * (1 / 3) * 0.5 * 0.4 * 0.6 * 0.25
    assert tl.log_prob("the big cat chased a mouse.") == pytest.approx(math.log(p), rel=1e-12)


def test_probabilities_sum_to_one_and_grammar_unambiguous():
    for rules in tl.GRAMMAR.values():
        assert sum(p for p, _ in rules) == pytest.approx(1.0)
    # Every sampled sentence has exactly one derivation: its probability equals the product of
    # the choices the generator made, which the monte-carlo entropy check below relies on.
    sample = tl.sentences(3000, seed=7)
    mc = -sum(map(tl.log_prob, sample)) / len(sample)
    assert mc == pytest.approx(tl.entropy_per_sentence(), abs=0.15)
    mean_len = sum(len(tl.tokenize(s)) for s in sample) / len(sample)
    assert mean_len == pytest.approx(tl.expected_tokens_per_sentence(), abs=0.1)


def _enumerate(sym):
    if sym not in tl.GRAMMAR:
        return [((sym,), 1.0)]
    out = []
    for p, rhs in tl.GRAMMAR[sym]:
        partial = [((), p)]
        for s in rhs:
            partial = [(w + w2, q * q2) for w, q in partial for w2, q2 in _enumerate(s)]
        out += partial
    return out


def test_entropy_and_count_by_full_enumeration_of_noun_phrases():
    # The full language has millions of sentences; the noun phrase is enumerated exactly.
    nps = _enumerate("NP_sg")
    strings = {w for w, _ in nps}
    assert len(strings) == len(nps)  # unambiguous
    h = -sum(p * math.log(p) for _, p in nps)
    assert h == pytest.approx(tl._sym_stats("NP_sg")[0], rel=1e-12)
    assert tl._sym_stats("NP_sg")[2] == len(nps)
    for w, p in random.Random(0).sample(nps, 5):
        assert sum(q for w2, q in nps if w2 == w) == pytest.approx(p)


def test_entropy_rate_and_count():
    assert tl.entropy_per_token() == pytest.approx(tl.entropy_per_sentence() / tl.expected_tokens_per_sentence())
    assert tl.num_sentences() > 1_000_000


def test_encode_decode_and_errors():
    ids = tl.encode("the big cat chased a mouse.")
    assert tl.decode(ids) == "the big cat chased a mouse." and ids[-1] == 1
    with pytest.raises(ValueError, match="'elephant'"):
        tl.encode("the elephant sleeps.")
    with pytest.raises(ValueError, match="outside the vocabulary"):
        tl.decode([99])
    with pytest.raises(TypeError):
        tl.is_sentence(3)
    with pytest.raises(ValueError, match="non-negative"):
        tl.sentences(-1)


def test_shape():
    assert tl.shape("the big cat chased a mouse.") == "DET ADJ N VT DET N ."
    assert tl.shape("some cats that sleep run.") == "DET N that VI VI ."
    assert tl.shape("the elephant") == "DET elephant"


def test_the_grammar_has_24_shapes_and_samples_use_exactly_them():
    """Subject: 2 noun phrases (with or without an adjective), alone or with a relative clause whose
    verb phrase takes 3 shapes (intransitive, transitive with an object of 2 shapes): 2 + 2 x 3 = 8;
    times 3 shapes of the main verb phrase: 24. Every sampled sentence has one of them, and 5,000
    samples meet all 24; a broken sample can have a shape outside them."""
    all_shapes = tl.shapes()
    assert len(all_shapes) == 24
    assert "DET ADJ N VT DET N ." in all_shapes and "DET N that VI VI ." in all_shapes
    assert {tl.shape(s) for s in tl.sentences(5000, seed=3)} == all_shapes
    assert tl.shape("a small mouse sees sleeps.") not in all_shapes  # a broken sample's shape
    assert tl.shape("the cats sleeps.") in all_shapes and not tl.is_sentence("the cats sleeps.")  # agreement


# ---------------------------------------------------------------- what packing leaks
def test_length_distribution_is_exact():
    from helpers.data import toy_language as tl

    dist = tl.length_distribution()
    assert abs(sum(dist.values()) - 1) < 1e-12
    assert abs(sum(n * p for n, p in dist.items()) - tl.expected_tokens_per_sentence()) < 1e-12
    sample = [len(tl.tokenize(s)) for s in tl.sentences(20_000, seed=3)]
    for n, p in dist.items():
        assert abs(sample.count(n) / len(sample) - p) < 0.01


def test_packed_best_loss_is_below_the_grammars_loss_by_what_packing_leaks():
    import math

    from helpers.data import toy_language as tl

    texts = tl.sentences(500, seed=4)
    grammar = -sum(tl.log_prob(s) for s in texts) / sum(len(tl.tokenize(s)) for s in texts)
    packed = tl.packed_best_loss(texts, length=32)
    assert grammar - 0.03 < packed < grammar
    assert math.isclose(tl.packed_best_loss(texts, length=5000), grammar)  # one row: nothing leaks
    three = ["the cat sleeps."] * 3  # one row of 13: the 2nd starts with 9 tokens of room, the 3rd with 5
    room = {r: sum(p for n, p in tl.length_distribution().items() if n <= r) for r in (9, 5)}
    want = (-3 * tl.log_prob(three[0]) + math.log(room[9]) + math.log(room[5])) / 12
    assert math.isclose(tl.packed_best_loss(three, length=13), want)


@pytest.mark.parametrize("args, match", [(([], 32), "texts is empty"), ((["a cat runs."], 1), "length must be")])
def test_packed_best_loss_bad_arguments(args, match):
    from helpers.data import toy_language as tl

    with pytest.raises(ValueError, match=match):
        tl.packed_best_loss(*args)
