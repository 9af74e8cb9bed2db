"""Byte-level BPE, the tokenizer of GPT-2 and of SmolLM2 (notebook 15), applied from the vocabulary
and the merges that a GGUF file stores.

Text becomes token ids in four steps:

1. **special tokens** (``<|im_start|>``, ``<|im_end|>``, ...) are cut out of the text whole;
2. **pre-tokenisation** splits the rest into words with a regular expression (the one that the
   file's ``tokenizer.ggml.pre`` names), so that no merge ever crosses a word boundary;
3. each word's UTF-8 **bytes** become printable characters, one per byte (``bytes_to_unicode``):
   a space is ``Ġ``, a newline ``Ċ``, and any text at all can be written with 256 characters;
4. **BPE** merges the neighbouring pair with the lowest rank (the merge learned first), again and
   again, until no neighbouring pair is a merge (``bpe_merge``); each piece left is a token.

Decoding runs it backwards: token strings -> characters -> bytes -> UTF-8 text.

Everything here takes plain Python values (lists of strings, a dict of metadata); reading them out
of a GGUF file is the loader's job.
"""

from __future__ import annotations

import functools
import itertools
import math
import re
import sys
import unicodedata
from collections.abc import Iterable, Mapping, Sequence

from .._checks import as_bool, as_int, got, short

__all__ = ["GPT2_PATTERN", "PRE_TYPES", "ByteLevelBPE", "bpe_merge", "bytes_to_unicode",
           "pre_tokenize"]


# --- 3. bytes <-> printable characters ------------------------------------------------------

def bytes_to_unicode() -> dict[int, str]:
    """The 256 bytes -> 256 printable characters (GPT-2's table).

    The 188 bytes that are already printable, visible characters (``!``..``~``, ``¡``..``¬``,
    ``®``..``ÿ``) stand for themselves; the other 68 (controls, the space, ``\\xa0``, the soft
    hyphen) take the characters 256, 257, ... in byte order: the space (byte 32) becomes ``Ġ``
    (chr(288)), the newline (byte 10) ``Ċ`` (chr(266)).
    """
    visible = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1),
               *range(ord("®"), ord("ÿ") + 1)]
    table, extra = {}, 0
    for byte in range(256):
        if byte in visible:
            table[byte] = chr(byte)
        else:
            table[byte] = chr(256 + extra)
            extra += 1
    return table


# --- 2. pre-tokenisation -------------------------------------------------------------------

# The pre-tokenisation rule of GPT-2, as GPT-2's encoder.py, Hugging Face's ByteLevel
# pre-tokenizer and llama.cpp (llama-vocab.cpp) write it: a contraction, or an optional space and
# a run of letters, or of numbers, or of other symbols; or a run of whitespace (that leaves its
# last space to the next word when a word follows).
GPT2_PATTERN = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"

# What ``tokenizer.ggml.pre`` may say, and what it means here (llama-vocab.cpp):
#   "gpt2":   GPT2_PATTERN alone;
#   "smollm": every number character is a word of its own (\p{N}), then GPT2_PATTERN on the text
#             between them (llama.cpp's LLAMA_VOCAB_PRE_TYPE_SMOLLM; in SmolLM2's tokenizer.json:
#             Digits(individual_digits=True), then ByteLevel).
PRE_TYPES = ("gpt2", "smollm")

# Unicode's White_Space characters: what \s means in the Rust and C++ regexes of Hugging Face and
# llama.cpp. (Python's \s also counts \x1c-\x1f, which those do not.)
_WHITESPACE = "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"


def _char_class(keep) -> str:
    """The inside of a [...] class matching every character ``c`` with ``keep(c)``, as ranges."""
    chars = (chr(cp) for cp in range(sys.maxunicode + 1))
    parts = []
    for is_kept, run in itertools.groupby(chars, key=keep):
        if is_kept:
            run = list(run)
            parts.append(re.escape(run[0]) + (f"-{re.escape(run[-1])}" if len(run) > 1 else ""))
    return "".join(parts)


@functools.cache
def _letters() -> str:
    """\\p{L}, the letters (Unicode categories Lu, Ll, Lt, Lm, Lo), as a class for Python's re."""
    return _char_class(str.isalpha)


