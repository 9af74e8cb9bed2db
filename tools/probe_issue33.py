"""Probe the cases of issue 33 and count, for the code checked out, how many give a silent wrong
answer, a raw traceback (an error that is not a ValueError/TypeError naming the input), or an
answer/refusal as promised. Run: python tools/probe_issue33.py (add -v for every case).

The translator cases use a stand-in model that writes the wrong dates the issue reports the
trained translators wrote (seeds 0-2): the probe checks what the API lets through, not the model."""

from __future__ import annotations

import os
import sys
import traceback
import warnings

import torch

warnings.simplefilter("ignore")
RESULTS: list[tuple[str, str, str]] = []


def case(name, expect, names=()):
    """expect(): returns 'ok' or 'silent' (wrong without an error); an exception is 'ok' when it is
    a ValueError/TypeError whose message is a sentence, else 'raw'."""
    try:
        verdict, detail = expect()
    except (ValueError, TypeError) as err:
        text = str(err)
        where = traceback.extract_tb(err.__traceback__)[-1].filename  # raised by helpers, or deep inside?
        raw = ("invalid literal for int()" in text or len(text) > 2000
               or os.sep + "helpers" + os.sep not in where
               or bool(names) and not any(n in text for n in names))  # must name the argument
        verdict, detail = ("raw" if raw else "ok"), f"{type(err).__name__}: {text[:90]}"
    except Exception as err:  # noqa: BLE001
        verdict, detail = "raw", f"{type(err).__name__}: {str(err)[:90]}"
    RESULTS.append((name, verdict, detail))


# --- 1. The translator ----------------------------------------------------------------------
def translator_cases():
    import helpers.translator as tr
    from helpers.data import date_tokenizer
    from helpers.transformer import Transformer

    tok = date_tokenizer()
    torch.manual_seed(0)
    model = Transformer(len(tok), len(tok), 16, 2, 1, 32, dropout=0.0, max_len=48).eval()
    real = tr.greedy_decode

    def writes(text):
        ids = tok.encode(text, add_bos=True, add_eos=True)
        return lambda m, src, *a, **k: torch.tensor([ids] * src.shape[0])

    # (text, order or None for the default, what the model wrote (issue 33), the right date or None
    # when the text cannot be read without a choice)
    wrong = [
        ("<dmy> 03/04/2021", {}, "2021-03-04", "2021-04-03"),
        ("2021-03-12 Fri", {"order": "dmy"}, "2021-12-03", "2021-03-12"),
        ("Mon, the 23rd of Nov. '20", {"order": "dmy"}, "2011-11-23", "2020-11-23"),
        ("Sat, the 7th of July '12", {"order": "dmy"}, "2007-07-12", "2012-07-07"),
        ("12MAR21", {"order": "dmy"}, "2031-03-12", "2021-03-12"),
        ("Sun., Sept. 30th, '07", {"order": "dmy"}, "2030-09-07", "2007-09-30"),
        ("03/12th/2021", {"order": "dmy"}, "2021-12-03", "2021-03-12"),
        ("03/12/2021", {}, "2021-12-03", None),
        ("21-12-31", {}, "2031-12-21", None),
        ("05/06/07", {}, "2007-06-05", None),
    ]
    for text, kw, wrote, right in wrong:
        def run(text=text, kw=kw, wrote=wrote, right=right):
            tr.greedy_decode = writes(wrote)
            try:
                (answer,) = tr.translate(model, [text], tok, **kw)
            finally:
                tr.greedy_decode = real
            shown = answer if tr.iso_or_none(answer) else None
            if shown is not None and shown != right:
                return "silent", f"returned {answer}"
            return "ok", answer[:90]
        case(f"translate {text!r} {kw}", run)
    for fn in ("translate", "rules_reading", "check_date_text", "widget"):
        def run(fn=fn):
            text = "12/³/2021"
            if fn == "translate":
                tr.translate(model, [text], tok, order="dmy")
            elif fn == "rules_reading":
                return ("ok", "") if tr.rules_reading(text, "dmy") is None else ("silent", "read")
            elif fn == "check_date_text":
                from helpers.data import check_date_text
                return ("ok", "") if check_date_text(text, tok) else ("silent", "accepted")
            else:
                from helpers.widgets.translator import translator_view
                out = translator_view(model, tok, text)
                return ("ok", out[:80]) if isinstance(out, str) else ("silent", "drawn")
            return "silent", "no error"
        case(f"superscript digit: {fn}", run)

    def long_input():
        try:
            tr.translate(model, ["1" * 100_000], tok)
        except ValueError as err:
            return ("ok" if len(str(err)) < 2000 else "raw"), f"message of {len(str(err))} characters"
        return "silent", "accepted"
    case("100,000-character input", long_input)

    # Complete dates people write: read (and then right) or refused naming what to change
    people = [("Fri, 12 Mar 2021 10:30:00 +0000", "time"), ("2021-03-12T10:30:00", "time"),
              ("12 March 2021 (Friday)", "brackets"), ("on 12 March 2021", "leave out 'on'"),
              ("12–03–2021", None), ("Mar 12 ’21", None), ("Th 11 Mar 2021", "'thu'"),
              ("Tu 9 Mar 2021", "'tue'"), ("12th day of December, 2001", "leave out 'day'")]
    for text, hint in people:
        def run(text=text, hint=hint):
            from helpers.data import check_date_text
            message = check_date_text(text, tok, None, "dmy")
            if message is None:
                return "ok", f"read: {tr.rules_reading(text, 'dmy')}"
            ok = hint is not None and hint.lower() in message.lower()
            return ("ok" if ok else "unhelpful"), message[:90]
        case(f"people write {text!r}", run)


