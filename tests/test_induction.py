"""helpers.induction (notebook 14): data and the perfect-induction floor, the attention-only model,
ablation everywhere and on paths, scores, circuits and composition scores, training, plots and the
widget's view, plus bad arguments."""

import math

import matplotlib.pyplot as plt
import pytest
import torch

from helpers.attention import causal_mask
from helpers.data.repeated import (
    induction_lookups,
    perfect_induction_loss,
    prefix_match_loss,
    repeated_tokens,
)
from helpers.induction import (
    PATHS,
    AttentionOnlyTransformer,
    composition_score,
    composition_scores,
    copying_share,
    eigenvalue_positivity,
    full_ov_circuit,
    head_scores,
    head_writes,
    induction_score,
    ov_matrix,
    per_position_loss,
    previous_token_score,
    qk_matrix,
    random_composition_scores,
)
from helpers.plots import (
    composition_plot,
    icl_score_plot,
    loss_curves_plot,
    ov_circuits_plot,
    path_ablation_plot,
    per_position_plot,
    previous_token_by_position_plot,
    scores_over_training_plot,
    sink_plot,
)
from helpers.plots.induction import FLOOR_LABEL
from helpers.training import train_induction_model
from helpers.widgets import induction_view


def test_repeated_tokens_repeat_and_are_seeded():
    ids = repeated_tokens(4, 7, 10, torch.Generator().manual_seed(0))
    assert ids.shape == (4, 14) and ids.dtype == torch.long
    assert torch.equal(ids[:, :7], ids[:, 7:])
    assert ids.min() >= 0 and ids.max() < 10
    assert torch.equal(ids, repeated_tokens(4, 7, 10, torch.Generator().manual_seed(0)))


@pytest.mark.parametrize("args, word", [((0, 5, 10), "batch_size"), ((2, 1, 10), "n"),
                                        ((2, 5, 1), "vocab_size"), ((2, 2.5, 10), "n")])
def test_repeated_tokens_bad_arguments(args, word):
    with pytest.raises((ValueError, TypeError), match=word):
        repeated_tokens(*args)


def test_model_shapes_and_patterns():
    model = AttentionOnlyTransformer(20, d_model=16, num_heads=2, num_layers=2, max_len=12)
    logits = model(torch.randint(0, 20, (3, 9)))
    assert logits.shape == (3, 9, 20)
    pats = model.patterns()
    assert len(pats) == 2 and pats[0].shape == (3, 2, 9, 9)
    assert torch.allclose(pats[1].sum(-1), torch.ones(3, 2, 9))
    assert (pats[0].triu(1) == 0).all()  # causal


def test_ablation_equals_zeroing_the_heads_columns_of_w_o():
    torch.manual_seed(0)
    model = AttentionOnlyTransformer(20, d_model=16, num_heads=2, num_layers=2)
    ids = torch.randint(0, 20, (2, 10))
    ablated = model(ids, ablate=[(1, 0)])
    with torch.no_grad():
        model.layers[1].w_o.weight[:, :8] = 0.0  # head 0 of layer 1 reads columns 0..7
    torch.testing.assert_close(ablated, model(ids))
    assert not torch.allclose(ablated, model(ids, ablate=[(0, 1)]))


@pytest.mark.parametrize("ablate, word", [([(2, 0)], "ablate"), ([(0, 5)], "ablate"),
                                          ([(0,)], "ablate"), ([("a", 0)], "ablate")])
def test_bad_ablation(ablate, word):
    model = AttentionOnlyTransformer(20, d_model=16, num_heads=2, num_layers=2)
    with pytest.raises((ValueError, TypeError), match=word):
        model(torch.zeros(1, 4, dtype=torch.long), ablate=ablate)


@pytest.mark.parametrize("ids", [torch.zeros(1, 4), torch.zeros(4, dtype=torch.long),
                                 torch.full((1, 4), 20), torch.zeros(1, 70, dtype=torch.long)])
def test_bad_ids(ids):
    model = AttentionOnlyTransformer(20, d_model=16, num_heads=2, num_layers=2)
    with pytest.raises(ValueError, match="ids"):
        model(ids)


