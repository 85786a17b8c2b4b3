"""torch.lstm / gru / rnn_tanh / rnn_relu (ATen's flat-weight RNN functions, both
overloads) against PyTorch's with the same weights: outputs, final states, gradients
of the input, the states and every weight; the errors PyTorch raises."""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import dispatchtorch as dt  # noqa: E402

MODULES = {"lstm": "LSTM", "gru": "GRU", "rnn_tanh": "RNN", "rnn_relu": "RNN"}
T, N, F, H, P = 5, 3, 4, 6, 3


def _weights(fn, layers, bias, bidir, proj, seed=0):
    torch.manual_seed(seed)
    kw = {"nonlinearity": "relu"} if fn == "rnn_relu" else {}
    if proj:
        kw["proj_size"] = P
    m = getattr(torch.nn, MODULES[fn])(F, H, num_layers=layers, bias=bias,
                                       bidirectional=bidir, **kw).double()
    return [w.detach().numpy().copy() for w in m._flat_weights]


def _hx(fn, layers, bidir, proj, rng):
    d = layers * (2 if bidir else 1)
    h = rng.standard_normal((d, N, P if proj else H))
    return [h, rng.standard_normal((d, N, H))] if fn == "lstm" else [h]


def _call(lib, fn, x, hx, ws, rest, packed_sizes=None):
    xt = lib.tensor(x, requires_grad=True)
    hts = [lib.tensor(h, requires_grad=True) for h in hx]
    wts = [lib.tensor(w, requires_grad=True) for w in ws]
    h_arg = hts if fn == "lstm" else hts[0]
    f = getattr(lib, fn)
    if packed_sizes is None:
        out = f(xt, h_arg, wts, *rest)
    else:
        out = f(xt, lib.tensor(packed_sizes), h_arg, wts, *rest[:-1])
    loss = sum(((o * o).sum() if i == 0 else o.sum() * (i + 1)) for i, o in enumerate(out))
    loss.backward()
    return [o.detach().numpy() for o in out], [t.grad.numpy() for t in [xt, *hts, *wts]]


def _compare(theirs, ours):
    (ot, gt), (oo, go) = theirs, ours
    assert len(oo) == len(ot)
    for a, b in zip(ot, oo):
        assert a.shape == b.shape
        np.testing.assert_allclose(b, a, rtol=1e-9, atol=1e-10)
    for a, b in zip(gt, go):
        np.testing.assert_allclose(b, a, rtol=1e-8, atol=1e-10)


CONFIGS = [  # layers, bias, bidirectional, batch_first, projections (LSTM)
    (1, True, False, False, False), (2, True, True, False, False),
    (2, False, False, True, False), (1, True, True, True, False),
    (2, True, True, False, True), (1, False, False, False, True)]


@pytest.mark.parametrize("fn,cfg", [
    pytest.param(fn, c, id=fn + "-" + "-".join(map(str, map(int, c))))
    for fn in MODULES for c in CONFIGS if fn == "lstm" or not c[-1]])   # projections: LSTM's
def test_rnn_function_input_form(fn, cfg):
    layers, bias, bidir, batch_first, proj = cfg
    rng = np.random.default_rng(1)
    ws = _weights(fn, layers, bias, bidir, proj)
    x = rng.standard_normal((N, T, F) if batch_first else (T, N, F))
    hx = _hx(fn, layers, bidir, proj, rng)
    rest = (bias, layers, 0.0, False, bidir, batch_first)
    _compare(_call(torch, fn, x, hx, ws, rest), _call(dt, fn, x, hx, ws, rest))


@pytest.mark.parametrize("fn", list(MODULES))
@pytest.mark.parametrize("cfg", [(1, True, False), (2, True, True), (2, False, True)])
def test_rnn_function_packed_form(fn, cfg):
    layers, bias, bidir = cfg
    rng = np.random.default_rng(2)
    ws = _weights(fn, layers, bias, bidir, False)
    sizes = [3, 3, 2, 1]                       # lengths 4, 3, 2 (sorted, as packed)
    data = rng.standard_normal((sum(sizes), F))
    hx = _hx(fn, layers, bidir, False, rng)
    rest = (bias, layers, 0.0, False, bidir, None)
    _compare(_call(torch, fn, data, hx, ws, rest, sizes),
             _call(dt, fn, data, hx, ws, rest, sizes))


def test_rnn_function_matches_module_and_keywords():
    """dt.lstm over an nn.LSTM's weights is that module's forward."""
    dt.manual_seed(0)
    m = dt.nn.LSTM(F, H, num_layers=2, bidirectional=True)
    x = dt.randn(T, N, F)
    out, (h, c) = m(x)
    z = dt.zeros(4, N, H)
    r = dt.lstm(x, (z, z), m._flat_weights, has_biases=True, num_layers=2, dropout=0.0,
                train=False, bidirectional=True, batch_first=False)
    for a, b in zip((out, h, c), r):
        np.testing.assert_array_equal(b.detach().numpy(), a.detach().numpy())


def test_rnn_function_dropout_eval_is_identity():
    ws = _weights("gru", 2, True, False, False)
    rng = np.random.default_rng(3)
    x, hx = rng.standard_normal((T, N, F)), _hx("gru", 2, False, False, rng)
    a = _call(dt, "gru", x, hx, ws, (True, 2, 0.5, False, False, False))
    b = _call(dt, "gru", x, hx, ws, (True, 2, 0.0, False, False, False))
    _compare(a, b)
    dt.manual_seed(0)
    c = _call(dt, "gru", x, hx, ws, (True, 2, 0.9, True, False, False))
    assert not np.allclose(c[0][0], b[0][0])


def _errors(lib, case):
    ws = [lib.tensor(w) for w in _weights("lstm", 1, True, False, False)]
    x = lib.zeros(T, N, F, dtype=lib.float64)
    h = lib.zeros(1, N, H, dtype=lib.float64)
    gw = [lib.tensor(w) for w in _weights("gru", 1, True, False, False)]
    return {
        "few_params": lambda: lib.lstm(x, (h, h), ws[:3], True, 1, 0.0, False, False, False),
        "one_state": lambda: lib.lstm(x, (h,), ws, True, 1, 0.0, False, False, False),
        "few_states": lambda: lib.gru(x, h, gw * 2, True, 2, 0.0, False, False, False),
    }[case]()


@pytest.mark.parametrize("case", ["few_params", "one_state", "few_states"])
def test_rnn_function_errors(case):
    caught = []
    for lib in (torch, dt):
        with pytest.raises(Exception) as info:
            _errors(lib, case)
        caught.append(info.value)
    assert type(caught[1]) is type(caught[0]) and str(caught[1]) == str(caught[0])
