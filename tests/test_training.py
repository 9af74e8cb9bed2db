"""Training helpers of notebook 10: batches and masks, loss, schedule, training loop, evaluation,
the translator widget's pure functions and the plots it adds."""

import re
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
    target_mask,
    train_seq2seq,
    warmup_lr,
)
from helpers.data import date_tokenizer
from helpers.plots import cross_attention_grid, lr_schedule_plot, training_curves
from helpers.training import collate, encode_pairs
from helpers.translator import (
    NO_ANSWER,
    TRANSLATOR_RECIPE,
    attention_maps,
    cross_attention,
    make_translator,
    model_input,
    output_probability,
    part_positions,
    reading_note,
    rules_reading,
    train_translator,
    translate,
    translate_hiding,
    translation_message,
    translator_snapshot,
)
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


def test_label_smoothed_loss_all_padding_is_zero_not_nan():
    # F.cross_entropy returns NaN here (a mean over nothing); ours returns 0 and zero gradients.
    logits = torch.randn(2, 3, 5, requires_grad=True)
    target = torch.zeros(2, 3, dtype=torch.long)
    loss = label_smoothed_cross_entropy(logits, target, pad_id=0)
    assert loss.item() == 0.0
    loss.backward()
    assert torch.equal(logits.grad, torch.zeros_like(logits))


def test_label_smoothed_loss_refuses_ignore_index_labels():
    target = torch.tensor([[3, 4, -100]])
    with pytest.raises(ValueError, match=r"target holds ids -100..4, but logits have 5 classes.*"
                                         r"not with -100"):
        label_smoothed_cross_entropy(torch.randn(1, 3, 5), target, pad_id=0)
    with pytest.raises(ValueError, match="target holds ids 1..7"):
        label_smoothed_cross_entropy(torch.randn(1, 2, 5), torch.tensor([[1, 7]]), pad_id=0)
    with pytest.raises(TypeError, match="integer class ids"):
        label_smoothed_cross_entropy(torch.randn(1, 2, 5), torch.tensor([[1.0, 2.0]]), pad_id=0)


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
    with pytest.raises(ValueError, match="steps must be an int >= 1, got 0"):
        train_seq2seq(m, train, tok, steps=0)


def test_length_buckets_pad_less_and_stay_deterministic():
    train, _, _ = date_splits(400, 0, 0, seed=0)
    tok = CharTokenizer(s + t for s, t in train)
    seen = {}

    class Spy(Transformer):
        def forward(self, src, tgt, *args, **kw):
            seen.setdefault(self.tag, []).append(float((src == tok.pad_id).float().mean()))
            return super().forward(src, tgt, *args, **kw)

    losses = []
    for tag, k in (("plain", 1), ("bucketed", 8), ("bucketed again", 8)):
        torch.manual_seed(0)
        m = Spy(len(tok), len(tok), 16, 2, 1, 32, dropout=0.0, max_len=40)
        m.tag = tag
        h = train_seq2seq(m, train, tok, steps=8, batch_size=16, warmup_steps=1, log_every=8,
                          length_buckets=k)
        losses.append(h["loss"])
    assert sum(seen["bucketed"]) < 0.5 * sum(seen["plain"])  # far less padding
    assert losses[1] == losses[2]
    with pytest.raises(ValueError, match="length_buckets must be an int >= 1, got 0"):
        train_seq2seq(m, train, tok, steps=2, length_buckets=0)