def test_bad_constructor():
    with pytest.raises(ValueError, match="num_layers"):
        AttentionOnlyTransformer(20, num_layers=0)
    with pytest.raises(ValueError, match="divisible"):
        AttentionOnlyTransformer(20, d_model=10, num_heads=3)
    with pytest.raises(RuntimeError, match="run the model"):
        AttentionOnlyTransformer(20).patterns()


def test_scores_of_ideal_and_uniform_patterns():
    n = 5
    size = 2 * n
    ind = torch.zeros(size, size)
    prev = torch.zeros(size, size)
    for t in range(size):
        ind[t, t - n + 1 if t >= n else t] = 1.0
        prev[t, max(t - 1, 0)] = 1.0
    assert induction_score(ind, n) == 1.0 and previous_token_score(prev) == 1.0
    assert previous_token_score(ind) < 0.5 and induction_score(prev, n) < 0.5
    uniform = torch.ones(size, size).tril()
    uniform = uniform / uniform.sum(-1, keepdim=True)
    want = sum(1 / (t + 1) for t in range(n, size)) / n
    assert math.isclose(induction_score(uniform, n).item(), want, rel_tol=1e-6)


def test_score_bad_arguments():
    with pytest.raises(ValueError, match="2n"):
        induction_score(torch.ones(8, 8), 5)
    with pytest.raises(ValueError, match="weights"):
        previous_token_score(torch.ones(3, 4))


def test_per_position_loss_is_chance_for_a_blind_model():
    model = AttentionOnlyTransformer(16, d_model=8, num_heads=2, num_layers=1)
    with torch.no_grad():
        model.unembed.weight.zero_()
        model.unembed.bias.zero_()
    loss = per_position_loss(model, repeated_tokens(3, 4, 16))
    assert loss.shape == (7,)
    torch.testing.assert_close(loss, torch.full((7,), math.log(16)))


def test_training_runs_records_history_and_is_seeded():
    model, hist = train_induction_model(num_layers=1, steps=6, eval_every=3, d_model=16)
    assert hist["step"] == [0, 3, 6]
    assert len(hist["repeated_half"]) == 3 and hist["induction"][0].shape == (1, 2)
    assert hist["per_position"][0].shape == (23,)
    assert hist["chance"] == pytest.approx(math.log(64))
    _, again = train_induction_model(num_layers=1, steps=6, eval_every=3, d_model=16)
    assert again["repeated_half"] == hist["repeated_half"]
    scores = head_scores(model, repeated_tokens(2, 12, 64), 12)
    assert scores["previous"].shape == (1, 2) == scores["induction"].shape


def test_training_bad_arguments():
    with pytest.raises(ValueError, match="steps"):
        train_induction_model(steps=0)
    with pytest.raises(ValueError, match="n_range"):
        train_induction_model(n_range=(10, 40))


def test_loss_curves_plot_draws_every_run_and_chance():
    hist = {"step": [0, 10], "first_half": [4.0, 4.1], "repeated_half": [4.0, 1.0], "chance": 4.0}
    fig = loss_curves_plot({"a": hist, "b": hist})
    ax = fig.axes[0]
    assert len(ax.lines) == 5  # 2 runs x 2 halves + chance
    assert list(ax.lines[0].get_ydata()) == [4.0, 1.0]
    with pytest.raises(ValueError, match="empty"):
        loss_curves_plot({})


def test_induction_view_shows_the_chosen_head_and_the_loss():
    torch.manual_seed(0)
    model = AttentionOnlyTransformer(64, d_model=16, num_heads=2, num_layers=2)
    fig = induction_view(model, 1, 0, seed=3, n=6)
    heat, bars = fig.axes[0], fig.axes[1]  # fig.axes[2] is the heatmap's colour bar
    assert heat.get_title() == "layer 1, head 0"
    ids = repeated_tokens(1, 6, 64, torch.Generator().manual_seed(3))
    with torch.no_grad():
        model(ids)
    shown = heat.images[0].get_array()
    torch.testing.assert_close(torch.as_tensor(shown.data), model.patterns()[1][0, 0])
    heights = [p.get_height() for p in bars.patches]
    torch.testing.assert_close(torch.tensor(heights, dtype=torch.float32), per_position_loss(model, ids))
    # position t (predicting token t + 1) on the x axis, as in notebook 14's per-position plot
    assert [p.get_x() + p.get_width() / 2 for p in bars.patches] == pytest.approx(range(11))
    assert bars.get_xlabel() == "position t (predicting token t + 1)"
    colours = [p.get_facecolor() for p in bars.patches]  # first half, position n - 1, repeated half
    assert len({colours[t] for t in range(5)}) == 1 and len({colours[t] for t in range(6, 11)}) == 1
    assert len({colours[0], colours[5], colours[6]}) == 3
    assert fig.axes[2].get_ylabel().startswith("attention weight")  # the heatmap's colour bar
    with pytest.raises(ValueError, match="layer"):
        induction_view(model, 2, 0)
    with pytest.raises(ValueError, match="head"):
        induction_view(model, 0, "x")
    plt.close("all")


