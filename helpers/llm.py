"""Notebook 15: a real language model (SmolLM2-135M) in the tutorial's own ``GPT``.

``gpt_config(metadata)`` reads the architecture from a GGUF file's metadata into ``GPT``'s
arguments; ``gguf_name_map(num_layers)`` says which tensor of the file is which parameter of our
model; ``load_gguf_weights(model, tensors)`` copies dequantised tensors in, checking that every
parameter gets exactly one tensor of its shape; ``load_smollm2()`` does all of it for the
installed file. No permutation of the query and key rows is needed: llama.cpp stores them in the
adjacent-pair order of RoPE that ``helpers.apply_rope`` uses (notebook 06).
"""

from __future__ import annotations

from contextlib import contextmanager

import torch

from .data.bpe import ByteLevelBPE
from .data.gguf_file import GGUFFile, dequantize, read_gguf
from .gpt import GPT

# Which metadata key of a Llama GGUF file gives which argument of GPT (the prefix "llama." is the
# architecture's name).
CONFIG_KEYS = {
    "num_layers": "block_count",
    "d_model": "embedding_length",
    "d_ff": "feed_forward_length",
    "num_heads": "attention.head_count",
    "num_kv_heads": "attention.head_count_kv",
    "rope_base": "rope.freq_base",
    "norm_eps": "attention.layer_norm_rms_epsilon",
    "max_len": "context_length",
}

# Per block: the file's tensor name (after "blk.{i}.") -> our parameter (after "blocks.{i}.").
BLOCK_NAMES = {
    "attn_norm.weight": "norm1.weight",
    "attn_q.weight": "self_attn.q_proj.weight",
    "attn_k.weight": "self_attn.k_proj.weight",
    "attn_v.weight": "self_attn.v_proj.weight",
    "attn_output.weight": "self_attn.out_proj.weight",
    "ffn_norm.weight": "norm2.weight",
    "ffn_gate.weight": "feed_forward.gate.weight",
    "ffn_up.weight": "feed_forward.up.weight",
    "ffn_down.weight": "feed_forward.down.weight",
}
OUTSIDE_BLOCKS = {"token_embd.weight": "tok_embed.weight", "output_norm.weight": "norm.weight"}


def gpt_config(metadata: dict) -> dict:
    """``GPT``'s arguments for the Llama model a GGUF file describes: RMSNorm, RoPE, SwiGLU, no
    biases; the output layer tied to the embedding unless the file has its own ``output.weight``
    (pass ``tie_weights`` yourself then)."""
    if not isinstance(metadata, dict):
        raise TypeError(f"gpt_config: metadata must be a dict (GGUFFile.metadata), got {type(metadata).__name__}")
    arch = metadata.get("general.architecture")
    if arch != "llama":
        raise ValueError(f"gpt_config: the file describes architecture {arch!r}; only 'llama' maps onto GPT")
    missing = [f"llama.{key}" for key in CONFIG_KEYS.values() if f"llama.{key}" not in metadata]
    if missing:
        raise ValueError(f"gpt_config: the metadata lacks {missing}")
    config = {name: metadata[f"llama.{key}"] for name, key in CONFIG_KEYS.items()}
    vocab = metadata.get("llama.vocab_size", len(metadata.get("tokenizer.ggml.tokens", [])))
    d_k = config["d_model"] // config["num_heads"]
    rope_dims = metadata.get("llama.rope.dimension_count", d_k)
    if rope_dims != d_k:
        raise ValueError(f"gpt_config: RoPE rotates {rope_dims} of each head's {d_k} dimensions; "
                         "helpers.GPT rotates them all")
    config.update(vocab_size=int(vocab), norm="rms", positions="rope", activation="swiglu", bias=False,
                  tie_weights=True, rope_base=float(config["rope_base"]), norm_eps=float(config["norm_eps"]))
    return config


def gguf_name_map(num_layers: int) -> dict[str, str]:
    """The file's tensor names -> our model's parameter names (the tied output layer has none)."""
    names = dict(OUTSIDE_BLOCKS)
    for i in range(num_layers):
        names.update({f"blk.{i}.{theirs}": f"blocks.{i}.{ours}" for theirs, ours in BLOCK_NAMES.items()})
    return names


