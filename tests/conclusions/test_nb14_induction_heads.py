"""Notebook 14's conclusions, re-checked where they could break.

Runs: the 2-layer attention-only model of notebook 14 at its own setting (800 steps, |V| = 64) at
seeds 0-4, from which the thresholds were written, and at the held-out seeds 5-9, on which they
are checked unchanged (``seed_sets``); at the variations its "Try it" suggests (1600 steps;
|V| = 32) at seeds 0, 1, 2 and held-out 5, 6, 7 (|V| = 32 at all ten seeds 0-9: seeds 3, 4, 8 and 9
were added after an outside reader found the parking control failing at 3 and 8), and 3200 steps
at seeds 0, 1, held-out 5, 6, 7, 8, and 9, 10 (what holds there: test_after_3200_steps,
test_attention_sink_after_3200_steps; seeds 6, 7, 8, 9 and 10 were added after outside readers found
statements failing or counts changing there: test_after_3200_steps_across_runs); a
1-layer model for each run; the narrower
model (d_model = 32) at the same six seeds. They train with ``train_induction_model(...,
cache=True)``, the call the notebook makes, so the notebook's models (seed 0, and seed 1 for its
exercise 2) are trained once for both. Each test states one conclusion with the threshold the
notebook asserts, and, where the conclusion is an explanation, the control that would refute it.
Evaluation follows the notebook: 256 repeated sequences of period n = 12 drawn from seed + 1.

What the held-out seeds changed (re-scoped, not re-tuned): "queries 12 and 13 still look at
t - 1" failed at seed 8 (query 13: 0.01), so the general statement is about query 12 only;
"within 0.05 without repetition" failed at seed 7 (0.054), so the notebook says "in all but one
run"; the 1-layer model's same-head share of its t - n + 1 weight on random sequences (above half)
failed at seed 7 after 1600 steps (40 %), so the notebook claims it for the 800-step runs and names
that run. Measured outside these tests, for the prose: seeds 10-12 at 800 steps (seed 10: the other
layer-0 head shares the previous-token job, first-half mean 0.88 and the other head's cost 0.31;
seed 12: query 13 at 0.31, the previous-token score 100 steps before the fall above 0.2). Seed 13 at 800 steps, found by an outside reader, builds a variant circuit and is now
tested too (test_seed_13_variant_duplicate_token_head_feeds_the_queries).
"""

from __future__ import annotations

import math

import pytest
import torch
from seed_sets import ALL_SEEDS, seed_id

from helpers.data.repeated import perfect_induction_loss, prefix_match_loss, repeated_tokens
from helpers.induction import (
    PATHS,
    composition_scores,
    copying_share,
    eigenvalue_positivity,
    full_ov_circuit,
    head_scores,
    head_writes,
    ov_matrix,
    per_position_loss,
    qk_matrix,
    random_composition_scores,
)
from helpers.training import train_induction_model

N = 12  # the evaluation period
SEEDS = ALL_SEEDS  # thresholds written from seeds 0-4, checked unchanged on the held-out 5-9
VARIATION_SEEDS = (0, 1, 2, 5, 6, 7)  # three written and three held-out seeds per "Try it" value
V32_SEEDS = SEEDS  # |V| = 32 at all ten: seeds 3, 4, 8, 9 added after an outside reader found 3 and 8 failing
VARIATIONS = {"800 steps": {}, "1600 steps": {"steps": 1600}, "|V| = 32": {"vocab_size": 32},
              "3200 steps": {"steps": 3200}}
RUNS = [(seed, name) for name in ("800 steps", "1600 steps", "|V| = 32")
        for seed in {"800 steps": SEEDS, "|V| = 32": V32_SEEDS}.get(name, VARIATION_SEEDS)]
IDS = [f"{seed_id(seed)}, {name}" for seed, name in RUNS]
LONG_SEEDS = (0, 1, 5, 6, 7, 8, 9, 10)  # "Try it: STEPS = 3200" (CI time); 9, 10 and 6 added after readers' checks
LONG_RUNS = [(seed, "3200 steps") for seed in LONG_SEEDS]
LONG_IDS = [f"{seed_id(seed)}, 3200 steps" for seed in LONG_SEEDS]

_measured: dict = {}


def _train(seed: int, name: str, num_layers: int = 2):
    kwargs = {"steps": 800, **VARIATIONS[name]}
    return train_induction_model(num_layers=num_layers, seed=seed, cache=True, **kwargs)


def _eval_ids(seed: int, vocab: int) -> torch.Tensor:
    return repeated_tokens(256, N, vocab, torch.Generator().manual_seed(seed + 1))  # (B, 2n)


def _fall(m: dict) -> None:
    """Where the repeated-half loss first falls below 75 %, 50 % and 30 % of chance."""
    steps, rep, chance = m["hist"]["step"], m["hist"]["repeated_half"], m["chance"]
    first = {lv: next(s for s, v in zip(steps, rep, strict=True) if v < lv * chance)
             for lv in (0.75, 0.5, 0.3)}
    m.update(start=first[0.75], phase=first[0.5], end=first[0.3], k=steps.index(first[0.5]))