def _fake_history():
    return {"step": [0, 10], "repeated_half": [4.0, 1.0], "chance": 4.0,
            "per_position": [torch.full((5,), 4.0), torch.tensor([4.0, 4.0, 0.5, 0.2, 0.1])],
            "previous": [torch.tensor([[0.1, 0.2], [0.0, 0.1]]), torch.tensor([[0.7, 0.2], [0.0, 0.1]])],
            "induction": [torch.tensor([[0.1, 0.0], [0.2, 0.1]]), torch.tensor([[0.1, 0.0], [0.9, 0.8]])]}


def test_per_position_plot_draws_the_chosen_evaluations():
    hist = _fake_history()
    ax = per_position_plot(hist, [1]).axes[0]
    assert list(ax.lines[0].get_ydata()) == pytest.approx([4.0, 4.0, 0.5, 0.2, 0.1])
    assert ax.get_legend().get_texts()[0].get_text() == "step 10"
    with pytest.raises(ValueError, match="indices"):
        per_position_plot(hist, [])


def test_scores_over_training_plot_draws_the_best_heads_and_the_loss():
    fig = scores_over_training_plot(_fake_history())
    left, right = fig.axes
    assert list(left.lines[0].get_ydata()) == pytest.approx([0.2, 0.9])  # best head, last layer
    assert list(left.lines[1].get_ydata()) == pytest.approx([0.2, 0.7])  # best head, layer 0
    assert list(right.lines[0].get_ydata()) == [4.0, 1.0]
    assert len(left.get_legend().get_texts()) == 3


# ---- the floor of a perfect induction head -------------------------------------------------------
def test_perfect_induction_loss_by_hand():
    ids = torch.tensor([[5, 9, 5, 2, 5, 9, 5, 2]])  # n = 4: the first half repeats 5
    candidates, right = induction_lookups(ids, 4)
    # t = 4 (a 5): keys 1 (after the first 5: 9) and 3 (after the second: 2); the next token is 9
    # t = 5 (a 9): key 2 only (5), right; t = 6 (a 5): keys 1, 3 and 5 (9, 2, 9); the next token is 2
    assert candidates.tolist() == [[2, 1, 3]] and right.tolist() == [[1, 1, 1]]
    torch.testing.assert_close(perfect_induction_loss(ids, 4),
                               torch.tensor([[math.log(2), 0.0, math.log(3)]]))


def test_perfect_induction_loss_is_zero_without_repeats_in_the_first_half():
    ids = torch.arange(6).repeat(2)[None]  # (1, 12), six distinct tokens twice
    assert torch.equal(perfect_induction_loss(ids, 6), torch.zeros(1, 5))
    assert not torch.signbit(perfect_induction_loss(ids, 6)).any()  # 0.0, not -0.0, when printed


def test_prefix_match_loss_by_hand():
    ids = torch.tensor([[5, 9, 5, 2, 5, 9, 5, 2]])  # n = 4
    # t = 4 (context 5 9 5 2 5): only period 4 repeats all of it -> 0; t = 5 -> 0;
    # t = 6 (context 5 9 5 2 5 9 5): periods 4 (next 2, right) and 6 (next 9, wrong) -> ln 2
    torch.testing.assert_close(prefix_match_loss(ids, 4), torch.tensor([[0.0, 0.0, math.log(2)]]))
    assert not torch.signbit(prefix_match_loss(ids, 4)).any()


