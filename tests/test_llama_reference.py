"""A Llama-style GPT (pre-norm RMSNorm, SwiGLU, RoPE, grouped-query attention, no biases, untied
output layer) against an independent reference written here in the style of Meta's published
Llama code: complex-number RoPE, ``repeat_kv``, an additive -inf causal mask, w1/w2/w3 names.
Weights are copied by name; nothing of helpers' attention, norms or RoPE is used by the reference.
"""

import math

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from helpers import GPT


class RefRMSNorm(nn.Module):
    def __init__(self, dim, eps):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def precompute_freqs_cis(dim, end, theta=10000.0):
    freqs = 1.0 / (theta ** (torch.arange(0, dim, 2)[: dim // 2].float() / dim))
    t = torch.arange(end, dtype=torch.float32)
    return torch.polar(torch.ones(end, dim // 2), torch.outer(t, freqs))  # (end, dim/2) complex


def apply_rotary_emb(xq, xk, freqs_cis):
    # xq (B, L, h, hd): consecutive pairs are the real and imaginary parts of hd/2 complex numbers
    xq_ = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
    xk_ = torch.view_as_complex(xk.float().reshape(*xk.shape[:-1], -1, 2))
    f = freqs_cis[None, :, None, :]  # (1, L, 1, hd/2)
    return torch.view_as_real(xq_ * f).flatten(3).type_as(xq), torch.view_as_real(xk_ * f).flatten(3).type_as(xk)


def repeat_kv(x, n_rep):
    b, length, n_kv, hd = x.shape
    return x[:, :, :, None, :].expand(b, length, n_kv, n_rep, hd).reshape(b, length, n_kv * n_rep, hd)


class RefAttention(nn.Module):
    def __init__(self, dim, n_heads, n_kv_heads):
        super().__init__()
        self.n_heads, self.n_kv_heads, self.head_dim = n_heads, n_kv_heads, dim // n_heads
        self.wq = nn.Linear(dim, n_heads * self.head_dim, bias=False)
        self.wk = nn.Linear(dim, n_kv_heads * self.head_dim, bias=False)
        self.wv = nn.Linear(dim, n_kv_heads * self.head_dim, bias=False)
        self.wo = nn.Linear(n_heads * self.head_dim, dim, bias=False)

    def forward(self, x, freqs_cis, mask):
        b, length, _ = x.shape
        xq = self.wq(x).view(b, length, self.n_heads, self.head_dim)
        xk = self.wk(x).view(b, length, self.n_kv_heads, self.head_dim)
        xv = self.wv(x).view(b, length, self.n_kv_heads, self.head_dim)
        xq, xk = apply_rotary_emb(xq, xk, freqs_cis)
        keys = repeat_kv(xk, self.n_heads // self.n_kv_heads)
        values = repeat_kv(xv, self.n_heads // self.n_kv_heads)
        xq, keys, values = xq.transpose(1, 2), keys.transpose(1, 2), values.transpose(1, 2)
        scores = torch.matmul(xq, keys.transpose(2, 3)) / math.sqrt(self.head_dim) + mask
        scores = F.softmax(scores.float(), dim=-1).type_as(xq)
        out = torch.matmul(scores, values).transpose(1, 2).contiguous().view(b, length, -1)
        return self.wo(out)


class RefFeedForward(nn.Module):
    def __init__(self, dim, hidden_dim):
        super().__init__()
        self.w1 = nn.Linear(dim, hidden_dim, bias=False)
        self.w2 = nn.Linear(hidden_dim, dim, bias=False)
        self.w3 = nn.Linear(dim, hidden_dim, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class RefBlock(nn.Module):
    def __init__(self, dim, n_heads, n_kv_heads, hidden_dim, eps):
        super().__init__()
        self.attention = RefAttention(dim, n_heads, n_kv_heads)
        self.feed_forward = RefFeedForward(dim, hidden_dim)
        self.attention_norm, self.ffn_norm = RefRMSNorm(dim, eps), RefRMSNorm(dim, eps)

    def forward(self, x, freqs_cis, mask):
        h = x + self.attention(self.attention_norm(x), freqs_cis, mask)
        return h + self.feed_forward(self.ffn_norm(h))


class RefLlama(nn.Module):
    def __init__(self, vocab_size, dim, n_layers, n_heads, n_kv_heads, hidden_dim, eps, max_seq_len):
        super().__init__()
        self.tok_embeddings = nn.Embedding(vocab_size, dim)
        self.layers = nn.ModuleList(RefBlock(dim, n_heads, n_kv_heads, hidden_dim, eps) for _ in range(n_layers))
        self.norm = RefRMSNorm(dim, eps)
        self.output = nn.Linear(dim, vocab_size, bias=False)
        self.freqs_cis = precompute_freqs_cis(dim // n_heads, max_seq_len)

    def forward(self, tokens):
        length = tokens.shape[1]
        h = self.tok_embeddings(tokens)
        mask = torch.triu(torch.full((length, length), float("-inf")), diagonal=1)
        for layer in self.layers:
            h = layer(h, self.freqs_cis[:length], mask)
        return self.output(self.norm(h)).float()


def llama_pair(n_kv_heads=2, eps=1e-5, seed=0):
    config = dict(vocab_size=37, dim=48, n_layers=3, n_heads=4, n_kv_heads=n_kv_heads, hidden_dim=128, eps=eps,
                  max_seq_len=64)
    torch.manual_seed(seed)
    ref = RefLlama(**config).eval()
    with torch.no_grad():  # norms away from 1, so that a gain copied wrongly would show
        for p in ref.parameters():
            if p.dim() == 1:
                p.copy_(torch.rand_like(p) + 0.5)
    ours = GPT(37, d_model=48, num_heads=4, num_layers=3, d_ff=128, max_len=64, tie_weights=False,
               num_kv_heads=n_kv_heads, norm="rms", positions="rope", activation="swiglu", bias=False,
               norm_eps=eps).eval()
    copy = {"tok_embed.weight": "tok_embeddings.weight", "norm.weight": "norm.weight",
            "lm_head.weight": "output.weight"}
    for i in range(3):
        for mine, theirs in (("self_attn.q_proj", "attention.wq"), ("self_attn.k_proj", "attention.wk"),
                             ("self_attn.v_proj", "attention.wv"), ("self_attn.out_proj", "attention.wo"),
                             ("feed_forward.gate", "feed_forward.w1"), ("feed_forward.up", "feed_forward.w3"),
                             ("feed_forward.down", "feed_forward.w2"), ("norm1", "attention_norm"),
                             ("norm2", "ffn_norm")):
            copy[f"blocks.{i}.{mine}.weight"] = f"layers.{i}.{theirs}.weight"
    theirs = ref.state_dict()
    assert sorted(copy) == sorted(ours.state_dict()), "every parameter of ours has a counterpart"
    ours.load_state_dict({mine: theirs[name] for mine, name in copy.items()})
    return ours, ref


@pytest.mark.parametrize("n_kv_heads", [4, 2, 1])
def test_llama_style_gpt_equals_the_reference(n_kv_heads):
    ours, ref = llama_pair(n_kv_heads)
    ids = torch.randint(0, 37, (3, 21))
    torch.testing.assert_close(ours(ids), ref(ids))
    assert sum(p.numel() for p in ours.parameters()) == sum(p.numel() for p in ref.parameters())


def test_llama_style_gpt_eps_reaches_every_norm():
    ours, ref = llama_pair(eps=0.5)  # a huge eps changes every norm's output
    ids = torch.randint(0, 37, (2, 9))
    torch.testing.assert_close(ours(ids), ref(ids))
    assert all(m.eps == 0.5 for m in ours.modules() if type(m).__name__ == "RMSNorm")


def test_llama_style_gpt_cached_generation_equals_the_reference_greedy():
    ours, ref = llama_pair()
    ids = torch.randint(0, 37, (2, 5))
    out = ours.generate(ids, 12, temperature=0)
    want = ids
    for _ in range(12):
        want = torch.cat([want, ref(want)[:, -1].argmax(-1, keepdim=True)], dim=1)
    assert torch.equal(out, want)