def _measure(seed: int, name: str) -> dict:
    """Everything the notebook asserts, for one run (computed once per run)."""
    if (seed, name) in _measured:
        return _measured[seed, name]
    torch.set_num_threads(1)
    model, hist = _train(seed, name)
    vocab = model.vocab_size
    ids = _eval_ids(seed, vocab)
    m = {"chance": math.log(vocab), "hist": hist, "vocab": vocab,
         "floor": perfect_induction_loss(ids, N).mean().item()}
    _fall(m)
    m["early"], m["late"] = hist["per_position"][max(m["k"] - 5, 0)], hist["per_position"][-1]
    m["icl"] = [p[20].item() - p[2].item() for p in hist["per_position"]]
    model1, hist1 = _train(seed, name, num_layers=1)
    m["final1"] = hist1["repeated_half"][-1]
    m["ov1"] = [full_ov_circuit(model1, 0, h) for h in range(model1.num_heads)]
    random_ids = torch.randint(0, vocab, (256, 2 * N), generator=torch.Generator().manual_seed(3))
    with torch.no_grad():
        model1(random_ids)  # sequences with no repeated half: what the 1-layer heads do by position
        w1 = model1.patterns()[0].mean(0)  # (h, 2n, 2n)
    m["ind1"] = head_scores(model1, ids, N)["induction"][0]  # (h,)
    m["ind1_random"] = w1.diagonal(offset=-(N - 1), dim1=-2, dim2=-1)[..., 1:].mean(-1)  # (h,)

    scores = head_scores(model, ids, N)
    prev, ind = scores["previous"], scores["induction"]
    p = int(prev[0].argmax())
    m.update(prev=prev, ind=ind, p=p)
    with torch.no_grad():
        model(ids)
        pats = torch.stack([w.mean(0) for w in model.patterns()])  # (layers, h, 2n, 2n)
    m["dup"] = pats[0].diagonal(offset=-N, dim1=-2, dim2=-1).mean(-1)  # (h,): layer 0, on t - n
    with torch.no_grad():
        to_first = pats[1, :, :, 0]  # (h, 2n)
        model(torch.randint(0, vocab, (256, 2 * N), generator=torch.Generator().manual_seed(3)))
        no_repeat = model.patterns()[0].mean(0)[p].diagonal(offset=-1)  # (2n - 1,)
    m["by_query"], m["no_repeat"] = pats[0, p].diagonal(offset=-1), no_repeat

    m["ov"] = [full_ov_circuit(model, 1, h) for h in range(2)]
    m["ov_prev"] = full_ov_circuit(model, 0, p)
    m["comp"] = {kind: composition_scores(model, kind) for kind in ("keys", "queries", "values")}
    embed = model.embed.weight.detach()
    prev_write = embed @ ov_matrix(model, 0, p)
    m["k_circuit"] = [copying_share(embed @ qk_matrix(model, 1, h) @ prev_write.T) for h in range(2)]

    base = per_position_loss(model, ids)[N:].mean().item()
    heads = [(0, 0), (0, 1), (1, 0), (1, 1)]
    m["base"] = base
    m["ablated"] = {hd: per_position_loss(model, ids, ablate=[hd])[N:].mean().item() for hd in heads}
    m["both"] = per_position_loss(model, ids, ablate=[(1, 0), (1, 1)])[N:].mean().item()
    first = torch.arange(2 * N - 1) < N
    paths = {"keys": {"into": ("keys",)}, "queries": {"into": ("queries",)},
             "values": {"into": ("values",)}, "logits": {"into": ("logits",)},
             "keys and values": {"into": ("keys", "values")}, "everywhere": {"into": PATHS},
             "keys first": {"into": ("keys",), "positions": first},
             "keys second": {"into": ("keys",), "positions": ~first}}
    m["cost"] = {name: per_position_loss(model, ids, ablate=[(0, p)], **kw)[N:].mean().item() - base
                 for name, kw in paths.items()}

    m["parked"] = to_first[:, 1:7].mean(-1)  # (h,): queries 1 .. 6, before any training period can end
    sink = int(m["parked"].argmax())
    m.update(sink=sink, later=to_first[sink, N:].mean().item())
    token0 = ids[:, :1, None].expand(-1, N - 2, 1)
    window = slice(3, 7)  # section 8's positions 3 .. 6: all of tokens 0..3 in the context, and no
    # training period (8 to 16) makes token 0 the next token there (from 7 on, n = t + 1 does)
    with torch.no_grad():
        length = 2 * N - 1
        x = model.embed(ids[:, :-1]) + model.pos(torch.arange(length))
        stream1 = x + model.layers[0](x, x, x, mask=torch.ones(length, length, dtype=torch.bool).tril())
        writes = (stream1 @ ov_matrix(model, 1, sink)).norm(dim=-1).mean(0)  # (2n - 1,)
        m["p_token0"], m["p_token0_off"] = (
            model(ids[:, :-1], ablate=off).softmax(-1)[:, 1:N - 1].gather(-1, token0).mean().item()
            for off in ((), ((1, 0), (1, 1))))
        early = ids[:, None, :4].expand(-1, 4, 4)  # (B, 4, 4): tokens 0..3 of each sequence
        m["p_early"], m["p_early_off"] = (
            model(ids[:, :-1], ablate=off).softmax(-1)[:, window].gather(-1, early).mean((0, 1))
            for off in ((), ((1, 0), (1, 1))))  # (4,) each: at positions 3 .. 6
        m["p_early_sink_off"] = model(ids[:, :-1], ablate=((1, sink),)).softmax(-1)[:, window].gather(
            -1, early).mean((0, 1))  # (4,)
        first0 = ids[:, :1, None].expand(-1, N, 1)  # (B, n, 1): token 0 at positions 0 .. n - 1
        m["p0_by_position"] = model(ids[:, :N]).softmax(-1).gather(-1, first0)[..., 0].mean(0)  # (n,)
        w1 = head_writes(model.layers[1], stream1, mask=torch.ones(length, length, dtype=torch.bool).tril())[0]
        direct = w1[:, :, window] @ model.unembed.weight.T  # (B, h, 4, |V|): each head's direct logits
        m["direct"] = torch.stack([direct[:, h].gather(-1, early).mean((0, 1)) for h in range(2)])  # (h, 4)
    m["write_ratio"] = (writes[0] / writes[1:N].mean()).item()
    # the first-half loss at positions 3 .. 6, section 8's window (over 1 .. 10 the bet on token 0
    # at 7 .. 10 mixed in: an outside reader found zeroing the sink raising it there)
    m["first_loss"] = per_position_loss(model, ids)[window].mean().item()
    m["first_loss_off"] = per_position_loss(model, ids, ablate=[(1, sink)])[window].mean().item()
    m["first_loss_other_off"] = per_position_loss(model, ids, ablate=[(1, 1 - sink)])[window].mean().item()
    m["on_early"] = pats[1, :, window, :4].mean(1)  # (h, 4): layer-1 attention on tokens 0..3, queries 3 .. 6
    with torch.no_grad():
        m["p_token0_sink_off"] = model(ids[:, :-1], ablate=((1, sink),)).softmax(-1)[
            :, 1:N - 1].gather(-1, token0).mean().item()
    _measured[seed, name] = m
    return m


@pytest.fixture(scope="module")
def random_scores():
    """Composition scores of 200 random pairs shaped like the heads' circuits (d_model 64, d_k 32,
    the same in every run here), the notebook's baseline."""
    return random_composition_scores(64, 32, samples=200, generator=torch.Generator().manual_seed(0))