# --- 2. The cache -----------------------------------------------------------------------------
def cache_cases():
    import os
    import tempfile

    import numpy as np
    from torch import nn

    from helpers.cache import train_once

    os.environ["ATTENTION_TUTORIAL_CACHE"] = tempfile.mkdtemp()

    def fresh():
        torch.manual_seed(0)
        return nn.Linear(3, 2)

    def fit_with(data):
        def fit(model, steps):
            opt = torch.optim.SGD(model.parameters(), lr=0.1)
            for _ in range(steps):
                loss = model(data).pow(2).mean()
                opt.zero_grad()
                loss.backward()
                opt.step()
            return {"loss": [loss.item()]}
        return fit

    def redefined():
        train_once(fit_with(torch.ones(4, 3)), fresh(), 3)
        b = train_once(fit_with(2 * torch.ones(4, 3)), fresh(), 3)
        return ("silent", "old weights") if b["cached"] else ("ok", "")
    case("cache: two closures of one name (a redefined fit)", redefined)

    def lambdas():
        train_once(lambda m, s: {"loss": [1.0]}, fresh(), 3)
        b = train_once(lambda m, s: {"loss": [2.0]}, fresh(), 3)
        return ("silent", "the first lambda's entry") if b["cached"] else ("ok", "")
    case("cache: two lambdas", lambdas)

    def source_edit():
        def fit(model, steps):
            return {"loss": [1.0]}
        train_once(fit, fresh(), 5)

        def fit(model, steps):  # noqa: F811
            return {"loss": [float(steps)]}
        b = train_once(fit, fresh(), 5)
        return ("silent", "old entry") if b["cached"] else ("ok", "")
    case("cache: a cell that redefines fit", source_edit)

    def numpy_history():
        def fit(model, steps):
            return {"curve": np.arange(3.0)}
        train_once(fit, fresh(), 7)
        b = train_once(fit, fresh(), 7)
        return ("ok", "") if b["cached"] else ("silent", "trained again (never loads)")
    case("cache: a history with a NumPy array", numpy_history)


