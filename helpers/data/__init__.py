"""The data sets of the notebooks, generated from seeds (nothing is downloaded):

- ``dates`` (notebook 10): dates as people write them -> ISO dates, and the translator's tokenizer;
- ``tokenizers``: ``CharTokenizer``, one id per character (notebooks 09 and 12);
- ``bpe`` (notebook 15): ``ByteLevelBPE``, the byte-level BPE of SmolLM2 from a GGUF file's
  vocabulary and merges;
- ``toy_embeddings`` (notebooks 01 and 03): the hand-made sentence "the big cat chased a mouse";
- ``toy_language`` (notebooks 12 and 13): a small language with a parser and an exact entropy;
- ``repeated`` (notebook 14): random tokens that repeat.

The names of ``dates`` and ``tokenizers``, and ``ByteLevelBPE``, are also importable from here
(``from helpers.data import date_tokenizer``); the other data sets are used as modules
(``from helpers.data import toy_language as tl``).
"""

from . import bpe, repeated, toy_embeddings, toy_language
from .bpe import ByteLevelBPE
from .dates import (
    DATA_VERSION,
    DAY_STYLES,
    FIRST_DATE,
    HELD_OUT_GROUPS,
    LAST_DATE,
    MONTH_STYLES,
    ORDERS,
    READING_ORDERS,
    SEPARATORS,
    SPELLINGS,
    UNSEEN_FORMATS,
    WEEKDAY_STYLES,
    YEAR_STYLES,
    DateReading,
    DateStyle,
    DateTokenizer,
    check_date_text,
    date_splits,
    date_tokenizer,
    family_of,
    held_out_combination_pairs,
    held_out_group,
    held_out_group_pairs,
    held_out_styles,
    in_distribution_styles,
    iso_or_none,
    normalize_date_text,
    order_marker,
    parse_iso,
    read_date,
    reading_of,
    split_order,
)
from .tokenizers import CharTokenizer

__all__ = [
    "ByteLevelBPE",
    "CharTokenizer",
    "DATA_VERSION",
    "DAY_STYLES",
    "FIRST_DATE",
    "HELD_OUT_GROUPS",
    "LAST_DATE",
    "MONTH_STYLES",
    "ORDERS",
    "READING_ORDERS",
    "SEPARATORS",
    "SPELLINGS",
    "UNSEEN_FORMATS",
    "WEEKDAY_STYLES",
    "YEAR_STYLES",
    "check_date_text",
    "date_splits",
    "date_tokenizer",
    "DateReading",
    "DateStyle",
    "DateTokenizer",
    "family_of",
    "held_out_combination_pairs",
    "held_out_group",
    "held_out_group_pairs",
    "held_out_styles",
    "in_distribution_styles",
    "iso_or_none",
    "normalize_date_text",
    "order_marker",
    "parse_iso",
    "read_date",
    "reading_of",
    "split_order",
    "bpe",
    "repeated",
    "toy_embeddings",
    "toy_language",
]