@torch.no_grad()
def load_gguf_weights(model: GPT, tensors) -> GPT:
    """Copy ``tensors`` (a mapping of the file's names -> float tensors, or a ``GGUFFile``, whose
    tensors are then dequantised one at a time) into ``model``: every parameter must receive one
    tensor of its own shape, and every tensor must have a place."""
    if not isinstance(model, GPT):
        raise TypeError(f"load_gguf_weights: model must be a helpers.GPT, got {type(model).__name__}")
    names = gguf_name_map(len(model.blocks))
    file = tensors
    if isinstance(file, GGUFFile):
        tensors = file.tensors
    elif not isinstance(tensors, dict):
        raise TypeError(f"load_gguf_weights: tensors must be a dict of name -> tensor or a GGUFFile, got "
                        f"{type(tensors).__name__}")
    params = dict(model.named_parameters())  # the tied output weight appears once, as tok_embed
    unknown = sorted(set(tensors) - set(names))
    if unknown:
        raise ValueError(f"load_gguf_weights: the file has tensors with no place in this model: {unknown[:5]}"
                         + (f" and {len(unknown) - 5} more" if len(unknown) > 5 else ""))
    missing = sorted(ours for theirs, ours in names.items() if theirs not in tensors)
    if missing:
        raise ValueError(f"load_gguf_weights: no tensor for the parameters {missing[:5]}"
                         + (f" and {len(missing) - 5} more" if len(missing) > 5 else ""))
    for theirs, ours in names.items():
        value, param = tensors[theirs], params[ours]
        if isinstance(file, GGUFFile):
            value = dequantize(value)
        if tuple(value.shape) != tuple(param.shape):
            raise ValueError(f"load_gguf_weights: {theirs} has shape {tuple(value.shape)}, but {ours} "
                             f"has shape {tuple(param.shape)}")
        param.copy_(value)
    return model


def dequantize_all(file: GGUFFile) -> dict[str, torch.Tensor]:
    """Every tensor of the file as float32, by name."""
    return {name: dequantize(t) for name, t in file.tensors.items()}


def load_smollm2(file: GGUFFile | None = None, dtype: torch.dtype = torch.float32,
                 device: str | torch.device = "cpu") -> GPT:
    """SmolLM2-135M-Instruct in ``helpers.GPT``, its weights dequantised from the installed GGUF
    file (or from ``file``), in eval mode."""
    file = read_gguf() if file is None else file
    if not isinstance(file, GGUFFile):
        raise TypeError(f"load_smollm2: file must be a GGUFFile (read_gguf()), got {type(file).__name__}")
    with torch.device("meta"):
        shape_only = GPT.from_config(gpt_config(file.metadata))  # no memory spent on random weights
    model = shape_only.to_empty(device="cpu")
    model.lm_head.weight = model.tok_embed.weight  # to_empty unties: tie again
    load_gguf_weights(model, file)  # one tensor at a time: never two copies of the model in memory
    return model.to(device=device, dtype=dtype).eval()


def smollm2_tokenizer(file: GGUFFile | None = None) -> ByteLevelBPE:
    """The tokenizer of the file: byte-level BPE from its own vocabulary, merges and chat template."""
    file = read_gguf() if file is None else file
    return ByteLevelBPE.from_gguf_metadata(file.metadata)


def _check_model(model, where: str) -> None:
    if not isinstance(model, GPT) or not model.modern:
        raise TypeError(f"{where}: model must be a helpers.GPT with the modern block (load_smollm2()), "
                        f"got {type(model).__name__}")


@torch.no_grad()
def attention_maps(model: GPT, ids: torch.Tensor) -> torch.Tensor:
    """The attention weights of every layer and head when ``model`` reads ``ids`` (B, L):
    (num_layers, B, h, L, L)."""
    _check_model(model, "attention_maps")
    model(ids, need_weights=True)
    maps = torch.stack([block.self_attn.attn_weights for block in model.blocks])
    for block in model.blocks:
        block.self_attn.attn_weights = None  # (layers, B, h, L, L) is large: keep no second copy
    return maps