def test_prefix_match_loss_is_finite_and_zero_where_one_token_is_enough():
    ids = repeated_tokens(200, 8, 4, torch.Generator().manual_seed(0))  # many repeats: |V| = 4
    whole, one = prefix_match_loss(ids, 8), perfect_induction_loss(ids, 8)
    assert whole.shape == one.shape == (200, 7) and torch.isfinite(whole).all()
    assert (whole[one == 0] == 0).all()  # the periods it keeps are a subset of the candidates
    assert whole.mean() < one.mean()
    with pytest.raises(ValueError, match="repeat"):
        prefix_match_loss(torch.tensor([[1, 2, 3, 4]]), 2)


def test_perfect_induction_loss_bad_input():
    with pytest.raises(ValueError, match="repeat"):
        perfect_induction_loss(torch.tensor([[1, 2, 3, 4]]), 2)
    with pytest.raises(ValueError, match="2n"):
        induction_lookups(torch.zeros(2, 7, dtype=torch.long), 4)
    with pytest.raises(ValueError, match="n"):
        induction_lookups(torch.zeros(2, 2, dtype=torch.long), 1)


# ---- each head's write, and ablation on paths ----------------------------------------------------
def _small_model(seed=0):
    torch.manual_seed(seed)
    return AttentionOnlyTransformer(20, d_model=16, num_heads=2, num_layers=2)


def test_head_writes_add_up_to_the_layer():
    model = _small_model()
    attn = model.layers[0]
    x = torch.randn(3, 7, 16)
    writes, weights = head_writes(attn, x, mask=causal_mask(7))
    assert writes.shape == (3, 2, 7, 16) and weights.shape == (3, 2, 7, 7)
    with torch.no_grad():
        whole = attn(x, x, x, mask=causal_mask(7))
    torch.testing.assert_close(writes.sum(1) + attn.w_o.bias, whole)
    torch.testing.assert_close(weights, attn.attn_weights)


def test_removing_from_every_path_is_the_ablation():
    model = _small_model()
    ids = torch.randint(0, 20, (2, 9))
    with torch.no_grad():
        torch.testing.assert_close(model(ids, ablate=[(0, 1), (1, 0)], into=list(PATHS),
                                         positions=torch.ones(9, dtype=torch.bool)),
                                   model(ids, ablate=[(0, 1), (1, 0)]))
        torch.testing.assert_close(model(ids, ablate=[(0, 1)], positions=torch.zeros(9, dtype=torch.bool)),
                                   model(ids))
        torch.testing.assert_close(model(ids, into=("keys",)), model(ids))


def test_keys_only_ablation_by_hand():
    model = _small_model(1)
    ids = torch.randint(0, 20, (2, 9))
    positions = torch.arange(9) < 4
    mask = causal_mask(9)
    with torch.no_grad():
        x = model.embed(ids) + model.pos(torch.arange(9))
        writes, _ = head_writes(model.layers[0], x, mask=mask)
        stream = x + writes.sum(1) + model.layers[0].w_o.bias
        keys = stream - writes[:, 1] * positions[None, :, None]
        want = model.unembed(stream + model.layers[1](stream, keys, stream, mask=mask))
        got = model(ids, ablate=[(0, 1)], into=("keys",), positions=positions)
    torch.testing.assert_close(got, want)
    assert not torch.allclose(got, model(ids, ablate=[(0, 1)]))


@pytest.mark.parametrize("kwargs, word", [({"into": ("key",)}, "into"), ({"into": ()}, "into"),
                                          ({"into": 3}, "into"),
                                          ({"positions": torch.ones(5, dtype=torch.bool)}, "positions"),
                                          ({"positions": torch.ones(9)}, "positions")])
def test_bad_paths(kwargs, word):
    with pytest.raises((ValueError, TypeError), match=word):
        _small_model()(torch.zeros(1, 9, dtype=torch.long), ablate=[(0, 0)], **kwargs)


def test_per_position_loss_passes_the_paths_on():
    model = _small_model()
    ids = repeated_tokens(4, 5, 20, torch.Generator().manual_seed(0))
    with torch.no_grad():
        logits = model(ids[:, :-1], ablate=[(0, 0)], into=("values",))
    want = torch.nn.functional.cross_entropy(logits.transpose(1, 2), ids[:, 1:], reduction="none").mean(0)
    torch.testing.assert_close(per_position_loss(model, ids, ablate=[(0, 0)], into=("values",)), want)


