"""RNN, LSTM, GRU and their cells against PyTorch: every option (layers, dropout in
eval, bidirectional, proj_size, batch_first, unbatched, given states) and packed
variable-length batches, values and gradients."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_close, copy_params, to_np

import dispatchtorch as dt

rng = np.random.default_rng(0)


def r(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def _pair(torch, expr):
    torch.manual_seed(0)
    theirs = eval(expr, {"nn": torch.nn})
    ours = eval(expr, {"nn": dt.nn})
    copy_params(theirs, ours)
    return ours, theirs


def _flat(y):
    if isinstance(y, (tuple, list)):
        return [t for v in y for t in _flat(v)]
    return [y]


def _check(torch, ours, theirs, x, hx=None):
    xo = dt.tensor(x, requires_grad=True)
    xt = torch.tensor(x, requires_grad=True)
    args_o = (xo,) if hx is None else (xo, type(hx)(dt.tensor(h) for h in hx)
                                       if isinstance(hx, tuple) else dt.tensor(hx))
    args_t = (xt,) if hx is None else (xt, type(hx)(torch.tensor(h) for h in hx)
                                       if isinstance(hx, tuple) else torch.tensor(hx))
    yo, yt = _flat(ours(*args_o)), _flat(theirs(*args_t))
    lo = lt = 0
    for i, (a, b) in enumerate(zip(yo, yt)):
        assert tuple(a.shape) == tuple(b.shape)
        assert_close(a, b, 1e-4, 1e-5)
        seed = np.random.default_rng(i).standard_normal(tuple(b.shape)).astype(np.float32)
        lo = lo + (a * dt.tensor(seed)).sum()
        lt = lt + (b * torch.tensor(seed)).sum()
    lo.backward()
    lt.backward()
    assert_close(xo.grad, xt.grad, 1e-4, 1e-5)
    tp = dict(theirs.named_parameters())
    for name, p in ours.named_parameters():
        assert_close(p.grad, tp[name].grad, 1e-4, 1e-5)


RNNS = [
    "nn.RNN(3, 5)", "nn.RNN(3, 5, 2, nonlinearity='relu', bias=False)",
    "nn.RNN(3, 5, num_layers=2, bidirectional=True, batch_first=True)",
    "nn.LSTM(3, 5)", "nn.LSTM(3, 5, 2, dropout=0.3, bidirectional=True)",
    "nn.LSTM(3, 6, proj_size=2)", "nn.LSTM(3, 6, 2, proj_size=4, bidirectional=True)",
    "nn.LSTM(3, 5, batch_first=True, bias=False)",
    "nn.GRU(3, 5)", "nn.GRU(3, 5, 3, bidirectional=True, batch_first=True)",
]


@pytest.mark.parametrize("expr", RNNS)
def test_recurrent_layer_matches_pytorch(torch, expr):
    ours, theirs = _pair(torch, expr)
    ours.eval()
    theirs.eval()
    batch_first = "batch_first=True" in expr
    x = r(2, 4, 3) if batch_first else r(4, 2, 3)
    _check(torch, ours, theirs, x)


@pytest.mark.parametrize("expr", ["nn.LSTM(3, 6, 2, proj_size=4, bidirectional=True)",
                                  "nn.GRU(3, 5, 2)", "nn.RNN(3, 5)"])
def test_recurrent_layer_with_initial_state_and_unbatched(torch, expr):
    ours, theirs = _pair(torch, expr)
    d = 2 if "bidirectional" in expr else 1
    layers = 2 if ", 2" in expr else 1
    real = 4 if "proj_size" in expr else 5 if "LSTM" not in expr else 6
    if "LSTM" in expr:
        hx = (r(layers * d, 2, real), r(layers * d, 2, 6))
        hx1 = (r(layers * d, real), r(layers * d, 6))
    else:
        hx, hx1 = r(layers * d, 2, real), r(layers * d, real)
    _check(torch, ours, theirs, r(4, 2, 3), hx)
    ours2, theirs2 = _pair(torch, expr)
    _check(torch, ours2, theirs2, r(4, 3), hx1)


@pytest.mark.parametrize("expr", ["nn.LSTM(3, 5, 2, bidirectional=True)", "nn.GRU(3, 4)",
                                  "nn.RNN(3, 4, bidirectional=True)"])
@pytest.mark.parametrize("enforce_sorted", [True, False])
def test_packed_sequences_match_pytorch(torch, expr, enforce_sorted):
    ours, theirs = _pair(torch, expr)
    lengths = [5, 3, 2] if enforce_sorted else [3, 5, 2]
    x = r(5, 3, 3)
    xo, xt = dt.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    U = dt.nn.utils.rnn
    T = torch.nn.utils.rnn
    po = U.pack_padded_sequence(xo, lengths, enforce_sorted=enforce_sorted)
    pt = T.pack_padded_sequence(xt, lengths, enforce_sorted=enforce_sorted)
    assert_close(po.data, pt.data)
    assert po.batch_sizes.tolist() == pt.batch_sizes.tolist()
    out_o, h_o = ours(po)
    out_t, h_t = theirs(pt)
    assert isinstance(out_o, U.PackedSequence)
    assert_close(out_o.data, out_t.data, 1e-4, 1e-5)
    pad_o, len_o = U.pad_packed_sequence(out_o, batch_first=True)
    pad_t, len_t = T.pad_packed_sequence(out_t, batch_first=True)
    assert_close(pad_o, pad_t, 1e-4, 1e-5)
    assert len_o.tolist() == len_t.tolist()
    for a, b in zip(_flat(h_o), _flat(h_t)):
        assert_close(a, b, 1e-4, 1e-5)
    (pad_o.sum() + sum(h.sum() for h in _flat(h_o))).backward()
    (pad_t.sum() + sum(h.sum() for h in _flat(h_t))).backward()
    assert_close(xo.grad, xt.grad, 1e-4, 1e-5)


def test_rnn_utils_match_pytorch(torch):
    U, T = dt.nn.utils.rnn, torch.nn.utils.rnn
    seqs = [r(4, 2), r(2, 2), r(3, 2)]
    for side in ("right", "left"):
        assert_close(U.pad_sequence([dt.tensor(s) for s in seqs], True, -1.0, side),
                     T.pad_sequence([torch.tensor(s) for s in seqs], True, -1.0, side))
    po = U.pack_sequence([dt.tensor(s) for s in seqs], enforce_sorted=False)
    pt = T.pack_sequence([torch.tensor(s) for s in seqs], enforce_sorted=False)
    assert_close(po.data, pt.data)
    assert po.sorted_indices.tolist() == pt.sorted_indices.tolist()
    assert po.unsorted_indices.tolist() == pt.unsorted_indices.tolist()
    for a, b in zip(U.unpack_sequence(po), T.unpack_sequence(pt)):
        assert_close(a, b)
    padded, lengths = U.pad_packed_sequence(po, total_length=6)
    assert tuple(padded.shape) == (6, 3, 2)
    assert [tuple(t.shape) for t in U.unpad_sequence(padded, lengths)] == [(4, 2), (2, 2), (3, 2)]


CELLS = ["nn.RNNCell(3, 4)", "nn.RNNCell(3, 4, nonlinearity='relu', bias=False)",
         "nn.LSTMCell(3, 4)", "nn.GRUCell(3, 4)"]


@pytest.mark.parametrize("expr", CELLS)
def test_cells_match_pytorch(torch, expr):
    ours, theirs = _pair(torch, expr)
    _check(torch, ours, theirs, r(2, 3))
    ours, theirs = _pair(torch, expr)
    hx = (r(2, 4), r(2, 4)) if "LSTM" in expr else r(2, 4)
    _check(torch, ours, theirs, r(2, 3), hx)
    ours, theirs = _pair(torch, expr)
    _check(torch, ours, theirs, r(3))


def test_parameter_names_order_and_flatten_parameters(torch):
    for expr in ("nn.LSTM(3, 6, 2, proj_size=4, bidirectional=True)", "nn.GRU(2, 3, 2)"):
        ours, theirs = _pair(torch, expr)
        assert [n for n, _ in ours.named_parameters()] == \
            [n for n, _ in theirs.named_parameters()]
        assert ours._flat_weights_names == theirs._flat_weights_names
        assert [[tuple(p.shape) for p in w] for w in ours.all_weights] == \
            [[tuple(p.shape) for p in w] for w in theirs.all_weights]
        ours.flatten_parameters()
        assert repr(ours) == repr(theirs)


def test_bad_arguments_raise_like_pytorch():
    with pytest.raises(ValueError, match="proj_size has to be smaller"):
        dt.nn.LSTM(3, 4, proj_size=4)
    with pytest.raises(ValueError, match="only supported for LSTM"):
        dt.nn.GRU(3, 4, proj_size=2)
    with pytest.raises(ValueError, match="Unknown nonlinearity"):
        dt.nn.RNN(3, 4, nonlinearity="gelu")
    with pytest.raises(RuntimeError, match=r"Expected hidden\[0\] size"):
        dt.nn.LSTM(3, 4)(dt.randn(2, 1, 3), (dt.randn(1, 2, 4), dt.randn(1, 1, 4)))
    with pytest.warns(UserWarning, match="dropout"):
        dt.nn.GRU(3, 4, dropout=0.5)


def test_dropout_between_layers_is_active_in_training():
    dt.manual_seed(0)
    m = dt.nn.LSTM(3, 8, 2, dropout=0.9)
    x = dt.randn(5, 2, 3)
    a, b = m(x)[0], m(x)[0]
    assert not np.allclose(to_np(a), to_np(b))
    m.eval()
    assert np.allclose(to_np(m(x)[0]), to_np(m(x)[0]))