@functools.cache
def _numbers() -> str:
    """\\p{N}, the numbers (categories Nd, Nl, No: '7', 'Ⅻ', '½'), as a class for Python's re."""
    return _char_class(lambda c: c.isnumeric() and unicodedata.category(c)[0] == "N")


@functools.cache
def _regexes() -> tuple[re.Pattern, re.Pattern]:
    """GPT2_PATTERN in Python's re, which has no \\p{...}: the classes are spelled out; and the
    one-number-character split of "smollm". Built once, on first use (well under a second)."""
    L, N, S = _letters(), _numbers(), _WHITESPACE
    gpt2 = rf"'s|'t|'re|'ve|'m|'ll|'d| ?[{L}]+| ?[{N}]+| ?[^{S}{L}{N}]+|[{S}]+(?![^{S}])|[{S}]+"
    return re.compile(gpt2), re.compile(f"([{N}])")


def _check_pre(where: str, pre) -> str:
    if pre not in PRE_TYPES:
        raise ValueError(f"{where}: pre-tokenizer type (tokenizer.ggml.pre) {short(pre)} is not "
                         f"supported; expected one of {', '.join(map(repr, PRE_TYPES))}")
    return pre


def pre_tokenize(text: str, pre: str = "smollm") -> list[str]:
    """Split ``text`` into the words that BPE merges within: ``"It's 42!"`` -> ``['It', "'s",
    ' ', '4', '2', '!']`` with ``pre="smollm"`` (``['It', "'s", ' 42', '!']`` with "gpt2")."""
    if not isinstance(text, str):
        raise TypeError(f"pre_tokenize: text must be a str, got {got(text)}")
    _check_pre("pre_tokenize", pre)
    gpt2, one_number = _regexes()
    pieces = one_number.split(text) if pre == "smollm" else [text]  # numbers alone, and between
    return [word for piece in pieces for word in gpt2.findall(piece)]


# --- 4. the merges --------------------------------------------------------------------------

def _merge_pair(parts: list[str], pair: tuple[str, str]) -> list[str]:
    """Every occurrence of ``pair`` in ``parts`` joined into one part, left to right."""
    out, i = [], 0
    while i < len(parts):
        if i + 1 < len(parts) and (parts[i], parts[i + 1]) == pair:
            out.append(parts[i] + parts[i + 1])
            i += 2
        else:
            out.append(parts[i])
            i += 1
    return out


def bpe_merge(word: str, ranks: Mapping[tuple[str, str], int]) -> list[str]:
    """Split ``word`` (a string of byte characters) into tokens: start from single characters and
    merge the neighbouring pair of lowest rank, until no neighbouring pair has a rank."""
    parts = list(word)
    while len(parts) > 1:
        pairs = zip(parts[:-1], parts[1:], strict=True)  # the neighbouring pairs
        best = min(pairs, key=lambda pair: ranks.get(pair, math.inf))
        if best not in ranks:
            break
        parts = _merge_pair(parts, best)
    return parts


# --- the tokenizer --------------------------------------------------------------------------

# SmolLM2's chat template (ChatML) as its GGUF file stores it, with its default system prompt as
# the one free part: apply_chat_template renders exactly this template.
_CHATML_HEAD = ("{% for message in messages %}{% if loop.first and messages[0]['role'] != "
                "'system' %}{{ '<|im_start|>system\n")
_CHATML_TAIL = ("<|im_end|>\n' }}{% endif %}{{'<|im_start|>' + message['role'] + '\n' + "
                "message['content'] + '<|im_end|>' + '\n'}}{% endfor %}{% if "
                "add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}")
_CHATML = re.compile(re.escape(_CHATML_HEAD) + "([^'\\\\]*)" + re.escape(_CHATML_TAIL))


def _chatml(role: str, content: str) -> str:
    return f"<|im_start|>{role}\n{content}<|im_end|>\n"


def _str_list(where: str, name: str, value) -> list[str]:
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise TypeError(f"{where}: {name} must be a list of str, got {got(value)}")
    value = list(value)
    bad = next((v for v in value if not isinstance(v, str)), None)
    if bad is not None:
        raise TypeError(f"{where}: {name} must hold only str, got {got(bad)}")
    return value


