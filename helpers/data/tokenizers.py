"""Tokenizers: text to ids and back. ``CharTokenizer`` gives one id per character (notebooks 09 and
12); the translator's ``DateTokenizer`` (one id per piece of a date) builds on it in ``dates``."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

__all__ = ["CharTokenizer"]


def _cut(text: str, n: int = 60) -> str:
    return repr(text if len(text) <= n else text[:n] + "…")


def _token_id(value) -> int:
    """One token id as an int; a float, bool or str is refused (int(2.7) would silently be 2)."""
    if hasattr(value, "item") and hasattr(value, "dim"):  # a 0-d tensor
        value = value.item()
    if isinstance(value, bool) or not (isinstance(value, int) or hasattr(value, "__index__")):
        raise TypeError(f"decode: each id must be an int, got {type(value).__name__} {value!r}")
    return int(value.__index__())


class CharTokenizer:
    """One id per character, plus ``<pad>`` (0), ``<bos>`` (1) and ``<eos>`` (2).

    Build it from texts (``CharTokenizer(texts)``): the characters are sorted, so the same texts
    always give the same ids. ``encode`` raises ValueError naming characters it does not know.
    """

    PAD, BOS, EOS = "<pad>", "<bos>", "<eos>"

    def __init__(self, texts: Iterable[str]):
        if not isinstance(texts, Iterable):
            raise TypeError(f"CharTokenizer: texts must be an iterable of str (e.g. a list of "
                            f"sentences), got {type(texts).__name__}")
        texts = list(texts)
        bad = next((t for t in texts if not isinstance(t, str)), None)
        if bad is not None:
            raise TypeError(f"CharTokenizer: texts must hold only str, got a {type(bad).__name__} "
                            f"({_cut(repr(bad), 30)})")
        chars = sorted({c for t in texts for c in t})
        self.itos: list[str] = [self.PAD, self.BOS, self.EOS, *chars]
        self.stoi: dict[str, int] = {s: i for i, s in enumerate(self.itos)}
        self.pad_id, self.bos_id, self.eos_id = 0, 1, 2

    def __len__(self) -> int:
        return len(self.itos)

    def __repr__(self) -> str:
        return f"CharTokenizer({len(self)} tokens: 3 special + {len(self) - 3} characters)"

    def unknown(self, text: str) -> list[str]:
        """The distinct characters of ``text`` this tokenizer has no id for, in order of appearance."""
        return list(dict.fromkeys(c for c in text if c not in self.stoi))

    def encode(self, text: str, add_bos: bool = False, add_eos: bool = False) -> list[int]:
        """'12 mar' -> list of ids (optionally framed by bos / eos)."""
        if not isinstance(text, str):
            raise TypeError(f"encode: text must be a str, got {type(text).__name__}")
        try:
            ids = [self.stoi[c] for c in text]
        except KeyError:
            bad = self.unknown(text)
            known = "".join(self.itos[3:])
            raise ValueError(f"unknown character(s) {', '.join(map(repr, bad[:10]))} in "
                             f"{_cut(text)}; this tokenizer knows only {known!r}") from None
        return [self.bos_id] * add_bos + ids + [self.eos_id] * add_eos

    def decode(self, ids: Sequence[int] | Iterable[int]) -> str:
        """ids -> text: skips pad and bos, stops at the first eos.

        ``ids`` is one sequence: a list or a 1-D tensor. A 2-D tensor of one row (what
        ``greedy_decode`` returns for one sentence, shape (1, L)) is decoded as that row; a batch
        of several rows raises ValueError (decode each row: ``[tok.decode(r) for r in ys]``)."""
        if hasattr(ids, "dim") and ids.dim() == 2:
            if ids.shape[0] != 1:
                raise ValueError(
                    f"decode takes one sequence of ids, got a batch of shape {tuple(ids.shape)}; "
                    f"decode each row: [tok.decode(row) for row in ids]")
            ids = ids[0]
        elif hasattr(ids, "dim") and ids.dim() > 2:
            raise ValueError(f"decode takes one sequence of ids (L,) or (1, L), got shape "
                             f"{tuple(ids.shape)}")
        if isinstance(ids, (str, bytes)) or not isinstance(ids, Iterable):
            raise TypeError(f"decode: ids must be a sequence of int token ids (a list or a 1-D "
                            f"tensor), got {type(ids).__name__}")
        if hasattr(ids, "dtype") and (ids.dtype.is_floating_point or ids.dtype.is_complex
                                      or str(ids.dtype) == "torch.bool"):
            raise TypeError(f"decode: ids must be integer token ids, got a tensor of {ids.dtype}")
        out = []
        for i in ids:
            if isinstance(i, (list, tuple)) or (hasattr(i, "dim") and i.dim() > 0):
                raise ValueError("decode takes one sequence of ids, got a nested list (a batch?); "
                                 "decode each row: [tok.decode(row) for row in ids]")
            i = _token_id(i)
            if i == self.eos_id:
                break
            if i in (self.pad_id, self.bos_id):
                continue
            if not 0 <= i < len(self.itos):
                raise ValueError(f"id {i} is outside this tokenizer's vocabulary of {len(self)} tokens")
            out.append(self.itos[i])
        return "".join(out)