@pytest.mark.parametrize("kw, match", [
    ({"batch_size": 0}, "batch_size must be an int >= 1, got 0"),
    ({"log_every": 0}, "log_every must be an int >= 1, got 0"),
    ({"batch_size": 2.5}, "batch_size must be an int >= 1, got 2.5"),
])
def test_train_seq2seq_names_bad_arguments(kw, match):
    train = [("12 mar 2021", "2021-03-12")]
    tok = CharTokenizer(s + t for s, t in train)
    m = Transformer(len(tok), len(tok), 16, 2, 1, 32, dropout=0.0, max_len=40)
    with pytest.raises(ValueError, match=match):
        train_seq2seq(m, train, tok, steps=2, **kw)
    with pytest.raises(ValueError, match="train_pairs is empty"):
        train_seq2seq(m, [], tok, steps=2)


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
    raw_acc, raw = exact_match_accuracy(model, val, tok, raw=True)
    assert raw_acc == acc and all(len(p) <= 11 for p in raw)  # the rules read every target
    # What is shown is the rules' reading or a refusal, never another date
    for (s, t), p, r in zip(val, preds, raw, strict=True):
        assert p == r == t or (p.startswith(NO_ANSWER) and r != t), (s, p, r)
    with pytest.raises(ValueError, match="pairs must be a non-empty list of"):
        exact_match_accuracy(model, [], tok)
    with pytest.raises(ValueError, match=r"each pair must be \(source, target\), got \('a',\)"):
        exact_match_accuracy(model, [("a",)], tok)
    with pytest.raises(ValueError, match="batch_size must be an int >= 1, got 0"):
        exact_match_accuracy(model, val, tok, batch_size=0)
    with pytest.raises(ValueError, match="batch_size must be an int >= 1, got 0"):
        translate(model, [val[0][0]], tok, batch_size=0)
    with pytest.raises(TypeError, match="sources must be a list of strings"):
        translate(model, val[0][0], tok)
    with pytest.raises(TypeError, match="translate: sources must be a list of strings.*got NoneType"):
        translate(model, None, tok)
    with pytest.raises(TypeError, match=r"translate: sources\[1\] must be a str, got int"):
        translate(model, ["12 mar 2021", 3], tok)


@pytest.mark.parametrize("text, why", [
    ("", "Type a date"), ("12 mar", "it has no year"), ("March 2021", "it has no day"),
    ("12.03.69", "could be 1969 or 2069"), ("31.02.2021", "February 2021 has 28 days"),
    ("<dmy>09/25/2003", "there is no month 25"), ("on 12 march 2021", "Cannot read 'on'"),
    ("03/12/2021", "could be 3 December 2021 (day first, 'dmy') or 12 March 2021 (month first"),
    ("fri, 12 mar 2021 10:30:00 +0000", "has a time of day, '10:30:00 +0000'"),
])
def test_translate_refuses_what_check_date_text_refuses(trained, text, why):
    model, tok, _, _, _ = trained
    with pytest.raises(ValueError, match=r"translate refuses 1 of 2 sources, it does not guess: "
                                         r"sources\[1\] .*" + re.escape(why)):
        translate(model, ["12 mar 2021", text], tok)


def test_translate_refuses_a_tokenizer_that_is_not_the_models(trained):
    model, tok, _, _, _ = trained
    other = CharTokenizer(["0123456789 -abcdefghijklmnopqrstuvwxyz<>./,'€"])
    with pytest.raises(ValueError, match=rf"the tokenizer has {len(other)} tokens but the model's "
                                         rf"src_embed was built for {len(tok)}"):
        translate(model, ["12 mar 2021"], other)
    with pytest.raises(TypeError, match="translate: tokenizer must be a tokenizer"):
        translate(model, ["12 mar 2021"], None)


def test_translate_reads_with_the_order_given(trained):
    """The order argument becomes the order token the model reads; a source that carries its own
    token keeps it. The model input is the token and the normalised text."""
    model, tok, _, _, _ = trained
    assert model_input("  03/12/2021 ", "mdy") == "<mdy>03/12/2021"
    assert model_input("<dmy>03/12/2021", "mdy") == "<dmy>03/12/2021"
    text = "03/12/2021"
    assert translate(model, [text], tok, order="mdy") == translate(model, ["<mdy>" + text], tok)
    assert translate(model, [text], tok, order="dmy") == translate(model, ["<dmy>" + text], tok)
    assert translate(model, ["<dmy> " + text], tok) == translate(model, ["<dmy>" + text], tok)
    assert model_input("<dmy> 03/12/2021", None) == "<dmy>03/12/2021"  # no space reaches the model
    assert model_input("12/25/2021", None) == "<mdy>12/25/2021"
    with pytest.raises(ValueError, match="could be 3 December 2021 .* or 12 March 2021"):
        translate(model, [text], tok)  # no order given: both readings named, none guessed
    assert translate(model, ["09/25/2003"], tok, order="mdy")  # refused day first, read month first
    with pytest.raises(ValueError, match="order must be 'dmy'"):
        translate(model, [text], tok, order="ymd")