@pytest.mark.parametrize("vocab", [64, 32])
@pytest.mark.parametrize("seed", SEEDS, ids=seed_id)
def test_one_token_reference_and_the_whole_context_copier(seed, vocab):
    """Section 1: a perfect one-token induction head loses more than 0 but under a tenth of
    chance; a copier that compares the whole context loses under a fifth of that (so the one-token
    loss is a reference, not a floor). Section 8: fewer than 20 % of the first-half queries 1..11
    hold a token that occurred earlier. On the evaluation batch of every run (|V| = 64 and 32)."""
    ids = _eval_ids(seed, vocab)
    floor = perfect_induction_loss(ids, N).mean().item()
    assert 0 < floor < math.log(vocab) / 10
    assert prefix_match_loss(ids, N).mean().item() < floor / 5
    seen = (ids[:, :N, None] == ids[:, None, :N]).tril(-1).any(-1)  # (B, n): token seen before?
    assert seen[:, 1:].float().mean().item() < 0.2


@pytest.mark.parametrize("seed, name", RUNS, ids=IDS)
def test_a_slow_start_then_a_steep_fall(seed, name):
    """Section 3: the repeated-half loss first falls below half of chance between steps 120 and
    640, and goes from 75 % of chance to 30 % within 200 steps; it ends above the one-token floor.
    The first half is above chance at every evaluation, peaks more than 0.3 nats above it within
    100 steps of the fall, and ends below its peak, at chance or up to 0.5 nats above it."""
    m = _measure(seed, name)
    assert 120 <= m["phase"] <= 640
    assert m["end"] - m["start"] <= 200
    assert m["hist"]["repeated_half"][-1] > m["floor"]
    first, steps, chance = m["hist"]["first_half"], m["hist"]["step"], m["chance"]
    peak = max(first)
    assert peak > chance + 0.3 and abs(steps[first.index(peak)] - m["phase"]) <= 100
    assert chance <= first[-1] < min(peak, chance + 0.5) and min(first) > chance


@pytest.mark.parametrize("seed, name", RUNS + LONG_RUNS, ids=IDS + LONG_IDS)
def test_loss_per_position_before_and_after(seed, name):
    """100 steps before the fall, the repeated-half positions' mean is below chance, and in the
    800-step runs every one of them is above half of chance (re-scoped: held-out seed 6 at 1600
    steps has one at 1.68 nats); at the end every one is below 1 nat, and position 11 above 60 % of
    chance (in all runs but held-out seed 6 after 3200 steps, 53 %, added after an outside reader
    found it: test_position_11_after_3200_steps)."""
    m = _measure(seed, name)
    early, late, chance = m["early"], m["late"], m["chance"]
    assert early[N:].mean() < chance
    if name != "1600 steps":  # held-out seed 6 at 1600 steps has one position at 1.68 nats
        assert early[N:].min() > chance / 2
    assert late[N:].max() < 1.0
    if (seed, name) != (6, "3200 steps"):
        assert late[N - 1] > 0.6 * chance


def test_position_11_after_3200_steps():
    """Position 11 (its next token starts the repeat, always token 0) stays above 60 % of chance in
    every run but seed 6 after 3200 steps (2.198 nats, 53 %): the notebook says the task does not
    force it, since a model can bet on token 0 where a training period could end."""
    low = {seed: _measure(seed, name)["late"][N - 1].item() / _measure(seed, name)["chance"]
           for seed, name in LONG_RUNS}
    assert [s for s in low if low[s] <= 0.6] == [6] and round(low[6], 2) == 0.53


@pytest.mark.parametrize("seed, name", RUNS + LONG_RUNS, ids=IDS + LONG_IDS)
def test_one_layer_model_does_not_get_there(seed, name):
    """Trained the same way, a 1-layer model ends above half of chance; the 2-layer model below a
    quarter of it (the control for "it takes two layers")."""
    m = _measure(seed, name)
    assert m["final1"] > m["chance"] / 2 and m["hist"]["repeated_half"][-1] < m["chance"] / 4


@pytest.mark.parametrize("seed, name", RUNS + LONG_RUNS, ids=IDS + LONG_IDS)
def test_one_layer_model_guesses_the_period_from_positions(seed, name):
    """Section 3's control: on random sequences with no repeated half, the 1-layer model's most
    induction-like head still puts more than twice an even spread's weight on t - n + 1."""
    m = _measure(seed, name)
    even = sum(1 / (t + 1) for t in range(N, 2 * N)) / N
    assert m["ind1_random"].max() > 2 * even


@pytest.mark.parametrize("seed, name", RUNS, ids=IDS)
def test_one_layer_model_puts_most_of_its_induction_weight_there_by_position(seed, name):
    """Section 3's "most of its weight on t - n + 1 comes from positions": for the same head (the
    1-layer model's most induction-like one on repeated sequences), the weight on t - n + 1 on random
    sequences is more than half of that on repeated ones. (Measured before writing: seed 0 0.21/0.28,
    seed 5 0.16/0.19, seed 9 0.17/0.24, seed 12 0.18/0.22, 1600 steps at seed 0 0.29/0.42; after
    3200 steps at seed 0 only 0.19/0.47.) Held-out seed 7 at 1600 steps broke it (0.14/0.36, 40 %),
    so the prose claims it for the 800-step runs and |V| = 32, and names the 1600- and 3200-step runs
    where it failed; at 1600 steps it is checked here as "all runs but one"."""
    m = _measure(seed, name)
    best = int(m["ind1"].argmax())
    if name != "1600 steps":
        assert m["ind1_random"][best] / m["ind1"][best] > 0.5


def test_one_layer_model_by_position_at_1600_steps_in_all_runs_but_one():
    """The 1600-step part of the test above: held-out seed 7 gives 40 %, the other five runs more
    than half."""
    shares = [(_measure(seed, name)["ind1_random"] / _measure(seed, name)["ind1"])[
        int(_measure(seed, name)["ind1"].argmax())].item() for seed, name in RUNS if name == "1600 steps"]
    assert sum(s <= 0.5 for s in shares) <= 1


@pytest.mark.parametrize("seed, name", RUNS + LONG_RUNS, ids=IDS + LONG_IDS)
def test_in_context_learning_score(seed, name):
    """The in-context learning score (loss at position 20 minus position 2) starts within 0.5
    nats of 0 and ends below -3. (The notebook claims no timing for it: on this data it moves
    with the repeated-half loss by construction, and its half-way point strayed 200 steps from
    the fall at |V| = 32, seed 3.)"""
    icl = _measure(seed, name)["icl"]
    assert abs(icl[0]) < 0.5 and icl[-1] < -3


