"""Notebook 00: an RNN's last state tells 'dog bites man' from 'man bites dog' where the average
cannot (section 1), and the appendix's measured table (calls, path lengths, arithmetic) at other
lengths than the notebook's L = 16.

Seeds 0-4 (written) and held-out 5-9 for the random word vectors and RNN weights, hidden sizes 8
(the notebook) and 32. The appendix's layers are the notebook's own code; lengths 8, 16 and 32.
The arithmetic comparison is against a plain (Elman) RNN cell, 4 L d^2; an LSTM cell costs 16 L d^2,
more than a full attention layer exactly when L < 2 d (GRU: 12 L d^2).
"""

import functools

import pytest
import torch
from notebook_code import notebook_definitions
from seed_sets import ALL_SEEDS, seed_id
from torch import nn


@pytest.mark.parametrize("hidden", [8, 32])
@pytest.mark.parametrize("seed", ALL_SEEDS, ids=seed_id)
def test_the_average_forgets_word_order_and_the_rnn_does_not(seed, hidden):
    torch.manual_seed(seed)
    rnn = nn.RNN(input_size=5, hidden_size=hidden, batch_first=True)
    words = {w: torch.randn(5) for w in ["dog", "bites", "man"]}
    a = torch.stack([words[w] for w in ["dog", "bites", "man"]])
    b = torch.stack([words[w] for w in ["man", "bites", "dog"]])
    torch.testing.assert_close(a.mean(0), b.mean(0))
    assert not torch.allclose(rnn(a[None])[1], rnn(b[None])[1])


@functools.cache
def nb():
    return notebook_definitions("00_start_here", "F", "d_model", "cell", "conv", "Attention", "attention", "run_rnn",
                                "run_conv", "layers", "layers_to_reach", "count_flops")


@pytest.mark.parametrize("length", [8, 16, 32])
def test_the_appendix_table_at_other_lengths(length):
    ns = nb()
    d_model, layers = ns["d_model"], ns["layers"]
    x = torch.randn(1, length, d_model)
    reach = {name: ns["layers_to_reach"](fn, x) for name, fn in layers.items()}
    assert reach == {"recurrent": 1, "convolution": length - 1, "attention": 1}
    flops = {name: ns["count_flops"](fn, x) for name, fn in layers.items()}
    assert flops == {"recurrent": 4 * length * d_model**2, "convolution": 6 * length * d_model**2,
                     "attention": 4 * length**2 * d_model}
    calls = dict.fromkeys(layers, 0)
    hooks = [m.register_forward_hook(lambda *_, n=n: calls.update({n: calls[n] + 1}))
             for n, m in (("recurrent", ns["cell"]), ("convolution", ns["conv"]), ("attention", ns["attention"]))]
    for fn in layers.values():
        fn(x)
    for hook in hooks:
        hook.remove()
    assert calls == {"recurrent": length, "convolution": 1, "attention": 1}


@pytest.mark.parametrize(("d_model", "num_heads"), [(64, 4), (256, 8), (512, 8)])
def test_a_full_attention_layer_costs_2_plus_L_over_d_recurrent_layers(d_model, num_heads):
    """Section 3 and the appendix (issue 32): with its projections W_q, W_k, W_v, W_o, a
    self-attention layer (helpers.MultiHeadAttention, the notebook's) costs 8 L d² + 4 L² d, that
    is 2 + L/d times a recurrent cell of the same width: more than twice at every length, the L²
    term the larger part only past L = 2 d, and doubling L multiplies the work by less than 4 as
    long as L < 2 d ("about 2.1" at L = 64 -> 128, d = 512: 2.1176). Arithmetic counts, so no seed
    changes them; the widths and lengths are the variation."""
    from helpers import MultiHeadAttention
    from helpers.efficient import count_flops

    mha, cell, lstm = MultiHeadAttention(d_model, num_heads), nn.RNNCell(d_model, d_model), nn.LSTMCell(d_model, d_model)

    def run_rnn(x):
        h = torch.zeros(1, d_model)
        for t in range(x.shape[1]):
            h = cell(x[:, t], h)
        return h

    def run_lstm(x):
        h = c = torch.zeros(1, d_model)
        for t in range(x.shape[1]):
            h, c = lstm(x[:, t], (h, c))
        return h

    costs = {}
    for length in (d_model // 8, d_model // 4, 2 * d_model, 4 * d_model):
        x = torch.randn(1, length, d_model)
        costs[length] = count_flops(lambda t: mha(t, t, t), x)  # noqa: B023 - called at once
        assert costs[length] == 8 * length * d_model**2 + 4 * length**2 * d_model
        assert costs[length] / count_flops(run_rnn, x) == pytest.approx(2 + length / d_model)
        lstm_cost = count_flops(run_lstm, x)
        assert lstm_cost == 16 * length * d_model**2
        assert (costs[length] < lstm_cost) == (length < 2 * d_model), f"d {d_model}, L {length}"
    small = d_model // 8
    assert 2 < costs[2 * small] / costs[small] < 2.2  # L = d/8 -> d/4: about 2.1, not 4
    assert costs[4 * d_model] / costs[2 * d_model] == pytest.approx(3.0)  # past 2 d, on the way to 4