def test_translate_normalises_its_input(trained):
    model, tok, _, _, val = trained
    src = val[0][0]
    messy = "  " + src.upper().replace(" ", "   ") + " "
    assert translate(model, [messy], tok) == translate(model, [src], tok)


def test_attention_maps_all_three_kinds(trained):
    model, tok, _, _, val = trained
    src = val[0][0]
    translation, src_labels, out_labels, maps = attention_maps(model, tok, src.title())
    ls, lt = len(src), len(out_labels)
    assert src_labels == list(src)
    assert [tuple(w.shape) for w in maps["encoder"]] == [(2, ls, ls)]
    assert [tuple(w.shape) for w in maps["decoder"]] == [(2, lt, lt)]
    assert [tuple(w.shape) for w in maps["cross"]] == [(2, lt, ls)]
    assert torch.equal(maps["decoder"][0].triu(1), torch.zeros(2, lt, lt))  # causal
    for w in maps.values():
        torch.testing.assert_close(w[0].sum(-1), torch.ones(w[0].shape[:2]))
    assert cross_attention(model, tok, src)[3][0].equal(maps["cross"][0])


def test_translation_message_flags_outputs_that_are_not_dates():
    assert translation_message("12.03.2021", "2021-03-12") == "'12.03.2021' → 2021-03-12"
    message = translation_message("31.01.2021", "2021-02-31")
    assert "no valid date" in message and "'2021-02-31'" in message
    assert "→ 2021" not in message
    assert "no valid date" in translation_message("x", "2021-3-1")


def test_translation_message_never_shows_a_wrong_date_as_the_answer():
    assert translation_message("12.03.2021", "2021-03-12", "2021-03-12") == "'12.03.2021' → 2021-03-12"
    message = translation_message("12.03.2021", "2021-12-03", "2021-03-12")
    assert message == ("'12.03.2021' → no answer: the model wrote 2021-12-03, but the text reads as "
                       "2021-03-12: the model is wrong here")
    for bad in (None, 3):
        with pytest.raises(TypeError, match="translation_message: translation must be a str"):
            translation_message("x", bad)
    with pytest.raises(ValueError, match="expected must be None or a real ISO date"):
        translation_message("x", "2021-03-12", "12.03.2021")


def test_rules_reading_and_reading_note():
    assert rules_reading("12.03.2021", "dmy") == "2021-03-12" and rules_reading("03/12/2021", "mdy") == "2021-03-12"
    assert rules_reading("12.03.2021") is None and rules_reading("25.03.2021") == "2021-03-25"
    assert reading_note("21-12-31") == ("read day first (dmy): 21 December 2031; a two-digit year "
                                        "first would give 31 December 2021")
    assert rules_reading("12 mar") is None and rules_reading("31.02.2021") is None
    assert reading_note("03/04/2021") == ("read day first (dmy): 3 April 2021; month first would "
                                          "give 4 March 2021")
    assert reading_note("03/04/2021", "mdy") == ("read month first (mdy): 4 March 2021; day first "
                                                 "would give 3 April 2021")
    for text in ("13/04/2021", "04/04/2021", "3 april 2021", "2021-04-03", "12 mar", "hello"):
        assert reading_note(text) is None, text