# ---- circuits -----------------------------------------------------------------------------------
def test_ov_matrix_is_what_a_head_writes_when_it_reads_one_position():
    model = _small_model()
    attn = model.layers[1]
    x = torch.randn(4, 1, 16)  # one position: each head attends to it with weight 1
    writes, _ = head_writes(attn, x)
    for h in range(2):
        s = slice(8 * h, 8 * (h + 1))
        bias = attn.w_v.bias[s] @ attn.w_o.weight[:, s].T  # (d_model,): what the value bias adds
        torch.testing.assert_close(writes[:, h, 0], x[:, 0] @ ov_matrix(model, 1, h) + bias)


def test_qk_matrix_gives_the_scores_without_biases():
    model = _small_model()
    attn = model.layers[0]
    with torch.no_grad():
        attn.w_q.bias.zero_()
        attn.w_k.bias.zero_()
    x = torch.randn(1, 5, 16)
    _, weights = head_writes(attn, x)
    scores = x[0] @ qk_matrix(model, 0, 1) @ x[0].T / math.sqrt(8)  # (L, L)
    torch.testing.assert_close(weights[0, 1], torch.softmax(scores, -1))


def test_full_ov_circuit_and_its_measures():
    model = _small_model()
    want = model.embed.weight @ ov_matrix(model, 1, 0) @ model.unembed.weight.T
    torch.testing.assert_close(full_ov_circuit(model, 1, 0), want.detach())
    assert copying_share(torch.eye(6)) == 1.0
    assert copying_share(torch.eye(6).roll(1, dims=1)) == 0.0
    assert eigenvalue_positivity(torch.diag(torch.tensor([1.0, 2.0, 3.0]))) == pytest.approx(1.0)
    assert eigenvalue_positivity(-torch.eye(3)) == pytest.approx(-1.0)
    rotation = torch.tensor([[0.0, -1.0], [1.0, 0.0]])  # eigenvalues +i and -i
    assert eigenvalue_positivity(rotation) == pytest.approx(0.0, abs=1e-12)
    assert eigenvalue_positivity(torch.diag(torch.tensor([3.0, -1.0]))) == pytest.approx(0.5)


@pytest.mark.parametrize("fn, args, word", [
    (full_ov_circuit, (2, 0), "layer"), (ov_matrix, (0, 2), "head"), (qk_matrix, (0, True), "head"),
])
def test_circuit_bad_heads(fn, args, word):
    with pytest.raises(ValueError, match=word):
        fn(_small_model(), *args)


def test_circuit_measures_bad_input():
    with pytest.raises(ValueError, match="square"):
        copying_share(torch.ones(3, 4))
    with pytest.raises(ValueError, match="NaN"):
        eigenvalue_positivity(torch.full((2, 2), float("nan")))
    with pytest.raises(ValueError, match="zero"):
        eigenvalue_positivity(torch.zeros(3, 3))
    with pytest.raises(TypeError, match="model"):
        ov_matrix(torch.nn.Linear(2, 2), 0, 0)


def test_composition_score_extremes():
    eye = torch.eye(8)
    assert composition_score(eye, eye) == pytest.approx(1 / math.sqrt(8))
    a = torch.zeros(8, 8)
    a[0, 0] = 1.0
    b = torch.zeros(8, 8)
    b[1, 1] = 1.0
    assert composition_score(a, b) == 0.0  # a writes where b does not read
    assert composition_score(a, a) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="multiplied"):
        composition_score(torch.ones(3, 4), torch.ones(3, 4))


def test_composition_scores_read_the_right_matrices():
    model = _small_model()
    keys = composition_scores(model, "keys")
    assert keys.shape == (2, 2)
    assert keys[1, 0].item() == pytest.approx(composition_score(ov_matrix(model, 0, 1), qk_matrix(model, 1, 0).T))
    queries = composition_scores(model, "queries")
    assert queries[0, 1].item() == pytest.approx(composition_score(ov_matrix(model, 0, 0), qk_matrix(model, 1, 1)))
    values = composition_scores(model, "values")
    assert values[1, 1].item() == pytest.approx(composition_score(ov_matrix(model, 0, 1), ov_matrix(model, 1, 1)))
    with pytest.raises(ValueError, match="kind"):
        composition_scores(model, "key")
    with pytest.raises(ValueError, match="earlier"):
        composition_scores(model, "keys", source=1, target=1)