# --- 3. Part II helpers -----------------------------------------------------------------------
def part2_cases():
    from torch.utils.flop_counter import FlopCounterMode

    from helpers.gpt import GPT, flops_per_token, forward_flops
    from helpers.modern import GroupedQueryAttention, ModernBlock, RMSNorm
    from helpers.positional import apply_rope

    def counted(fn):
        with FlopCounterMode(display=False) as counter:
            fn()
        return counter.get_total_flops()

    def windowed():
        torch.manual_seed(0)
        return GPT(11, d_model=16, num_heads=2, num_layers=2, d_ff=32, max_len=64, positions="rope",
                   window=4, sinks=2).eval()

    def fpt():
        m = windowed()
        cache = m.new_cache()
        with torch.no_grad():
            m(torch.zeros(1, 39, dtype=torch.long), cache=cache)
            want = counted(lambda: m(torch.zeros(1, 1, dtype=torch.long), cache=cache))
        got = flops_per_token(m, 40)
        return ("ok", f"{got}") if got == want else ("silent", f"{got} vs FlopCounterMode {want}")
    case("flops_per_token with window + sinks", fpt)

    def ff():
        m = windowed()
        with torch.no_grad():
            want = counted(lambda: m(torch.zeros(1, 40, dtype=torch.long)))
        got = forward_flops(m, 40)
        return ("ok", f"{got}") if got == want else ("silent", f"{got} vs FlopCounterMode {want}")
    case("forward_flops with window + sinks", ff)

    for dtype, big in ((torch.float32, 1e20), (torch.float64, 1e200)):
        def rms(dtype=dtype, big=big):
            x = torch.tensor([[big, -big, 2 * big, 0.0]], dtype=dtype)
            out = RMSNorm(4).to(dtype)(x)
            ref = x / (x.abs().max() * ((x / x.abs().max()).pow(2).mean(-1, keepdim=True)).sqrt())
            close = torch.allclose(out, ref, rtol=1e-5)
            return ("ok", "") if close else ("silent", f"{out.tolist()}")
        case(f"RMSNorm {dtype} at {big:g}", rms)

    def rope64():
        x = torch.randn(1, 1, 1, 8, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
        pos = torch.tensor([1e6], dtype=torch.float64)
        got = apply_rope(x, pos)
        inv = 1.0 / 10000.0 ** (torch.arange(0, 8, 2, dtype=torch.float64) / 8)
        ang = pos[:, None] * inv  # (1, 4)
        c, s = ang.cos(), ang.sin()
        x1, x2 = x[..., 0::2], x[..., 1::2]
        ref = torch.stack([x1 * c - x2 * s, x1 * s + x2 * c], -1).flatten(-2)
        err = float((got - ref).abs().max())
        return ("ok", f"{err:.1e}") if err < 1e-9 else ("silent", f"error {err:.1e}")
    case("apply_rope float64 at position 1e6", rope64)

    for bad in ([1.5], [True]):
        def sup(bad=bad):
            m = windowed()
            m.generate(torch.zeros(1, 2, dtype=torch.long), 2, temperature=0, suppress=bad)
            return "silent", "accepted (bans id 1)"
        case(f"generate(suppress={bad})", sup)

    def comp():
        from helpers.induction import composition_score
        v = composition_score(torch.zeros(4, 4), torch.eye(4))
        return ("silent", f"{v}") if v != v else ("ok", f"{v}")
    case("composition_score(zeros, eye)", comp)

    def gpt_bias():
        m = GPT(11, d_model=16, num_heads=2, num_layers=1, d_ff=32, bias=False, norm="layer")
        biases = [n for n, p in m.named_parameters() if n.endswith("bias")]
        return ("silent", f"{biases[:3]}") if biases else ("ok", "")
    case("GPT(bias=False, norm='layer') biases", gpt_bias)

    def gqa_mask_heads():
        torch.manual_seed(0)
        attn = GroupedQueryAttention(8, 2, 1)
        x = torch.randn(2, 3, 8)
        mask = torch.ones(2, 3, 3, dtype=torch.bool)
        mask[1] = torch.eye(3, dtype=torch.bool)  # example 1: each query sees only itself
        out = attn(x, x, x, mask)
        ref = torch.cat([attn(x[:1], x[:1], x[:1], mask[:1]), attn(x[1:], x[1:], x[1:], mask[1:])])
        return ("ok", "") if torch.allclose(out, ref, atol=1e-6) else ("silent", "mask applied per head")
    case("GroupedQueryAttention 3-D mask, B == h", gqa_mask_heads)

    def gqa_mask_batch():
        attn = GroupedQueryAttention(8, 2, 1)
        x = torch.randn(2, 3, 8)
        attn(x, x, x, torch.ones(1, 3, 3, dtype=torch.bool)[[0, 0, 0]])  # batch 3 for B = 2
        return "silent", "accepted"
    case("GroupedQueryAttention 3-D mask of another batch size", gqa_mask_batch)

    for factor in (2.0, 1e300):
        def ntk(factor=factor):
            torch.manual_seed(0)
            m = GPT(11, d_model=4, num_heads=2, num_layers=1, d_ff=8, max_len=16, positions="rope")
            m.set_rope_scaling("ntk", factor)
            out = m(torch.zeros(1, 3, dtype=torch.long))
            return ("ok", "") if torch.isfinite(out).all() else ("silent", "non-finite")
        case(f"set_rope_scaling('ntk', {factor:g}) head_dim 2", ntk)

    def not_gpt():
        forward_flops(torch.nn.Linear(3, 3), 4)
        return "silent", "counted"
    case("forward_flops on a Linear", not_gpt)

    def not_gpt2():
        flops_per_token(torch.nn.Linear(3, 3), 4)
        return "silent", "counted"
    case("flops_per_token on a Linear", not_gpt2)

    def share():
        from helpers.induction import copying_share
        copying_share(torch.ones(0, 0))
        return "silent", "returned"
    case("copying_share(ones(0, 0))", share)

    def meta_block():
        block = ModernBlock(8, 2, 1, 16, rope=True, qk_norm=True, norm="rms").to("meta")
        out = block(torch.zeros(1, 3, 8, device="meta"), window=2, sinks=1)
        return ("ok", "") if out.device.type == "meta" else ("silent", "")
    case("ModernBlock on 'meta'", meta_block)

    def meta_gpt():
        m = GPT(11, d_model=8, num_heads=2, num_layers=1, d_ff=16, positions="rope").to("meta")
        out = m(torch.zeros(1, 3, dtype=torch.long, device="meta"))
        return ("ok", "") if out.device.type == "meta" else ("silent", "")
    case("GPT on 'meta'", meta_gpt)

    from helpers.widgets.masks import build_mask
    for length, n_pad in ((4.0, 1), (True, 0), ("4", 1), (4, 1.0), (4, True), (4, "1")):
        def mask(length=length, n_pad=n_pad):
            build_mask("padding", length, n_pad)
            return "silent", "built"
        case(f"build_mask length={length!r} n_pad={n_pad!r}", mask, names=("length", "n_pad"))


if __name__ == "__main__":
    for group in (translator_cases, cache_cases, part2_cases):
        try:
            group()
        except Exception as err:  # noqa: BLE001
            RESULTS.append((group.__name__, "raw", f"the group stopped: {type(err).__name__}: {err}"))
    for name, verdict, detail in RESULTS:
        if "-v" in sys.argv or verdict != "ok":
            print(f"{verdict:9} {name}: {detail}")
    counts = {v: sum(r[1] == v for r in RESULTS) for v in ("ok", "silent", "raw", "unhelpful")}
    print(f"{len(RESULTS)} cases: {counts['silent']} silent wrong, {counts['raw']} raw tracebacks, "
          f"{counts['unhelpful']} refused without saying what to change, {counts['ok']} as promised")