class ByteLevelBPE:
    """A byte-level BPE tokenizer from a vocabulary, its merges and a pre-tokenizer type.

    ``tokens[i]`` is the string of token id ``i`` in byte characters (``'Ġthe'`` is " the");
    ``merges[r]`` is the merge of rank ``r``, two tokens separated by one space (``'Ġ t'``);
    ``pre`` names the pre-tokenisation rule (``PRE_TYPES``); ``special_tokens`` are tokens matched
    whole in the text (``'<|im_end|>'``), never merged. ``from_gguf_metadata`` builds one from a
    GGUF file's metadata.

    Bytes that have no token of their own are dropped before merging, as Hugging Face's tokenizer
    drops them (``missing_bytes``: SmolLM2's vocabulary lacks 21 of the 256; 15 of them occur in
    no UTF-8 text of assigned characters, the other 6 are rare control characters such as 0x04).
    """

    def __init__(self, tokens: Sequence[str], merges: Sequence[str], pre: str,
                 special_tokens: Iterable[str] = (), *, bos_token_id: int | None = None,
                 eos_token_id: int | None = None, add_bos: bool = False, add_eos: bool = False,
                 chat_template: str | None = None):
        where = "ByteLevelBPE"
        self.pre = _check_pre(where, pre)
        self.id_to_token = _str_list(where, "tokens", tokens)
        if not self.id_to_token:
            raise ValueError(f"{where}: tokens is empty; expected the vocabulary, one str per id")
        self.token_to_id = {t: i for i, t in enumerate(self.id_to_token)}
        if len(self.token_to_id) < len(self.id_to_token):
            dup = next(t for i, t in enumerate(self.id_to_token) if self.token_to_id[t] != i)
            raise ValueError(f"{where}: tokens must be distinct, but {dup!r} occurs twice")
        self.ranks = self._read_merges(_str_list(where, "merges", merges))
        self.special_tokens = self._read_specials(_str_list(where, "special_tokens", special_tokens))
        self.bos_token_id = self._optional_id("bos_token_id", bos_token_id)
        self.eos_token_id = self._optional_id("eos_token_id", eos_token_id)
        self.add_bos, self.add_eos = as_bool(where, "add_bos", add_bos), as_bool(where, "add_eos", add_eos)
        for flag, name in ((add_bos, "bos"), (add_eos, "eos")):
            if flag and getattr(self, f"{name}_token_id") is None:
                raise ValueError(f"{where}: add_{name}=True needs a {name}_token_id")
        if chat_template is not None and not isinstance(chat_template, str):
            raise TypeError(f"{where}: chat_template must be a str or None, got {got(chat_template)}")
        self.chat_template = chat_template
        self.byte_to_char = bytes_to_unicode()
        self.char_to_byte = {c: b for b, c in self.byte_to_char.items()}
        self.missing_bytes = [b for b, c in self.byte_to_char.items() if c not in self.token_to_id]
        self._special_split = re.compile(  # the longest first, so a longer special token wins
            "(" + "|".join(map(re.escape, sorted(self.special_tokens, key=len, reverse=True))) + ")")
        self._word_ids = functools.lru_cache(maxsize=1 << 16)(self._encode_word)

    def _read_merges(self, merges: list[str]) -> dict[tuple[str, str], int]:
        ranks = {}
        for rank, merge in enumerate(merges):
            pair = tuple(merge.split(" "))
            if len(pair) != 2 or not all(pair):
                raise ValueError(f"ByteLevelBPE: merge {rank} is {merge!r}; expected two tokens "
                                 f"separated by one space, e.g. 'Ġ t'")
            if pair[0] + pair[1] not in self.token_to_id:
                raise ValueError(f"ByteLevelBPE: merge {rank} ({merge!r}) makes "
                                 f"{pair[0] + pair[1]!r}, which is not in the vocabulary; are the "
                                 f"tokens and merges from one file?")
            ranks.setdefault(pair, rank)
        return ranks

    def _read_specials(self, specials: list[str]) -> dict[str, int]:
        unknown = [s for s in specials if s not in self.token_to_id]
        if unknown:
            raise ValueError(f"ByteLevelBPE: special tokens {unknown[:5]} are not in the vocabulary")
        if "" in specials:
            raise ValueError("ByteLevelBPE: a special token cannot be the empty string")
        return {s: self.token_to_id[s] for s in specials}

    def _optional_id(self, name: str, value) -> int | None:
        return None if value is None else self._check_id("ByteLevelBPE", value, name)

    @classmethod
    def from_gguf_metadata(cls, fields: Mapping[str, object]) -> ByteLevelBPE:
        """The tokenizer that a GGUF file's metadata describes: ``fields`` maps its key names
        (``tokenizer.ggml.tokens``, ``.merges``, ``.pre``, ``.token_type``, ``.bos_token_id``, ...,
        ``tokenizer.chat_template``) to plain values. Tokens of type 3 (control) and 4 (user
        defined) are the special tokens, as in llama.cpp."""
        if not isinstance(fields, Mapping):
            raise TypeError(f"from_gguf_metadata: fields must be a dict of GGUF key -> value, "
                            f"got {got(fields)}")
        key = "tokenizer.ggml."
        missing = [k for k in ("tokens", "merges", "pre") if key + k not in fields]
        if missing:
            raise ValueError(f"from_gguf_metadata: fields lacks {[key + k for k in missing]}; "
                             f"expected the metadata of a GGUF file with a BPE vocabulary")
        model = fields.get(key + "model", "gpt2")
        if model != "gpt2":
            raise ValueError(f"from_gguf_metadata: tokenizer.ggml.model is {model!r}; only 'gpt2' "
                             f"(byte-level BPE) is supported")
        tokens = _str_list("from_gguf_metadata", key + "tokens", fields[key + "tokens"])
        types = list(fields.get(key + "token_type", [1] * len(tokens)))
        if len(types) != len(tokens):
            raise ValueError(f"from_gguf_metadata: {len(types)} token types for {len(tokens)} tokens")
        return cls(tokens, fields[key + "merges"], fields[key + "pre"],
                   [t for t, kind in zip(tokens, types, strict=True) if kind in (3, 4)],
                   bos_token_id=fields.get(key + "bos_token_id"),
                   eos_token_id=fields.get(key + "eos_token_id"),
                   add_bos=bool(fields.get(key + "add_bos_token", False)),
                   add_eos=bool(fields.get(key + "add_eos_token", False)),
                   chat_template=fields.get("tokenizer.chat_template"))

    def __len__(self) -> int:
        return len(self.id_to_token)

    @property
    def vocab_size(self) -> int:
        return len(self.id_to_token)

    def __repr__(self) -> str:
        return (f"ByteLevelBPE({len(self)} tokens, {len(self.ranks)} merges, pre={self.pre!r}, "
                f"{len(self.special_tokens)} special tokens)")

    # --- text -> ids ---

    def _encode_word(self, word: str) -> tuple[int, ...]:
        chars = "".join(self.byte_to_char[b] for b in word.encode("utf-8"))
        chars = "".join(c for c in chars if c in self.token_to_id)  # bytes with no token: dropped
        return tuple(self.token_to_id[part] for part in bpe_merge(chars, self.ranks))

    def _split_special(self, text: str) -> list[tuple[str, bool]]:
        """``text`` as (piece, is_special) pairs: special tokens cut out whole."""
        if not self.special_tokens:
            return [(text, False)]
        pieces = self._special_split.split(text)  # text, special, text, special, ..., text
        return [(p, i % 2 == 1) for i, p in enumerate(pieces) if p]

    def encode(self, text: str, add_special: bool = True, parse_special: bool = True) -> list[int]:
        """``text`` -> token ids.

        ``add_special``: add the BOS / EOS tokens the file asks for (``add_bos``, ``add_eos``;
        SmolLM2's file asks for neither). ``parse_special``: a special token's text (``'<|im_end|>'``)
        becomes its id; with False it is tokenised as ordinary text. (llama.cpp's names.)
        """
        if not isinstance(text, str):
            raise TypeError(f"encode: text must be a str, got {got(text)}")
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as err:
            raise ValueError(f"encode: text holds {text[err.start]!r} at position {err.start}, a "
                             f"lone surrogate that UTF-8 cannot encode") from None
        as_bool("encode", "add_special", add_special)
        as_bool("encode", "parse_special", parse_special)
        ids = [self.bos_token_id] if add_special and self.add_bos else []
        pieces = self._split_special(text) if parse_special else [(text, False)]
        for piece, special in pieces:
            if special:
                ids.append(self.special_tokens[piece])
            else:
                for word in pre_tokenize(piece, self.pre):
                    ids.extend(self._word_ids(word))
        return ids + ([self.eos_token_id] if add_special and self.add_eos else [])

    # --- ids -> text ---

    def _check_id(self, where: str, value, name: str = "id") -> int:
        i = as_int(where, name, value)
        if not 0 <= i < len(self.id_to_token):
            raise ValueError(f"{where}: {name} {i} is outside the vocabulary of "
                             f"{len(self.id_to_token)} tokens (ids 0..{len(self.id_to_token) - 1})")
        return i

    def _ids(self, where: str, ids) -> list[int]:
        if hasattr(ids, "ndim") and ids.ndim != 1:
            raise ValueError(f"{where}: ids must be one sequence of ids (1-D), got shape "
                             f"{tuple(ids.shape)}")
        if isinstance(ids, (str, bytes)) or not isinstance(ids, Iterable):
            raise TypeError(f"{where}: ids must be a sequence of int token ids (a list or a 1-D "
                            f"tensor), got {got(ids)}")
        return [self._check_id(where, i) for i in ids]

    def tokens_of(self, ids: Iterable[int]) -> list[str]:
        """The token strings of ``ids``, as the vocabulary writes them (``'Ġthe'``)."""
        return [self.id_to_token[i] for i in self._ids("tokens_of", ids)]

    def decode(self, ids: Iterable[int]) -> str:
        """Token ids -> text. Special tokens give their text (``'<|im_end|>'``); bytes that are not
        complete UTF-8 (a token cut inside a character) give ``'\\ufffd'``."""
        data = bytearray()
        for i in self._ids("decode", ids):
            token = self.id_to_token[i]
            if token in self.special_tokens:
                data += token.encode("utf-8")
            else:
                data += bytes(self.char_to_byte[c] for c in token)
        return data.decode("utf-8", errors="replace")

    # --- chat ---

    def apply_chat_template(self, messages: Sequence[Mapping[str, str]],
                            add_generation_prompt: bool = True) -> str:
        """A conversation as the model saw it in training (ChatML): each message is
        ``<|im_start|>role\\ncontent<|im_end|>\\n``; a conversation that does not start with a
        system message gets the template's default one; ``add_generation_prompt`` ends with
        ``<|im_start|>assistant\\n``, the model's turn. Renders SmolLM2's template only."""
        where = "apply_chat_template"
        match = _CHATML.fullmatch(self.chat_template or "")
        if match is None:
            raise ValueError(f"{where}: this tokenizer's chat template is "
                             f"{short(self.chat_template)}; only SmolLM2's ChatML template is "
                             f"supported (render other templates with jinja2)")
        as_bool(where, "add_generation_prompt", add_generation_prompt)
        if isinstance(messages, (str, Mapping)) or not isinstance(messages, Sequence):
            raise TypeError(f"{where}: messages must be a list of dicts like "
                            f"{{'role': 'user', 'content': 'Hi'}}, got {got(messages)}")
        if not messages:
            raise ValueError(f"{where}: messages is empty; expected at least one message")
        for n, message in enumerate(messages):
            if not (isinstance(message, Mapping) and isinstance(message.get("role"), str)
                    and isinstance(message.get("content"), str)):
                raise TypeError(f"{where}: messages[{n}] must be a dict with str 'role' and "
                                f"'content', got {got(message)}")
        text = ""
        if messages[0]["role"] != "system":
            text += _chatml("system", match.group(1))
        text += "".join(_chatml(m["role"], m["content"]) for m in messages)
        return text + ("<|im_start|>assistant\n" if add_generation_prompt else "")