def test_random_composition_scores_are_seeded_and_near_one_over_root_d():
    a = random_composition_scores(64, 32, 50, torch.Generator().manual_seed(0))
    b = random_composition_scores(64, 32, 50, torch.Generator().manual_seed(0))
    assert a.shape == (50,) and torch.equal(a, b)
    assert 0.8 / math.sqrt(64) < a.mean().item() < 1.2 / math.sqrt(64)
    with pytest.raises(ValueError, match="samples"):
        random_composition_scores(64, 32, 0)


def test_training_does_not_depend_on_the_thread_count():
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        _, two = train_induction_model(num_layers=1, steps=4, eval_every=2, d_model=16)
        torch.set_num_threads(1)
        _, one = train_induction_model(num_layers=1, steps=4, eval_every=2, d_model=16)
    finally:
        torch.set_num_threads(before)
    assert two["repeated_half"] == one["repeated_half"]
    assert torch.get_num_threads() == before


# ---- the new figures ----------------------------------------------------------------------------
def test_loss_curves_plot_draws_the_floor():
    hist = {"step": [0, 10], "first_half": [4.0, 4.1], "repeated_half": [4.0, 1.0], "chance": 4.0}
    ax = loss_curves_plot({"a": hist}, floor=0.25).axes[0]
    assert [list(line.get_ydata()) for line in ax.lines[-1:]] == [[0.25, 0.25]]
    assert ax.get_legend().get_texts()[-1].get_text() == FLOOR_LABEL
    assert "one-token" in FLOOR_LABEL
    plt.close("all")


def test_icl_score_plot_draws_late_minus_early():
    hist = _fake_history()
    ax = icl_score_plot(hist, early=1, late=4, phase=10).axes[0]
    assert list(ax.lines[0].get_ydata()) == pytest.approx([0.0, 0.1 - 4.0])
    assert list(ax.lines[2].get_xdata()) == [10, 10]
    with pytest.raises(ValueError, match="early"):
        icl_score_plot(hist, early=4, late=1)
    plt.close("all")


def test_ov_circuits_plot_shares_one_symmetric_scale():
    a, b = torch.eye(4) * 2.0, -torch.eye(4) * 5.0
    fig = ov_circuits_plot({"one": a, "two": b})
    heat = [ax for ax in fig.axes if ax.images]
    assert [ax.get_title() for ax in heat] == ["one", "two"]
    assert all(ax.images[0].get_clim() == (-5.0, 5.0) for ax in heat)
    torch.testing.assert_close(torch.as_tensor(heat[1].images[0].get_array().data), b)
    assert len(fig.axes) == 3  # two heatmaps and one colour bar
    with pytest.raises(ValueError, match="square"):
        ov_circuits_plot({"bad": torch.ones(2, 3)})
    plt.close("all")


def test_composition_plot_draws_every_pair_and_the_random_band():
    keys = torch.tensor([[0.3, 0.2], [0.1, 0.05]])
    baseline = torch.linspace(0.1, 0.2, 21)  # its 95th percentile is 0.195
    fig = composition_plot({"keys": keys, "queries": keys / 2}, baseline)
    ax = fig.axes[0]
    band, bars = ax.patches[0], ax.patches[1:]
    assert [p.get_height() for p in bars[:4]] == pytest.approx([0.3, 0.2, 0.1, 0.05])
    assert [p.get_height() for p in bars[4:]] == pytest.approx([0.15, 0.1, 0.05, 0.025])
    # the band: from the smallest random score to the 95th percentile, the threshold claimed
    assert (band.get_y(), band.get_y() + band.get_height()) == pytest.approx((0.1, 0.195))
    assert "95th percentile" in band.get_label()
    assert [t.get_text() for t in ax.get_xticklabels()][1] == "(0, 0) → (1, 1)"
    assert ax.lines[0].get_ydata()[0] == pytest.approx(0.15)  # the mean
    plt.close("all")


def test_path_ablation_plot_draws_each_loss_and_the_references():
    ax = path_ablation_plot({"keys": 3.0, "queries": 0.4}, intact=0.35, chance=4.0, floor=0.1).axes[0]
    assert [p.get_width() for p in ax.patches] == pytest.approx([3.0, 0.4])
    assert [t.get_text() for t in ax.get_yticklabels()] == ["keys", "queries"]
    assert [line.get_xdata()[0] for line in ax.lines] == pytest.approx([0.35, 4.0, 0.1])
    plt.close("all")


