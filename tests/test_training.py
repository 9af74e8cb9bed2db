"""Training helpers of notebook 10: batches and masks, loss, schedule, training loop, evaluation,
the translator widget's pure functions and the plots it adds."""

from itertools import pairwise

import matplotlib.pyplot as plt
import pytest
import torch
import torch.nn.functional as F

from helpers import (
    CharTokenizer,
    Transformer,
    count_parameters,
    date_splits,
    exact_match_accuracy,
    label_smoothed_cross_entropy,
    train_seq2seq,
    warmup_lr,
)
from helpers.plots import cross_attention_grid, lr_schedule_plot, training_curves
from helpers.training import collate, cross_attention, encode_pairs, translate
from helpers.widgets import translator_view, translator_widget

PAIRS = [("12 mar 2021", "2021-03-12"), ("1.1.70", "1970-01-01"), ("x", "2049-12-31")]


@pytest.fixture(scope="module")
def tok():
    return CharTokenizer(s + t for s, t in PAIRS + [("abcdefghijklmnopqrstuvwxyz,./' -", "")])


@pytest.fixture(scope="module")
def trained():
    """A tiny model trained briefly on real dates (a few seconds)."""
    train, val, _ = date_splits(4000, 100, 0, seed=0)
    tok = CharTokenizer(s + t for s, t in train)
    torch.manual_seed(0)
    model = Transformer(len(tok), len(tok), d_model=32, num_heads=2, num_layers=1, d_ff=64,
                        dropout=0.0, max_len=40, norm_first=True)
    logged = []
    history = train_seq2seq(model, train, tok, steps=60, batch_size=32, peak_lr=3e-3,
                            warmup_steps=10, log_every=20, callback=lambda s, h: logged.append(s))
    return model, tok, history, logged, val


def test_collate_pads_shifts_and_masks(tok):
    b = collate(PAIRS, tok)
    assert b.src.shape == (3, 11) and b.tgt_in.shape == (3, 11) and b.tgt_out.shape == (3, 11)
    assert b.src[2].tolist() == tok.encode("x") + [tok.pad_id] * 10
    assert b.tgt_in[:, 0].tolist() == [tok.bos_id] * 3
    assert b.tgt_out[:, -1].tolist() == [tok.eos_id] * 3
    assert b.tgt_in[:, 1:].tolist() == b.tgt_out[:, :-1].tolist()  # shifted by one
    assert b.src_mask.shape == (3, 1, 1, 11) and b.src_mask.dtype == torch.bool
    assert b.src_mask[1, 0, 0].tolist() == [True] * 6 + [False] * 5
    assert b.tgt_mask.shape == (3, 1, 11, 11)
    assert torch.equal(b.tgt_mask[0, 0], torch.ones(11, 11, dtype=torch.bool).tril())
    with pytest.raises(ValueError, match="at least one"):
        collate([], tok)


def test_encode_pairs_matches_collate(tok):
    src, tgt = encode_pairs(PAIRS, tok)
    b = collate(PAIRS, tok)
    assert torch.equal(src, b.src) and torch.equal(tgt[:, :-1], b.tgt_in)
    assert torch.equal(tgt[:, 1:], b.tgt_out)


@pytest.mark.parametrize("smoothing", [0.0, 0.1, 0.3])
def test_label_smoothed_loss_matches_torch(smoothing):
    torch.manual_seed(0)
    logits = torch.randn(3, 5, 9)
    target = torch.randint(1, 9, (3, 5))
    target[0, 2:] = 0
    ours = label_smoothed_cross_entropy(logits, target, 0, smoothing)
    theirs = F.cross_entropy(logits.transpose(1, 2), target, ignore_index=0,
                             label_smoothing=smoothing)
    torch.testing.assert_close(ours, theirs)


def test_label_smoothed_loss_errors():
    with pytest.raises(ValueError, match=r"expected logits \(B, L, V\) and target \(B, L\)"):
        label_smoothed_cross_entropy(torch.zeros(2, 3, 4), torch.zeros(2, 4, dtype=torch.long), 0)
    with pytest.raises(ValueError, match="smoothing must be in"):
        label_smoothed_cross_entropy(torch.zeros(2, 3, 4), torch.zeros(2, 3, dtype=torch.long), 0, 1.0)


def test_warmup_lr_shape():
    lrs = [warmup_lr(s, 1.0, 10, 100) for s in range(100)]
    assert lrs[0] == pytest.approx(0.1) and lrs[9] == pytest.approx(1.0)
    assert all(a < b for a, b in pairwise(lrs[:10]))  # rising during warm-up
    assert all(a >= b for a, b in pairwise(lrs[10:]))  # then never rising
    assert lrs[-1] < 1e-3
    assert warmup_lr(5, 1.0, 0, 10) < 1.0  # no warm-up: decay from the start
    with pytest.raises(ValueError, match="warmup_steps < total_steps"):
        warmup_lr(0, 1.0, 10, 10)


def test_training_loop_logs_and_learns(trained):
    model, tok, history, logged, _ = trained
    assert history["step"] == [20, 40, 60] and logged == [20, 40, 60]
    assert history["loss"][-1] < history["loss"][0]
    assert history["lr"][-1] < history["lr"][0]
    assert history["config"]["warmup_steps"] == 10 and history["config"]["norm_first"] is True
    assert not model.training


def test_training_is_deterministic():
    train, _, _ = date_splits(500, 0, 0, seed=0)
    tok = CharTokenizer(s + t for s, t in train)
    runs = []
    for _ in range(2):
        torch.manual_seed(0)
        m = Transformer(len(tok), len(tok), 16, 2, 1, 32, dropout=0.0, max_len=40)
        runs.append(train_seq2seq(m, train, tok, steps=6, batch_size=16, warmup_steps=2,
                                  log_every=3)["loss"])
    assert runs[0] == runs[1]
    with pytest.raises(ValueError, match="steps must be >= 1"):
        train_seq2seq(m, train, tok, steps=0)