def test_cross_attention_shapes_and_rows(trained):
    model, tok, _, _, val = trained
    translation, src_labels, out_labels, weights = cross_attention(model, tok, val[0][0])
    assert src_labels == list(val[0][0])
    assert len(weights) == 1 and weights[0].shape == (2, len(out_labels), len(src_labels))
    torch.testing.assert_close(weights[0].sum(-1), torch.ones(2, len(out_labels)))
    wrote = "".join(out_labels).removesuffix("<eos>")  # the model's tokens; shown only if right
    assert translation == wrote == val[0][1] or (translation.startswith(NO_ANSWER) and wrote[:16] in translation)
    with pytest.raises(ValueError, match="attention_maps refuses 1 of 1 sources.*Cannot read 'märz'"):
        cross_attention(model, tok, "12 märz 2021")
    with pytest.raises(ValueError, match="Type a date"):
        cross_attention(model, tok, "")
    with pytest.raises(TypeError, match="attention_maps: source must be a str, got NoneType"):
        cross_attention(model, tok, None)


def test_count_parameters():
    m = Transformer(10, 10, 16, 2, 1, 32)
    assert count_parameters(m) == sum(p.numel() for p in m.parameters())


def test_translator_view_draws_the_translation(trained):
    model, tok, _, _, val = trained
    src = val[0][0]
    order, text = src[1:4], src[5:]  # '<dmy>12 mar 2021': the order token, then the text
    translation, _, out_labels, weights = cross_attention(model, tok, src)
    fig = translator_view(model, tok, text.upper(), layer=0, head=1, order=order)
    ax = fig.axes[0]
    first = translation_message(text, translation, rules_reading(text, order))
    assert ax.get_title().startswith(first.split()[0])
    assert " ".join(ax.get_title().split()).startswith(" ".join(first.split()))
    assert [t.get_text() for t in ax.get_yticklabels()] == out_labels
    assert [t.get_text() for t in ax.get_xticklabels()] == ["␣" if c == " " else c for c in src]
    torch.testing.assert_close(torch.tensor(ax.images[0].get_array()), weights[0][1])
    plt.close(fig)


@pytest.mark.parametrize("text, match", [
    ("", "Type a date"),
    ("12 März 2021", "Cannot read 'märz'"),
    ("12" + "-" * 50 + "03-2021", "at most 40"),
    (None, "Type a date as text"),
    ("31.02.2021", "February 2021 has 28 days"),
    ("Tuesday, 12 March 2021", "was a friday, not a tuesday"),
    ("March 12th", "is not a complete date: it has no year"),
    ("09/25/2003", "there is no month 25 (read day first)"),
])
def test_translator_view_answers_bad_input_with_a_message(trained, text, match):
    model, tok, _, _, _ = trained
    view = translator_view(model, tok, text)
    assert isinstance(view, str) and match in view


def test_translator_view_bad_layer_or_order_is_a_message(trained):
    model, tok, _, _, val = trained
    assert "layer must be in 0..0" in translator_view(model, tok, val[0][0][5:], layer=3)
    assert "order must be 'dmy' (day first) or 'mdy'" in translator_view(model, tok, "12.03.2021",
                                                                          layer=0, order="ymd")


def test_translator_view_says_which_reading_it_used(trained):
    """Day and month both 12 or less: the title says which reading the order chose; a date that
    says it itself gets no such line."""
    model, tok, _, _, _ = trained
    fig = translator_view(model, tok, "03/04/2021", layer=0, order="mdy")
    lines = fig.axes[0].get_title().splitlines()
    assert "read month first (mdy): 4 March 2021; day first would give 3 April 2021" in " ".join(lines)
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()][:5] == list("<mdy>")
    plt.close(fig)
    fig = translator_view(model, tok, "13/04/2021", layer=0)
    assert "first would give" not in fig.axes[0].get_title()
    plt.close(fig)


def test_translator_view_flags_a_date_the_rules_do_not_read(trained, monkeypatch):
    """If the model writes a real date that is not the one in the text, the view says so instead
    of presenting it (the model's output is compared with the rules' reading)."""
    import helpers.translator as translator

    model, tok, _, _, _ = trained
    real = translator.cross_attention

    def wrong(*args, **kwargs):
        _, src, out, weights = real(*args, **kwargs)
        return "2021-12-03", src, out, weights

    monkeypatch.setattr(translator, "cross_attention", wrong)
    fig = translator_view(model, tok, "12.03.2021", layer=0)
    title = " ".join(fig.axes[0].get_title().split())
    assert "no answer: the model wrote 2021-12-03, but the text reads as 2021-03-12" in title
    plt.close(fig)


