"""The attention benchmark of notebook 11 (run by `python3 tasks.py bench`; not a test).

Measures, in one process, with the compared sides interleaved and medians over repeats:

1. helpers ``MultiHeadAttention`` against ``nn.MultiheadAttention`` (same weights, outputs
   asserted equal) at B=8, L=256, d_model=256, 8 heads, CPU forward, with need_weights=False and
   need_weights=True (average_attn_weights=False), under ``torch.no_grad()`` (inference) and,
   as a second line, with autograd recording (as in training);
2. greedy decoding of 128 new tokens with and without the KV cache (ids asserted identical);
3. peak extra memory and median time of naive vs tiled attention at L=4096 (``helpers.efficient.peak_memory``,
   which counts the bytes of the tensors each operator creates).

    python3 tasks.py bench [--repeats 15] [--threads N] [--device cpu|cuda]
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
from torch import nn

from helpers import (
    MultiHeadAttention,
    Transformer,
    greedy_decode,
    scaled_dot_product_attention,
    seed_everything,
    tiled_attention,
)
from helpers.efficient import peak_memory


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize()


def interleaved_medians(fns: dict, repeats: int, inner: int, device, warmup: int = 3) -> dict:
    """Median seconds per call of each fn; each repeat times every fn once, in turn."""
    for fn in fns.values():
        for _ in range(warmup):
            fn()
    times = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            _sync(device)
            start = time.perf_counter()
            for _ in range(inner):
                fn()
            _sync(device)
            times[name].append((time.perf_counter() - start) / inner)
    return {name: statistics.median(ts) for name, ts in times.items()}


def mha_pair(b: int, t: int, d_model: int, heads: int, device):
    """helpers MHA and nn.MultiheadAttention with the same weights, and an input x (B, L, d_model)."""
    ours = MultiHeadAttention(d_model, heads).to(device).eval()
    ref = nn.MultiheadAttention(d_model, heads, batch_first=True).to(device).eval()
    with torch.no_grad():
        ref.in_proj_weight.copy_(torch.cat([ours.w_q.weight, ours.w_k.weight, ours.w_v.weight]))
        ref.in_proj_bias.copy_(torch.cat([ours.w_q.bias, ours.w_k.bias, ours.w_v.bias]))
        ref.out_proj.weight.copy_(ours.w_o.weight)
        ref.out_proj.bias.copy_(ours.w_o.bias)
    x = torch.randn(b, t, d_model, device=device)
    return ours, ref, x


def bench_mha(args, device) -> None:
    ours, ref, x = mha_pair(8, 256, 256, 8, device)
    with torch.no_grad():  # same results first
        out, _ = ref(x, x, x, need_weights=True, average_attn_weights=False)
        torch.testing.assert_close(ours(x, x, x, need_weights=True), out)
        torch.testing.assert_close(ours(x, x, x, need_weights=False), out)
    fns = {
        "helpers, need_weights=False": lambda: ours(x, x, x, need_weights=False),
        "nn.MHA,  need_weights=False": lambda: ref(x, x, x, need_weights=False),
        "helpers, need_weights=True": lambda: ours(x, x, x, need_weights=True),
        "nn.MHA,  need_weights=True": lambda: ref(
            x, x, x, need_weights=True, average_attn_weights=False
        ),
    }
    print("\n1. MultiHeadAttention forward, B=8, L=256, d_model=256, 8 heads "
          f"(median ms per call over {args.repeats} interleaved repeats)")
    for label, grad in (("inference, torch.no_grad()", False), ("autograd recording", True)):
        x.requires_grad_(grad)
        with torch.set_grad_enabled(grad):
            med = interleaved_medians(fns, args.repeats, inner=5, device=device)
        print(f"  {label}:")
        for name, sec in med.items():
            print(f"    {name}: {sec * 1e3:8.2f} ms")
        for flag, target in (("False", 1.1), ("True", 1.25)):
            ratio = med[f"helpers, need_weights={flag}"] / med[f"nn.MHA,  need_weights={flag}"]
            print(f"    ratio helpers / nn.MHA, need_weights={flag}: {ratio:.2f}x "
                  f"(target <= {target}x)")
    x.requires_grad_(False)


def bench_kv_cache(args, device) -> None:
    seed_everything(0)
    model = Transformer(32, 32, d_model=128, num_heads=4, num_layers=2, d_ff=512, dropout=0.0)
    model = model.to(device).eval()
    new_tokens = 128
    kw = dict(max_len=new_tokens + 1, bos_id=1, eos_id=-1)  # eos never comes: exactly 128 new
    print(f"\n2. Greedy decoding of {new_tokens} new tokens, fresh Transformer (d_model=128, "
          "4 heads, 2+2 layers, d_ff=512), source length 24; ids asserted identical")
    for batch in (1, 4, 8):
        src = torch.randint(1, 32, (batch, 24), device=device)
        plain = greedy_decode(model, src, **kw)
        cached = greedy_decode(model, src, use_cache=True, **kw)
        assert torch.equal(plain, cached) and plain.shape[1] == new_tokens + 1
        med = interleaved_medians(
            {"plain": lambda src=src: greedy_decode(model, src, **kw),
             "cached": lambda src=src: greedy_decode(model, src, use_cache=True, **kw)},
            max(3, args.repeats // 3), inner=1, device=device, warmup=1,
        )
        print(f"    B={batch}: without cache {med['plain'] * 1e3:7.1f} ms, with KV cache "
              f"{med['cached'] * 1e3:6.1f} ms, speedup {med['plain'] / med['cached']:.1f}x")


def bench_tiled(args, device) -> None:
    t, d, block = 4096, 64, 64
    q, k, v = (torch.randn(1, t, d, device=device) for _ in range(3))
    torch.testing.assert_close(tiled_attention(q, k, v, block_size=block),
                               scaled_dot_product_attention(q, k, v)[0])
    naive = peak_memory(scaled_dot_product_attention, q, k, v)
    tiled = peak_memory(tiled_attention, q, k, v, block_size=block)
    med = interleaved_medians(
        {"naive": lambda: scaled_dot_product_attention(q, k, v),
         "tiled": lambda: tiled_attention(q, k, v, block_size=block)},
        max(3, args.repeats // 3), inner=1, device=device, warmup=1,
    )
    print(f"\n3. One head, L={t}, d_k={d}, block_size={block}: peak extra memory (tensor bytes) "
          "and median time")
    print(f"    naive: {naive / 2**20:8.1f} MiB  {med['naive'] * 1e3:8.1f} ms")
    print(f"    tiled: {tiled / 2**20:8.1f} MiB  {med['tiled'] * 1e3:8.1f} ms")
    print(f"    memory ratio naive / tiled: {naive / tiled:.1f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--threads", type=int, default=None, help="torch.set_num_threads")
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    seed_everything(0)
    print(f"torch {torch.__version__}, device {device}, {torch.get_num_threads()} threads")
    bench_mha(args, device)
    bench_kv_cache(args, device)
    bench_tiled(args, device)


if __name__ == "__main__":
    main()