@pytest.mark.parametrize("seed, name", RUNS + LONG_RUNS, ids=IDS + LONG_IDS)
def test_scores_find_a_previous_token_head_and_two_induction_heads(seed, name):
    """Layer 0 has a head with previous-token score above 0.4; both heads of layer 1 have induction
    scores above 0.6, no head of layer 0 above 0.3."""
    m = _measure(seed, name)
    assert m["prev"][0, m["p"]] > 0.4
    assert (m["ind"][1] > 0.6).all() and (m["ind"][0] < 0.3).all()


@pytest.mark.parametrize("seed, name", RUNS, ids=IDS)
def test_previous_token_head_works_by_position(seed, name):
    """The previous-token head looks at t - 1 from first-half queries (mean >= 0.95) and mostly not
    from repeated-half ones (mean < 0.3); it still does from query 12 (above 0.5), and from
    position 16 on never with 0.2. (Query 13 was in the claim, written from seeds 0-4; held-out
    seed 8 gives it 0.01, so the notebook now says that from 13 to 15 it varies between runs.)"""
    m = _measure(seed, name)
    by_query = m["by_query"]  # index i: query t = i + 1
    assert by_query[:N - 1].mean() >= 0.95 and by_query[N - 1:].mean() < 0.3
    assert by_query[11] > 0.5 and by_query[15:].max() < 0.2


def test_position_not_repetition_across_runs():
    """Section 4's control, re-scoped after the held-out seeds: on random sequences that do not
    repeat, the previous-token head's weight on t - 1 is the same as on repeated ones within 0.05
    at every position in all runs but one (held-out seed 7 at 800 steps: 0.054). (Written from
    seeds 0-4 as "within 0.05 in every run"; seed 7 broke it, and the prose now says "all but one".)"""
    gaps = [(_measure(seed, name)["by_query"] - _measure(seed, name)["no_repeat"]).abs().max().item()
            for seed, name in RUNS]
    assert sum(g >= 0.05 for g in gaps) <= 1


@pytest.mark.parametrize("seed, name", RUNS + LONG_RUNS, ids=IDS + LONG_IDS)
def test_heads_form_at_the_fall(seed, name):
    """100 steps before the fall no induction score reaches 0.4, and the best induction score
    crosses 0.5 within 100 steps of it; the best previous-token score is below 0.2 100 steps
    before and more than twice that 100 steps after."""
    m = _measure(seed, name)
    steps, k = m["hist"]["step"], m["k"]
    ind_t = [s[1].max().item() for s in m["hist"]["induction"]]
    prev_t = [s[0].max().item() for s in m["hist"]["previous"]]
    i0, i1 = max(k - 5, 0), min(k + 5, len(steps) - 1)
    rise = next(s for s, v in zip(steps, ind_t, strict=True) if v > 0.5)
    assert ind_t[i0] < 0.4 and abs(rise - m["phase"]) <= 100
    assert prev_t[i0] < 0.2 and prev_t[i1] > 2 * prev_t[i0]


@pytest.mark.parametrize("seed, name", RUNS + LONG_RUNS, ids=IDS + LONG_IDS)
def test_induction_heads_copy(seed, name):
    """Both induction heads' full OV circuits copy: at least 95 % of tokens have their own logit
    largest, eigenvalue positivity above 0.99 (in every run but held-out seed 6 after 3200 steps,
    added after an outside reader found it at 0.9867: test_eigenvalue_positivity_after_3200_steps)."""
    m = _measure(seed, name)
    assert min(copying_share(c) for c in m["ov"]) >= 0.95
    if (seed, name) != (6, "3200 steps"):
        assert min(eigenvalue_positivity(c) for c in m["ov"]) > 0.99


def test_eigenvalue_positivity_after_3200_steps():
    """Section 5's scope: after 3200 steps both induction heads' eigenvalue positivity is above 0.99
    in all runs but seed 6, where one head has 0.9867 (still above 0.95)."""
    low = {seed: min(eigenvalue_positivity(c) for c in _measure(seed, name)["ov"]) for seed, name in LONG_RUNS}
    assert [s for s in low if low[s] <= 0.99] == [6] and round(low[6], 4) == 0.9867


@pytest.mark.parametrize("seed, name", RUNS + LONG_RUNS, ids=IDS + LONG_IDS)
def test_one_layer_heads_copy(seed, name):
    """Exercise 3a's answer, True: every head of the 1-layer model is a copier by the checker's
    measure (own logit largest for most tokens, eigenvalue positivity above 0.5)."""
    for circuit in _measure(seed, name)["ov1"]:
        assert copying_share(circuit) > 0.5 and eigenvalue_positivity(circuit) > 0.5


def test_previous_token_head_ov_circuit_varies_between_runs():
    """The solutions' statement: how copy-like the previous-token head's OV circuit comes out
    varies from run to run (nothing in training pushes it either way): across the fifteen runs its
    eigenvalue positivity is above 0.8 in some and below 0.1 in others."""
    positivity = [eigenvalue_positivity(_measure(seed, name)["ov_prev"]) for seed, name in RUNS]
    assert max(positivity) > 0.8 and min(positivity) < 0.1


@pytest.mark.parametrize("seed, name", RUNS, ids=IDS)
def test_previous_token_head_composes_with_the_keys(seed, name, random_scores):
    """The previous-token head's K-composition with both layer-1 heads is above the 95th percentile
    of random pairs of the same shapes; its Q- and V-composition (the control: the paths it should
    not use) stay below the random mean. Through the keys, every query token scores highest the key
    whose previous token is itself, in both heads."""
    m = _measure(seed, name)
    comp, p = m["comp"], m["p"]
    assert (comp["keys"][p] > random_scores.quantile(0.95)).all()  # |V| does not change the shapes
    assert max(comp["queries"][p].max(), comp["values"][p].max()) < random_scores.mean()
    assert m["k_circuit"] == [1.0, 1.0]


@pytest.mark.parametrize("seed, name", RUNS, ids=IDS)
def test_ablations(seed, name):
    """Zeroing both induction heads brings the loss above 80 % of chance; zeroing the
    previous-token head raises it by more than 0.5 nats, the other layer-0 head by less than 0.3
    (so in these runs the head with the highest previous-token score is the one exercise 2 asks
    for; at seed 13 it is not, test_seed_13_variant...); each
    induction head alone is worth more than 0.3 nats, and the other one on top more than 0.5."""
    m = _measure(seed, name)
    base, ablated, both, p = m["base"], m["ablated"], m["both"], m["p"]
    assert both > 0.8 * m["chance"]
    assert ablated[(0, p)] > base + 0.5 and ablated[(0, 1 - p)] < base + 0.3
    assert all(base + 0.3 < ablated[(1, h)] < both - 0.5 for h in (0, 1))