def test_gradient_clipping_caps_the_update():
    train, _, _ = date_splits(200, 0, 0, seed=0)
    tok = CharTokenizer(s + t for s, t in train)
    torch.manual_seed(0)
    m = Transformer(len(tok), len(tok), 16, 2, 1, 32, dropout=0.0, max_len=40)
    h = train_seq2seq(m, train, tok, steps=2, batch_size=16, warmup_steps=1, clip_norm=1e-3,
                      log_every=1)
    assert h["grad_norm"][0] > 1e-3  # the raw norm is reported, before clipping


def test_exact_match_and_translate(trained):
    model, tok, _, _, val = trained
    acc, preds = exact_match_accuracy(model, val, tok)
    assert len(preds) == len(val) and 0.0 <= acc <= 1.0
    assert acc == sum(p == t for p, (_, t) in zip(preds, val, strict=True)) / len(val)
    assert translate(model, [val[0][0]], tok) == preds[:1]
    assert all(len(p) <= 11 for p in preds)
    with pytest.raises(ValueError, match="at least one pair"):
        exact_match_accuracy(model, [], tok)


def test_cross_attention_shapes_and_rows(trained):
    model, tok, _, _, val = trained
    translation, src_labels, out_labels, weights = cross_attention(model, tok, val[0][0])
    assert src_labels == list(val[0][0])
    assert len(weights) == 1 and weights[0].shape == (2, len(out_labels), len(src_labels))
    torch.testing.assert_close(weights[0].sum(-1), torch.ones(2, len(out_labels)))
    assert "".join(out_labels).startswith(translation)
    with pytest.raises(ValueError, match="unknown character"):
        cross_attention(model, tok, "12 märz")
    with pytest.raises(ValueError, match="non-empty string"):
        cross_attention(model, tok, "")


def test_count_parameters():
    m = Transformer(10, 10, 16, 2, 1, 32)
    assert count_parameters(m) == sum(p.numel() for p in m.parameters())


def test_translator_view_draws_the_translation(trained):
    model, tok, _, _, val = trained
    src = val[0][0]
    translation, _, out_labels, weights = cross_attention(model, tok, src)
    fig = translator_view(model, tok, src.upper(), layer=0, head=1)
    ax = fig.axes[0]
    assert ax.get_title().splitlines()[0] == f"{src!r} → {translation}"
    assert [t.get_text() for t in ax.get_yticklabels()] == out_labels
    assert [t.get_text() for t in ax.get_xticklabels()] == ["␣" if c == " " else c for c in src]
    torch.testing.assert_close(torch.tensor(ax.images[0].get_array()), weights[0][1])
    plt.close(fig)


@pytest.mark.parametrize("text, match", [
    ("", "Type a date"),
    ("12 März 2021", "Cannot read 'ä'"),
    ("1" * 50, "at most 40"),
    (None, "Type a date"),
])
def test_translator_view_answers_bad_input_with_a_message(trained, text, match):
    model, tok, _, _, _ = trained
    view = translator_view(model, tok, text)
    assert isinstance(view, str) and match in view


def test_translator_view_bad_layer_is_a_message(trained):
    model, tok, _, _, val = trained
    assert "layer must be in 0..0" in translator_view(model, tok, val[0][0], layer=3)


def test_translator_widget_redraws_on_typing(trained, capsys):
    # Outside a kernel an Output widget does not capture: what it shows reaches stdout.
    model, tok, _, _, _ = trained
    w = translator_widget(model, tok, text="12 mar 2021")
    box, (layer, head) = w.children[0], w.children[1].children
    assert "Figure" in capsys.readouterr().out
    box.value = "12 märz"
    assert "Cannot read 'ä', 'z'" in capsys.readouterr().out
    box.value = "12 mar 2021"
    head.value = 1
    assert "Figure" in capsys.readouterr().out
    assert [o[0] for o in head.options][-1] == "mean" and layer.options == (("layer 0", 0),)


def test_plots_draw_what_they_are_given():
    history = {"step": [10, 20], "loss": [2.0, 1.0], "val_acc": [0.5, 0.9]}
    fig = training_curves(history)
    assert len(fig.axes) == 2
    assert list(fig.axes[0].lines[0].get_ydata()) == [2.0, 1.0]
    assert list(fig.axes[1].lines[0].get_ydata()) == [0.5, 0.9]
    assert fig.axes[1].get_ylabel().startswith("exact-match")
    plt.close(fig)
    fig = lr_schedule_plot([0.1, 0.2, 0.3], warmup_steps=2)
    assert list(fig.axes[0].lines[0].get_ydata()) == [0.1, 0.2, 0.3]
    assert list(fig.axes[0].lines[1].get_xdata()) == [2, 2]
    plt.close(fig)
    w = [torch.softmax(torch.randn(2, 3, 4), -1), torch.softmax(torch.randn(2, 3, 4), -1)]
    fig = cross_attention_grid(w, list("ab c"), ["1", "2", "<eos>"], title="t")
    assert len(fig.axes) == 5  # 2 layers x 2 heads, and one colour bar shared by all
    ax = fig.axes[3]  # layer 1, head 1
    assert ax.get_title() == "layer 1, head 1"
    assert [t.get_text() for t in ax.get_xticklabels()] == ["a", "b", "␣", "c"]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["1", "2", "<eos>"]
    torch.testing.assert_close(torch.tensor(ax.images[0].get_array()), w[1][1])
    plt.close(fig)