@torch.no_grad()
def token_losses(model: GPT, ids: torch.Tensor) -> torch.Tensor:
    """The loss (nats) of predicting each next token: ids (B, L) -> (B, L - 1); entry t is the loss
    of ids[:, t + 1] given ids[:, :t + 1]."""
    _check_model(model, "token_losses")
    if not isinstance(ids, torch.Tensor) or ids.dim() != 2 or ids.shape[1] < 2:
        got = tuple(ids.shape) if isinstance(ids, torch.Tensor) else type(ids).__name__
        raise ValueError(f"token_losses: ids must be (B, L) token ids with L >= 2, got {got}")
    logits = model(ids)[:, :-1]  # (B, L - 1, |V|)
    return torch.nn.functional.cross_entropy(logits.transpose(1, 2), ids[:, 1:], reduction="none")


@contextmanager
def ablate_heads(model: GPT, heads):
    """Inside the ``with``, the heads ``heads`` (an iterable of (layer, head)) write nothing: their
    output is set to zero before the output projection (zero ablation)."""
    _check_model(model, "ablate_heads")
    chosen: dict[int, list[int]] = {}
    for item in heads:
        if not (isinstance(item, tuple | list) and len(item) == 2 and all(isinstance(v, int) for v in item)):
            raise ValueError(f"ablate_heads: heads must be (layer, head) pairs of ints, got {item!r}")
        layer, head = item
        attn = model.blocks[layer].self_attn if 0 <= layer < len(model.blocks) else None
        if attn is None or not 0 <= head < attn.num_heads:
            raise ValueError(f"ablate_heads: ({layer}, {head}) is not a head of this model "
                             f"({len(model.blocks)} layers of {model.blocks[0].self_attn.num_heads} heads)")
        chosen.setdefault(layer, []).append(head)

    def hook_for(heads_here: list[int], d_k: int):
        def hook(module, args):
            x = args[0].clone()  # (B, L, h * d_k): the heads side by side
            for head in heads_here:
                x[..., head * d_k:(head + 1) * d_k] = 0
            return (x,)
        return hook

    handles = [model.blocks[layer].self_attn.out_proj.register_forward_pre_hook(
        hook_for(hs, model.blocks[layer].self_attn.head_dim)) for layer, hs in chosen.items()]
    try:
        yield model
    finally:
        for handle in handles:
            handle.remove()


@torch.no_grad()
def residual_streams(model: GPT, ids: torch.Tensor) -> torch.Tensor:
    """The residual stream after the embedding and after each block: (num_layers + 1, B, L, d_model)."""
    _check_model(model, "residual_streams")
    found = []
    handles = [block.register_forward_hook(lambda module, args, out: found.append(out))
               for block in model.blocks]
    hook = model.tok_embed.register_forward_hook(lambda module, args, out: found.insert(0, out))
    try:
        model(ids)
    finally:
        hook.remove()
        for handle in handles:
            handle.remove()
    return torch.stack(found)


@torch.no_grad()
def logit_lens(model: GPT, ids: torch.Tensor, position: int | None = -1) -> torch.Tensor:
    """What the residual stream predicts after each layer: the final norm and output layer applied
    to the streams of ``residual_streams`` at ``position`` (default the last), as probabilities
    (num_layers + 1, B, |V|); ``position=None`` keeps every position, (num_layers + 1, B, L, |V|)
    (4 bytes x 49,152 per layer and position: 0.6 GB for 100 tokens of SmolLM2)."""
    streams = residual_streams(model, ids)  # (num_layers + 1, B, L, d_model)
    if position is not None:
        if isinstance(position, bool) or not isinstance(position, int) or not -ids.shape[1] <= position < ids.shape[1]:
            raise ValueError(f"logit_lens: position must be None or an int in [-{ids.shape[1]}, {ids.shape[1]}) "
                             f"for ids of length {ids.shape[1]}, got {position!r}")
        streams = streams[:, :, position]  # (num_layers + 1, B, d_model)
    return torch.softmax(model.lm_head(model.norm(streams)), dim=-1)