def test_translator_widget_redraws_on_typing(trained, capsys):
    # Outside a kernel an Output widget does not capture: what it shows reaches stdout.
    model, tok, _, _, _ = trained
    w = translator_widget(model, tok, text="12 mar 2021")
    box, (order, layer, head) = w.children[0], w.children[1].children
    assert "Figure" in capsys.readouterr().out
    box.value = "12 märz 2021"
    assert "Cannot read 'märz'" in capsys.readouterr().out
    box.value = "12 mar"
    assert "it has no year" in capsys.readouterr().out
    box.value = "09/25/2003"
    assert "there is no month 25" in capsys.readouterr().out
    order.value = "mdy"
    assert "Figure" in capsys.readouterr().out
    head.value = 1
    assert "Figure" in capsys.readouterr().out
    assert [o[0] for o in head.options][-1] == "mean" and layer.options == (("layer 0", 0),)
    assert order.options == (("day first (dmy)", "dmy"), ("month first (mdy)", "mdy"))


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
    assert (fig.axes[2].get_xlabel(), fig.axes[0].get_ylabel()) == ("source (keys)", "output (queries)")
    plt.close(fig)
    fig = cross_attention_grid(w, list("ab c"), ["1", "2", "3"], xlabel="<bos> + output so far (keys)",
                               ylabel="output token (queries)")
    assert fig.axes[2].get_xlabel() == "<bos> + output so far (keys)"
    assert fig.axes[0].get_ylabel() == "output token (queries)" and fig.axes[1].get_ylabel() == ""
    plt.close(fig)
    with pytest.raises(TypeError, match="cross_attention_grid: xlabel must be a str"):
        cross_attention_grid(w, list("ab c"), ["1", "2", "3"], xlabel=None)


def test_translator_view_flags_an_output_that_is_not_a_date():
    # An untrained model writes no date: the view says so instead of presenting an answer.
    tok = date_tokenizer()
    torch.manual_seed(0)
    model = Transformer(len(tok), len(tok), 16, 2, 1, 32, dropout=0.0, max_len=48).eval()
    fig = translator_view(model, tok, "12 march 2021", layer=0)
    assert "no answer: the model wrote" in fig.axes[0].get_title()
    assert "not a real date" in fig.axes[0].get_title()
    plt.close(fig)