@pytest.mark.parametrize("seed, name", RUNS + LONG_RUNS, ids=IDS + LONG_IDS)
def test_exercise_2_rule_both_scores_pick_the_costliest_layer0_head(seed, name):
    """Exercise 2's solution: the layer-0 head with the highest of its two scores (previous-token,
    duplicate-token) is the one whose zeroing raises the repeated-half loss the most. (Seed 13 is
    the run where the previous-token score alone picks the wrong head: test_seed_13_variant.)"""
    m = _measure(seed, name)
    rule = int(torch.maximum(m["prev"][0], m["dup"]).argmax())
    ablated = m["ablated"]
    assert ablated[(0, rule)] > ablated[(0, 1 - rule)]


def test_in_some_runs_the_other_layer0_head_shares_the_previous_token_job():
    """Section 7's remark: in some runs the other layer-0 head has a real previous-token score
    (above 0.25) and zeroing the main head costs much less (under half of the median cost over the
    runs), though more than 0.5 nats (test_ablations)."""
    runs = [_measure(seed, name) for seed, name in RUNS]
    costs = [m["ablated"][(0, m["p"])] - m["base"] for m in runs]
    median = sorted(costs)[len(costs) // 2]
    shared = [m for m, c in zip(runs, costs, strict=True)
              if m["prev"][0, 1 - m["p"]] > 0.25 and c < median / 2]
    assert shared


@pytest.mark.parametrize("seed, name", RUNS, ids=IDS)
def test_previous_token_head_acts_through_first_half_keys(seed, name):
    """Removing the previous-token head's write from layer 1's keys alone costs at least as much as
    removing it everywhere; the controls, from the queries, the values or the logits alone, cost
    less than 0.1 nats (from the values alone it lowers the loss). The explanation of the excess,
    "it goes through the values": from keys and values together it costs within 0.1 nats of
    everywhere. At first-half keys it costs at least 90 % of the keys-only cost; at repeated-half
    keys (the control for "its output is read only at first-half keys") less than 0.1 nats."""
    cost = _measure(seed, name)["cost"]
    assert cost["keys"] >= cost["everywhere"]
    assert max(abs(cost[path]) for path in ("queries", "values", "logits")) < 0.1
    assert cost["values"] < 0
    assert abs(cost["keys and values"] - cost["everywhere"]) < 0.1
    assert cost["keys first"] >= 0.9 * cost["keys"] and abs(cost["keys second"]) < 0.1


@pytest.mark.parametrize("seed, name", RUNS, ids=IDS)
def test_attention_sink(seed, name):
    """The layer-1 head that parks most puts more than 0.35 of its first-half attention (queries
    1..6, before any training period can end; an even spread gives 0.27) on position 0, and less than 0.1 in the repeated half; what
    it writes from position 0 is below 0.7 of the average elsewhere; zeroing the sink head lowers
    the first-half loss at positions 3..6, and so, after 800 steps and at |V| = 32, does zeroing the
    other layer-1 head (the control that keeps the notebook from claiming the sink's cost; after
    1600 steps it raised the loss in five runs of six: test_zeroing_the_other_head_after_longer_training).
    The nudge towards token 0: test_parking_nudges...
    """
    m = _measure(seed, name)
    assert m["parked"][m["sink"]] > 0.35 and m["later"] < 0.1
    assert m["write_ratio"] < 0.7
    assert m["first_loss_off"] < m["first_loss"]
    if name != "1600 steps":  # after 1600 steps zeroing the other head raised it at seeds 1, 2, 7
        assert m["first_loss_other_off"] < m["first_loss"]


@pytest.mark.parametrize("seed, name", RUNS + LONG_RUNS, ids=IDS + LONG_IDS)
def test_parking_nudges_the_predictions_towards_token_0(seed, name):
    """Section 8's "the nudge towards token 0 comes from layer 1's parking", with the control an
    outside reader asked for: copying alone nudges the predictions towards every earlier token, so
    token 0 is compared with tokens 1-3, at first-half positions 3..6. There all four are in the
    context, and no training period (8 to 16) makes token 0 the next token; from position 7 on
    n = t + 1 does, so a bet on token 0 there is rewarded by training, parking or not (a second
    reader found the old window, 3..10, mixing the two: test_token_0_position_by_position).
    Token 0 more than 1.5 times the mean of tokens 1-3 (|V| = 64); with both layer-1 heads zeroed
    (the control), less than 1.2 times (every run). The thresholds, kept from the old window
    (written from seeds 0-4), were checked at 3..6 on seeds 0-4 at 800 steps (2.26, 2.23, 2.65,
    2.42, 1.96; zeroed 0.87 to 0.94), then unchanged on held-out seeds 5-9 (2.46, 2.17, 3.06, 2.01,
    2.49; zeroed at most 1.04), 1600 steps (2.07 to 3.24; zeroed at most 1.13), 3200 steps (1.97 to
    4.13; zeroed at most 1.18, seed 6) and |V| = 32 (zeroed at most 1.05; the lead fails at seeds 0,
    3 and 8: test_parking_nudge_at_vocab_32_in_seven_runs_of_ten). Each of tokens 1-3 gets more than
    1/|V| after 800 steps and at |V| = 32; after 1600 and 3200 steps not in every run
    (test_tokens_1_to_3_at_about_even_after_longer_training)."""
    m = _measure(seed, name)
    p, off = m["p_early"], m["p_early_off"]  # (4,): tokens 0..3
    if name in ("800 steps", "|V| = 32"):
        assert p[1:].min() > 1 / m["vocab"]
    if name != "|V| = 32":
        assert p[0] / p[1:].mean() > 1.5
    assert off[0] / off[1:].mean() < 1.2


def test_parking_nudge_at_vocab_32_in_seven_runs_of_ten():
    """The |V| = 32 part of the test above, at seeds 0-9: token 0 over the mean of tokens 1-3 at
    positions 3..6 is above 1.5 in all runs but seeds 0 (1.30), 3 (1.18) and 8 (1.48); with both
    layer-1 heads zeroed it is below 1.2 in all ten (test above). (Over the old window 3..10 the
    zeroed ratio was 1.31 at seed 3 and 1.28 at seed 8: the part that survived without layer 1 was
    the bet of positions 7..10.)"""
    lead = {}
    for seed in V32_SEEDS:
        m = _measure(seed, "|V| = 32")
        lead[seed] = (m["p_early"][0] / m["p_early"][1:].mean()).item()
    assert [s for s in lead if lead[s] <= 1.5] == [0, 3, 8]
    assert [round(lead[s], 2) for s in (0, 3, 8)] == [1.30, 1.18, 1.48]


def test_tokens_1_to_3_at_about_even_after_longer_training():
    """Section 8: at positions 3..6 the least of tokens 1-3 gets less than 1/|V| at 1600 steps in
    seeds 2 and 7, and at 3200 steps in seeds 1, 8 and 9; after 3200 steps it gets 0.98 to 1.19
    times 1/|V| in the eight runs."""
    least = {(seed, name): (_measure(seed, name)["p_early"][1:].min() * _measure(seed, name)["vocab"]).item()
             for seed, name in RUNS + LONG_RUNS if name in ("1600 steps", "3200 steps")}
    assert [r for r in least if least[r] <= 1] == [(2, "1600 steps"), (7, "1600 steps"), (1, "3200 steps"),
                                                   (8, "3200 steps"), (9, "3200 steps")]
    long = [v for (_, name), v in least.items() if name == "3200 steps"]
    assert (round(min(long), 2), round(max(long), 2)) == (0.98, 1.19)


@pytest.mark.parametrize("seed, name", RUNS + LONG_RUNS, ids=IDS + LONG_IDS)
def test_token_0_position_by_position(seed, name):
    """Section 8's per-position view: somewhere from position 7 to n - 2 (where a training period
    can end, so that token 0 is the next token) token 0 gets more than at any of positions 3..6;
    after 800 and 1600 steps and at |V| = 32 at position 7 itself (the shortest period), after
    3200 steps not in every run (test_token_0_at_position_7_after_3200_steps)."""
    p0 = _measure(seed, name)["p0_by_position"]  # (n,)
    assert p0[7:N - 1].max() > p0[3:7].max()
    if name != "3200 steps":
        assert p0[7] > p0[3:7].max()


def test_token_0_at_position_7_after_3200_steps():
    """After 3200 steps token 0 gets more at position 7 than at any of 3..6 in four runs of eight
    (seeds 0, 6, 8, 10); at seed 7 token 0's most from 7 to n - 2 is above its most at 3..6 by less
    than 0.1/|V| (test_token_0_position_by_position: above it in every run)."""
    runs = {seed: _measure(seed, name)["p0_by_position"] for seed, name in LONG_RUNS}
    assert [s for s, p0 in runs.items() if p0[7] > p0[3:7].max()] == [0, 6, 8, 10]
    assert (runs[7][7:N - 1].max() - runs[7][3:7].max()) * 64 < 0.1


@pytest.mark.parametrize("seed, name", RUNS + LONG_RUNS, ids=IDS + LONG_IDS)
def test_sink_head_writes_towards_token_0(seed, name):
    """Section 8's "its write nudges the first-half predictions towards token 0", tested directly
    (an outside reader found that zeroing the sink head alone could raise token 0's probability,
    over the old window 3..10): at first-half positions 3..6, what the sink head adds to the logits
    directly (its write times the unembedding) is positive on token 0 and larger there than on each
    of tokens 1-3. A comparison, no threshold; it holds in every run. (With the sink chosen by its
    parking over queries 1..11, which mixes in the bet on token 0 from 7 on, |V| = 32 at seed 8
    picked head 0, 0.48 against 0.47, and failed there: token 0 -0.010; over 1..6 head 1 parks
    most, 0.67 against 0.37, and adds +0.537 to token 0: test_the_sink_over_queries_1_to_6.)"""
    direct = _measure(seed, name)["direct"]  # (h, 4): each layer-1 head's direct logit on tokens 0..3
    sink = _measure(seed, name)["sink"]
    assert direct[sink, 0] > 0 and direct[sink, 0] > direct[sink, 1:].max()


def test_the_sink_over_queries_1_to_6():
    """Section 8 measures parking over queries 1..6 (an outside reader found the second head's
    parking over 1..11 mostly the bet on token 0 at 7..11 after 1600 and 3200 steps). At |V| = 32,
    seed 8, that makes head (1, 1) the sink (0.67 against 0.37), not head (1, 0) as over 1..11."""
    m = _measure(8, "|V| = 32")
    assert m["sink"] == 1 and [round(v, 2) for v in m["parked"].tolist()] == [0.37, 0.67]
    assert round(m["direct"][1, 0].item(), 3) == 0.537


@pytest.mark.parametrize("seed, name", RUNS + LONG_RUNS, ids=IDS + LONG_IDS)
def test_zeroing_the_sink_head_alone_lowers_token_0(seed, name):
    """Section 8: zeroing only the sink head takes token 0's probability at positions 3..6 down, in
    every run. (Over the old window 3..10 it raised it in two runs, 1600 steps seed 5 and 3200 steps
    seed 1: there the other layer-1 head bets on token 0 from position 7 on.)"""
    m = _measure(seed, name)
    assert m["p_early_sink_off"][0] < m["p_early"][0]


@pytest.mark.parametrize("seed, name", LONG_RUNS, ids=LONG_IDS)
def test_attention_sink_after_3200_steps(seed, name):
    """Section 8 after 3200 steps (seeds 0, 1, held-out 5, 6, 7, 8, and 9, 10). What holds: a head parks more
    than 0.35 on position 0 in the first half, its write from position 0 is below 0.7 of the average
    (measured 0.20, 0.20, 0.28, 0.29, 0.43), zeroing it lowers the first-half loss at positions 3..6
    (over 1..10, the old window, by 0.001 nats only at seed 6, and an outside reader found it rising
    at seed 11: there the bet on token 0 at 7..10 rose more than 3..6 fell); (less than 0.1
    in the repeated half held in all but seed 8, 0.113: test_after_3200_steps_across_runs); the nudge towards token 0 (test_parking_nudges...). What fails in at least one
    run (so the notebook says it is about 800 steps): zeroing the other layer-1 head also lowers the
    first-half loss (it raises it in all eight runs; seed 7: intact 4.23, sink zeroed 4.18, other
    head zeroed 4.72 nats), and token 0 below 1.5/|V| with both layer-1 heads zeroed (seeds 5 and 7: 1.51/|V| and
    1.63/|V|, more than with the sink head alone zeroed, 1.01/|V| at seed 7)."""
    m = _measure(seed, name)
    assert m["parked"][m["sink"]] > 0.35
    assert m["write_ratio"] < 0.7
    assert m["first_loss_off"] < m["first_loss"]


def test_zeroing_the_other_head_after_longer_training():
    """What the notebook says of 1600 and 3200 steps in section 8: zeroing the layer-1 head that is
    not the sink raises the first-half loss at positions 3..6 in five runs of six after 1600 steps
    (all but seed 5) and in all eight after 3200 steps (seed 7: intact 4.23, sink zeroed 4.18, other
    head zeroed 4.72 nats)."""
    raised = [(seed, name) for seed, name in RUNS + LONG_RUNS
              if _measure(seed, name)["first_loss_other_off"] > _measure(seed, name)["first_loss"]]
    assert raised == [(s, "1600 steps") for s in (0, 1, 2, 6, 7)] + LONG_RUNS
    m = _measure(7, "3200 steps")
    assert [round(m[k], 2) for k in ("first_loss", "first_loss_off", "first_loss_other_off")] == [4.23, 4.18, 4.72]


def test_the_other_head_within_a_factor_of_2_of_an_even_spread():
    """Section 8, "in this run the other head gives each of tokens 1 to 3 about what an even spread
    would": at queries 3..6 the non-sink layer-1 head's weight on each of tokens 1-3 is within a
    factor of 2 of an even spread's (0.190) in the notebook's run (seed 0, 800 steps). Not in every
    run (an outside reader found 0.024 and 0.008 after 3200 steps at seeds 11 and 12): written
    from seeds 0-4, then counted on all the runs; it held after 800 steps at seeds 0, 1, 3, 4, 6, 8
    (seed 2: 0.496 of even), at |V| = 32 in all but seed 7, and after 1600 and 3200 steps
    in no run (the least of the three gets 0.44 of even or less)."""
    even = sum(1 / (t + 1) for t in range(3, 7)) / 4
    held = []
    for seed, name in RUNS + LONG_RUNS:
        m = _measure(seed, name)
        other = m["on_early"][1 - m["sink"], 1:] / even  # (3,)
        if other.min() > 0.5 and other.max() < 2:
            held.append((seed, name))
    assert (0, "800 steps") in held
    assert held == ([(s, "800 steps") for s in (0, 1, 3, 4, 6, 8)]
                    + [(s, "|V| = 32") for s in (0, 1, 2, 3, 4, 5, 6, 8, 9)])


def test_tokens_1_to_3_with_layer_1_zeroed():
    """Section 8: with both layer-1 heads zeroed each of tokens 1-3 gets less at positions 3..6 than
    intact, as copying would, after 800 steps (seeds 0-9) and at |V| = 32 (seeds 0-9); after 1600
    steps only in two runs of six (seeds 5, 6), after 3200 steps in one of eight (seed 6)."""
    down = [(seed, name) for seed, name in RUNS + LONG_RUNS
            if (_measure(seed, name)["p_early_off"][1:] < _measure(seed, name)["p_early"][1:]).all()]
    assert down == ([(s, "800 steps") for s in SEEDS] + [(5, "1600 steps"), (6, "1600 steps")]
                    + [(s, "|V| = 32") for s in V32_SEEDS] + [(6, "3200 steps")])


def test_token_0_at_position_6_against_3_to_5():
    """Section 8, "a model can start its bet on token 0 a position early": token 0's probability at
    position 6 is at most 1.1 times its most at positions 3..5 (written from seeds 0-4 at 800 steps:
    0.94, 1.06, 1.05, 0.90, 0.89) in every run but two, held-out seed 9 after 800 steps (1.26) and
    held-out seed 5 at |V| = 32 (1.34); an outside reader found 2.1 after 1600 steps at seed 9."""
    ratio = {(seed, name): (lambda p0: (p0[6] / p0[3:6].max()).item())(_measure(seed, name)["p0_by_position"])
             for seed, name in RUNS + LONG_RUNS}
    assert [r for r, v in ratio.items() if v > 1.1] == [(9, "800 steps"), (5, "|V| = 32")]
    assert [round(ratio[r], 2) for r in ((9, "800 steps"), (5, "|V| = 32"))] == [1.26, 1.34]


def test_which_head_is_the_sink_varies_between_runs():
    """Section 8: which layer-1 head parks, and how much, varies between runs: each head is the
    sink in some run, and in some run both heads park more than 0.3 on position 0."""
    runs = [_measure(seed, name) for seed, name in RUNS]
    assert {m["sink"] for m in runs} == {0, 1}
    assert any(m["parked"].min() > 0.3 for m in runs)


@pytest.mark.parametrize("seed", VARIATION_SEEDS, ids=seed_id)
def test_a_narrower_model_does_not_find_the_circuit_in_800_steps(seed):
    """The "Try it" with d_model = 32: in 800 steps the repeated half never falls below 30 % of
    chance (the notebook stops there with a message) and ends above 75 % of it."""
    _, hist = train_induction_model(num_layers=2, steps=800, seed=seed, d_model=32, cache=True)
    rep, chance = hist["repeated_half"], hist["chance"]
    assert min(rep) > 0.3 * chance and rep[-1] > 0.75 * chance


def test_seed_13_variant_duplicate_token_head_feeds_the_queries(random_scores):
    """Section 7's last note (seed 13 at the stored settings, found by an outside reader at seed 13;
    seeds 0-9 all build the previous-token circuit, test_scores_find_a_previous_token_head...): no
    layer-0 head has a previous-token score of 0.4; one puts more than 0.8 of its repeated-half
    weight on t - n (duplicate-token); removing its write from layer 1's queries costs more than 2
    nats, from the keys less than 0.3 (the control); its Q-composition with both layer-1 heads is
    above the random pairs' 95th percentile. Exercise 2 at SEED = 12 uses this model as model_b: the
    rule "highest of the two scores" picks the costliest head, the previous-token score alone does
    not. (Measured before writing: scores 0.00/0.24 and 0.88; queries +3.07, keys +0.10, everywhere
    +3.18; Q-composition 0.215, 0.231 against 0.132.)"""
    m = _measure(13, "800 steps")
    assert (m["prev"][0] < 0.4).all()
    d = int(m["dup"].argmax())
    assert m["dup"][d] > 0.8
    model, _ = _train(13, "800 steps")
    ids = _eval_ids(13, 64)
    cost = {into: per_position_loss(model, ids, ablate=[(0, d)], into=(into,))[N:].mean().item() - m["base"]
            for into in ("queries", "keys")}
    assert cost["queries"] > 2 and cost["keys"] < 0.3
    assert (composition_scores(model, "queries")[d] > random_scores.quantile(0.95)).all()
    rule = int(torch.maximum(m["prev"][0], m["dup"]).argmax())
    assert m["ablated"][(0, rule)] > m["ablated"][(0, 1 - rule)]
    assert m["ablated"][(0, m["p"])] < m["ablated"][(0, 1 - m["p"])]  # the previous-token score alone misleads


@pytest.mark.parametrize("seed, name", LONG_RUNS, ids=LONG_IDS)
def test_after_3200_steps(seed, name, random_scores):
    """The "Try it" STEPS = 3200, at LONG_SEEDS (0, 1 and held-out 5 to 10; besides the tests above
    that run there too). What still holds: the fall between steps 120 and 640, from 75 % to 30 % of chance
    within 200 steps; the previous-token head looks at t - 1 from query 12 (above 0.5), and its
    weights are the same without repetition (within 0.05);
    Q- and V-composition below the random mean, and the token-level K-circuit table peaks on its
    diagonal; without both induction heads the loss is above 80 % of chance, without the
    previous-token head more than 0.5 nats higher; removing its write from layer 1's keys alone
    costs more than 2 nats, at least 90 % of that at first-half keys and less than 0.1 at
    repeated-half keys. What changes, the first-half mean >= 0.95 and the K-composition score among
    them: test_after_3200_steps_across_runs. Measured at these seeds and failing
    in at least one (so left to 800 and 1600 steps): ends above the one-token head (seed 0: 0.122 vs
    0.136), the other layer-0 head under 0.3 and each induction head alone worth 0.3 nats (seed 0:
    +0.46, +0.25), keys alone at least everywhere (seeds 0, 5, 7, 8) and keys-and-values within
    0.1 (seeds 0, 5, 7), queries alone under 0.1 (seed 0: +0.19), values alone lowering the loss
    (seeds 5, 7, 8), the 1-layer model's same-head ratio (seed 0: 0.40); section 8's: test_attention_sink_after_3200_steps.
    (Seed 8 was added after an outside reader found it breaking four statements written from the
    other four: test_after_3200_steps_across_runs.)"""
    m = _measure(seed, name)
    assert 120 <= m["phase"] <= 640 and m["end"] - m["start"] <= 200
    by_query, cost, p = m["by_query"], m["cost"], m["p"]
    assert by_query[11] > 0.5
    assert (by_query - m["no_repeat"]).abs().max() < 0.05
    assert max(m["comp"]["queries"][p].max(), m["comp"]["values"][p].max()) < random_scores.mean()
    assert m["k_circuit"] == [1.0, 1.0]
    assert m["both"] > 0.8 * m["chance"] and m["ablated"][(0, p)] > m["base"] + 0.5
    assert cost["keys"] > 2 and cost["keys first"] >= 0.9 * cost["keys"] and abs(cost["keys second"]) < 0.1


def test_after_3200_steps_across_runs(random_scores):
    """What the notebook says of its eight 3200-step runs (seeds 0, 1 and held-out 5, 7, 8, then 9
    and 10, then 6), where a statement of the 800- and 1600-step runs holds in some of them only.
    Seed 8 was added after an outside reader found it breaking statements written from the other
    four, seeds 9 and 10 after another found them going against the counts, seed 6 after a third;
    the statements are re-scoped, not re-tuned. Section 4: the previous-token head's first-half
    mean is at least 0.95 in seven runs, 0.947 at seed 8; from the repeated half it looks back with
    a mean of 0.24 to 0.94 (above 0.3 in five runs; "mostly not", below 0.3, holds at seeds 6, 8
    and 10). Section 6: at least one layer-1 head's K-composition score is at or below the random
    pairs' 95th percentile in three runs, just above it (by less than 0.001) at seed 7, and at
    seeds 6, 8, 9 and 10 both are above it (0.1457, 0.1461; 0.1377, 0.1740; 0.1443, 0.1359; 0.1767,
    0.1371 against 0.1316). Section 7: removing the head everywhere costs more than from the keys
    alone in five runs (all but seeds 1, 6 and 9; seed 0: +2.71 against +3.88; seed 10 by 0.004:
    +3.2785 against +3.2823); from the values alone it lowers the loss in four (seeds 0, 1, 6 and 9)
    and raises it in four. Section 8: the sink head puts less than 0.1 on position 0 from the
    repeated half in seven runs, 0.113 at seed 8; at positions 3..6 with both layer-1 heads zeroed,
    token 1 gets more than intact in six runs (all but seeds 6 and 10), so there the control moves
    the comparison tokens too."""
    runs = {seed: _measure(seed, name) for seed, name in LONG_RUNS}
    first = {s: m["by_query"][:N - 1].mean().item() for s, m in runs.items()}
    assert [s for s in first if first[s] < 0.95] == [8] and round(first[8], 3) == 0.947
    second = {s: m["by_query"][N - 1:].mean().item() for s, m in runs.items()}
    assert (round(min(second.values()), 2), round(max(second.values()), 2)) == (0.24, 0.94)
    assert [s for s in second if second[s] < 0.3] == [6, 8, 10]
    q95 = random_scores.quantile(0.95).item()
    low = {s: m["comp"]["keys"][m["p"]].min().item() for s, m in runs.items()}
    assert [s for s in low if low[s] > q95] == [6, 7, 8, 9, 10] and low[7] < q95 + 0.001
    assert [round(runs[s]["comp"]["keys"][runs[s]["p"]].tolist()[h], 4) for s in (6, 8, 9, 10) for h in (0, 1)] == [
        0.1457, 0.1461, 0.1377, 0.1740, 0.1443, 0.1359, 0.1767, 0.1371]
    assert round(q95, 4) == 0.1316
    cost = {s: m["cost"] for s, m in runs.items()}
    assert [s for s in cost if cost[s]["keys"] >= cost[s]["everywhere"]] == [1, 6, 9]
    assert (round(cost[0]["keys"], 2), round(cost[0]["everywhere"], 2)) == (2.71, 3.88)
    assert (round(cost[10]["keys"], 4), round(cost[10]["everywhere"], 4)) == (3.2785, 3.2823)
    assert [s for s in cost if cost[s]["values"] < 0] == [0, 1, 6, 9]
    assert [s for s, m in runs.items() if m["later"] >= 0.1] == [8] and round(runs[8]["later"], 3) == 0.113
    assert [s for s, m in runs.items() if m["p_early_off"][1] > m["p_early"][1]] == [0, 1, 5, 7, 8, 9]