def test_previous_token_by_position_plot_draws_each_curve_from_position_1():
    ax = previous_token_by_position_plot({"a": torch.tensor([1.0, 0.9, 0.1]), "b": torch.tensor([1.0, 0.8, 0.0])},
                                         n=2, longest_first_half=3).axes[0]
    assert list(ax.lines[0].get_xdata()) == [1, 2, 3]
    assert list(ax.lines[1].get_ydata()) == pytest.approx([1.0, 0.8, 0.0])
    assert list(ax.lines[2].get_xdata()) == [2.5, 2.5]
    plt.close("all")


def test_sink_plot_draws_each_head_and_the_even_spread():
    to_first = torch.tensor([[1.0, 0.9, 0.8], [1.0, 0.2, 0.1]])
    ax = sink_plot(to_first, n=2).axes[0]
    assert list(ax.lines[1].get_ydata()) == pytest.approx([1.0, 0.2, 0.1])
    assert list(ax.lines[2].get_ydata()) == pytest.approx([1.0, 0.5, 1 / 3])
    assert ax.get_legend().get_texts()[1].get_text() == "layer 1, head 0"
    with pytest.raises(ValueError, match="to_first"):
        sink_plot(torch.ones(3))
    plt.close("all")


def _phase_change_history():
    """A history shaped like notebook 14's run: the repeated half falls from chance to 0.3 nats
    between steps 300 and 400, in the lower left where the old legend sat."""
    steps = list(range(0, 820, 20))
    rep = [4.16 if s < 300 else 0.3 if s > 400 else 4.16 - (s - 300) / 100 * 3.86 for s in steps]
    per = [torch.linspace(4.2, 0.2 if s > 400 else 4.0, 23) for s in steps]
    return {"step": steps, "repeated_half": rep, "first_half": [4.4] * len(steps), "chance": 4.16,
            "per_position": per,
            "previous": [torch.tensor([[0.6 if s > 400 else 0.1, 0.1], [0.0, 0.1]]) for s in steps],
            "induction": [torch.tensor([[0.1, 0.0], [0.9 if s > 400 else 0.1, 0.8]]) for s in steps]}


def _legend_figures():
    hist = _phase_change_history()
    curve = torch.linspace(1.0, 0.0, 23)
    yield "loss_curves_plot", loss_curves_plot({"2 layers": hist, "1 layer": hist}, floor=0.14)
    yield "per_position_plot", per_position_plot(hist, [10, 40])
    yield "scores_over_training_plot", scores_over_training_plot(hist)
    yield "icl_score_plot", icl_score_plot(hist, early=2, late=20, phase=320)
    yield "composition_plot", composition_plot({"keys": torch.full((2, 2), 0.19),
                                                "queries": torch.full((2, 2), 0.07)},
                                               torch.linspace(0.11, 0.14, 200))
    yield "path_ablation_plot", path_ablation_plot({"keys only": 3.4, "everywhere": 3.2},
                                                   intact=0.34, chance=4.16, floor=0.14)
    yield "previous_token_by_position_plot", previous_token_by_position_plot(
        {"repeated": curve, "random": curve}, n=12, longest_first_half=16)
    yield "sink_plot", sink_plot(torch.stack([torch.linspace(1, 0, 24), torch.linspace(0.2, 0, 24)]), n=12)


@pytest.mark.parametrize("name", [name for name, fig in _legend_figures() if not plt.close(fig)])
def test_legends_never_cover_the_data(name):
    """Issue 34: the legend of the loss curves covered the 2-layer curve where it falls. Every
    figure of notebook 14 now puts its legend outside every axes: its drawn box overlaps no axes
    (so no line, bar or band whatever a run draws), and lies inside the figure (not cut off)."""
    fig = dict(_legend_figures())[name]
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    legends = [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None]
    assert len(legends) == 1
    box = legends[0].get_window_extent(renderer)
    for ax in fig.axes:
        assert not box.overlaps(ax.get_window_extent(renderer)), name
    whole = fig.bbox
    assert whole.x0 <= box.x0 and box.x1 <= whole.x1 and whole.y0 <= box.y0 and box.y1 <= whole.y1
    plt.close("all")