def test_train_translator_cache_gives_the_same_weights(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTENTION_TUTORIAL_CACHE", str(tmp_path))
    # A smaller data set and validation log keep this test fast (they are part of the cache key).
    monkeypatch.setitem(TRANSLATOR_RECIPE, "n_train", 2_000)
    monkeypatch.setitem(TRANSLATOR_RECIPE, "n_val_logged", 20)
    model, tok, history = train_translator(seed=3, steps=3, device="cpu")
    assert history["cached"] is False and len(list(tmp_path.glob("translator-*.pt"))) == 1
    again, tok2, history2 = train_translator(seed=3, steps=3, device="cpu")
    assert history2["cached"] is True and tok2.itos == tok.itos
    fresh, _, history3 = train_translator(seed=3, steps=3, device="cpu", cache=False)
    assert history3["cached"] is False
    for name, value in fresh.state_dict().items():
        assert torch.equal(again.state_dict()[name], value), name
        assert torch.equal(model.state_dict()[name], value), name
    assert history2["loss"] == history3["loss"] and history2["val_acc"] == history3["val_acc"]
    assert not again.training
    other, _, h4 = train_translator(seed=4, steps=3, device="cpu")  # another key: trained
    assert h4["cached"] is False and len(list(tmp_path.glob("translator-*.pt"))) == 2
    assert not torch.equal(other.out_proj.weight, model.out_proj.weight)
    with pytest.raises(ValueError, match="steps must be an int >= 1"):
        train_translator(steps=0)
    with pytest.raises(TypeError, match="train_translator: seed must be an int, got str"):
        train_translator(seed="0")


def test_train_translator_keeps_a_snapshot_of_the_same_run(tmp_path, monkeypatch):
    """The recipe keeps the weights after ``snapshot_step`` steps (notebook 10's under-trained
    model): exactly the run's weights at that step, kept through the cache, rebuilt without
    touching the caller's random state; a run that stops before that step has none."""
    import helpers.translator as translator

    monkeypatch.setenv("ATTENTION_TUTORIAL_CACHE", str(tmp_path))
    for key, value in {"n_train": 2_000, "n_val_logged": 20, "log_every": 1, "snapshot_step": 2}.items():
        monkeypatch.setitem(TRANSLATOR_RECIPE, key, value)
    seen, real = [], translator.exact_match_accuracy

    def spy(model, *args, **kwargs):  # runs at every log step, just before the snapshot is taken
        seen.append({k: v.clone() for k, v in model.state_dict().items()})
        return real(model, *args, **kwargs)

    monkeypatch.setattr(translator, "exact_match_accuracy", spy)
    model, _, history = train_translator(seed=3, steps=4, device="cpu")
    assert history["snapshot"]["step"] == 2 and len(seen) == 4
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    early = translator_snapshot(history, device="cpu")
    assert torch.equal(torch.rand(3), expected)  # no reseeding
    assert not early.training
    for name, value in early.state_dict().items():
        assert torch.equal(value, seen[1][name]), name
    assert not torch.equal(early.out_proj.weight, model.out_proj.weight)
    _, _, cached = train_translator(seed=3, steps=4, device="cpu")
    assert cached["cached"] is True
    assert all(torch.equal(v, early.state_dict()[k])
               for k, v in translator_snapshot(cached, device="cpu").state_dict().items())
    with pytest.raises(ValueError, match="has no snapshot: it trained 2 steps"):
        translator_snapshot(train_translator(seed=3, steps=2, device="cpu", cache=False)[2])
    with pytest.raises(TypeError, match="must be the history train_translator returned, got list"):
        translator_snapshot([1, 2])


def test_train_translator_recipe_fits_the_budget():
    tok = date_tokenizer()
    model = make_translator(len(tok), device="cpu")
    assert count_parameters(model) <= 500_000
    assert model.pos.max_len == TRANSLATOR_RECIPE["max_len"]
    assert make_translator(len(tok), device="cpu", num_heads=1).encoder.layers[0].self_attn.num_heads == 1
    with pytest.raises(TypeError, match=r"make_translator: unknown recipe entries \['num_head'\]"):
        make_translator(len(tok), num_head=1)


def test_train_seq2seq_applies_augment_to_each_batch():
    tok = date_tokenizer()
    pairs = [("12-03-2021", "2021-03-12"), ("1.1.70", "1970-01-01")]
    seen = []

    def augment(src, gen):
        seen.append(src.clone())
        return src

    model = Transformer(len(tok), len(tok), 16, 2, 1, 32, dropout=0.0, max_len=16)
    train_seq2seq(model, pairs, tok, steps=3, batch_size=2, warmup_steps=1, augment=augment)
    assert len(seen) == 3 and all(s.shape[0] == 2 for s in seen)


def test_attention_maps_label_the_pieces_of_a_date():
    tok = date_tokenizer()
    torch.manual_seed(0)
    model = Transformer(len(tok), len(tok), 16, 2, 1, 32, dropout=0.0, max_len=48).eval()
    _, src_labels, out_labels, maps = attention_maps(model, tok, "Friday, 12 MARCH 2021")
    assert src_labels == ["<dmy>", "friday", ",", " ", "12", " ", "march", " ", "2021"]
    assert attention_maps(model, tok, "03/04/2021", order="mdy")[1][0] == "<mdy>"
    assert maps["cross"][0].shape[-1] == len(src_labels) and len(out_labels) == maps["cross"][0].shape[1]


def test_train_translator_trains_with_the_recipes_threads(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTENTION_TUTORIAL_CACHE", str(tmp_path))
    monkeypatch.setitem(TRANSLATOR_RECIPE, "n_train", 2_000)
    monkeypatch.setitem(TRANSLATOR_RECIPE, "n_val_logged", 20)
    before = torch.get_num_threads()
    seen = []
    import helpers.translator as translator

    real = translator.train_seq2seq

    def spy(*args, **kwargs):
        seen.append(torch.get_num_threads())
        return real(*args, **kwargs)

    monkeypatch.setattr(translator, "train_seq2seq", spy)
    _, _, history = train_translator(seed=5, steps=2, device="cpu", cache=False)
    assert seen == [TRANSLATOR_RECIPE["cpu_threads"]] == [history["threads"]] == [1]
    assert torch.get_num_threads() == before  # restored


def test_translator_view_title_fits_on_one_line_per_message():
    """Issue 34: the title (answer, the order's note, which attention) wrapped onto three lines.
    Now one line for the answer and one for the note; which attention is drawn is the axis label."""
    tok = date_tokenizer()
    torch.manual_seed(0)
    model = Transformer(len(tok), len(tok), 16, 2, 1, 32, dropout=0.0, max_len=48).eval()
    for text, lines in (("friday, 12 march 2021", 1), ("03/04/2021", 2)):
        fig = translator_view(model, tok, text, layer=0, order="dmy")
        assert len(fig.axes[0].get_title().split("\n")) == lines, fig.axes[0].get_title()
        assert "layer 0, mean of heads" in fig.axes[0].get_ylabel()
        plt.close(fig)


def test_part_positions_finds_each_part_once_or_says_none():
    tok = date_tokenizer()
    assert part_positions(tok.pieces("<dmy>friday, 12 march 2021"), "2021-03-12") == {
        "year": 8, "month": 6, "day": 4}
    assert part_positions(tok.pieces("<mdy>2014/feb/6"), "2014-02-06") == {"year": 1, "month": 3, "day": 5}
    assert part_positions(tok.pieces("<mdy>sat, the 3rd of december '33"), "2033-12-03") == {
        "year": 14, "month": 11, "day": 6}
    assert part_positions(tok.pieces("<dmy>03/03/2021"), "2021-03-03") is None  # day = month
    assert part_positions(tok.pieces("<dmy>21.12.21"), "2021-12-21") is None  # day = year's digits
    assert part_positions(tok.pieces("<dmy>12 march"), "2021-03-12") is None  # no year


def test_translate_hiding_nothing_is_translate_and_hiding_changes_the_input(trained):
    model, tok, _, _, val = trained
    sources = [s for s, _ in val[:20]]
    raw = translate(model, sources, tok, raw=True)
    assert translate_hiding(model, sources, tok, [[] for _ in sources]) == raw
    hidden = translate_hiding(model, sources, tok, [range(1, len(tok.encode(s))) for s in sources])
    assert len(hidden) == len(sources) and hidden != raw  # only the order token left to read
    with pytest.raises(ValueError, match="one list of pieces to hide per source"):
        translate_hiding(model, sources, tok, [[1]])


def test_output_probability_is_the_product_of_the_token_probabilities(trained):
    model, tok, _, _, val = trained
    sources = [s for s, _ in val[:3]]
    outputs = [t for _, t in val[:3]]
    outputs[1] = outputs[1][:4]  # outputs of other lengths are padded in the batch
    together = output_probability(model, sources, outputs, tok)
    for i, (s, o) in enumerate(zip(sources, outputs, strict=True)):
        src = torch.tensor([tok.encode(s)])
        tgt = torch.tensor([tok.encode(o, add_bos=True, add_eos=True)])
        with torch.no_grad():
            logits = model.eval()(src, tgt[:, :-1], None, target_mask(tgt[:, :-1]))  # (1, Lt, V)
        probs = torch.softmax(logits[0], -1).gather(-1, tgt[0, 1:, None])[:, 0]
        torch.testing.assert_close(together[i], probs.prod())
    assert ((0 < together) & (together <= 1)).all()
