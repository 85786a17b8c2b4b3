"""In-place writes into a non-leaf cut the gradient of exactly the overwritten region and
route the gradient of the written value (PyTorch's CopySlices), through a view or not.

Each case runs the same program on dispatchtorch and on PyTorch and compares every
gradient; without PyTorch the hand-computed answers of the issue's reproductions still run.
"""
import numpy as np
import pytest

import dispatchtorch as dt

try:
    import torch
except ImportError:      # the comparison cases skip; the hand-computed ones still run
    torch = None


def _w(T):
    return T.tensor([1., 2., 3., 4.])


# program(T, x, v) -> y; x (4,) and v (2,) require grad; loss = (y * w).sum()
CASES = {
    "setitem_slice_const": lambda T, x, v: _set(x * 2, slice(0, 2), T.zeros(2)),
    "setitem_slice_value": lambda T, x, v: _set(x * 2, slice(1, 3), v * 3),
    "setitem_scalar": lambda T, x, v: _set(x * 2, 1, 5.0),
    "setitem_mask": lambda T, x, v: _set(x * 2, T.tensor([True, False, True, False]), 0.0),
    "setitem_index_tensor": lambda T, x, v: _set(x * 2, T.tensor([3, 0]), v),
    "setitem_step": lambda T, x, v: _set(x * 2, slice(None, None, 2), v * v),
    "copy_const": lambda T, x, v: (x * 2).copy_(T.zeros(4)),
    "copy_value": lambda T, x, v: (x * 2).copy_(v.repeat(2)),
    "copy_broadcast": lambda T, x, v: (x * 2).copy_(v[:1]),
    "copy_into_view": lambda T, x, v: _view_op(x * 2, lambda s: s.copy_(v)),
    "copy_const_into_view": lambda T, x, v: _view_op(x * 2, lambda s: s.copy_(T.ones(2))),
    "fill_": lambda T, x, v: (x * 2).fill_(3.0),
    "fill_tensor": lambda T, x, v: (x * 2).fill_(v[0]),
    "fill_view": lambda T, x, v: _view_op(x * 2, lambda s: s.fill_(7.0)),
    "zero_": lambda T, x, v: (x * 2).zero_(),
    "zero_view": lambda T, x, v: _view_op(x * 2, lambda s: s.zero_()),
    "masked_fill_": lambda T, x, v: (x * 2).masked_fill_(T.tensor([True, False, False, True]), 1.0),
    "masked_fill_view": lambda T, x, v: _view_op(
        x * 2, lambda s: s.masked_fill_(T.tensor([False, True]), 1.0)),
    "index_put_const": lambda T, x, v: (x * 2).index_put_((T.tensor([0, 2]),), T.tensor(5.)),
    "index_put_value": lambda T, x, v: (x * 2).index_put_((T.tensor([1, 3]),), v),
    "index_put_accumulate": lambda T, x, v: (x * 2).index_put_((T.tensor([1, 1]),), v,
                                                              accumulate=True),
    "scatter_const": lambda T, x, v: (x * 2).scatter_(0, T.tensor([1, 2]), T.tensor([5., 6.])),
    "scatter_value": lambda T, x, v: (x * 2).scatter_(0, T.tensor([3, 0]), v),
    "scatter_scalar": lambda T, x, v: (x * 2).scatter_(0, T.tensor([2]), 9.0),
    "index_fill_": lambda T, x, v: (x * 2).index_fill_(0, T.tensor([1]), 0.0),
    "masked_scatter_": lambda T, x, v: (x * 2).masked_scatter_(
        T.tensor([False, True, True, False]), v),
    "nested_view": lambda T, x, v: _view_op(x * 2, lambda s: s[1:].copy_(v[:1])),
    "write_then_read_view": lambda T, x, v: _write_then_read(T, x, v),
    "twice_overwritten": lambda T, x, v: _set(_set(x * 2, slice(0, 2), v), slice(1, 3), T.zeros(2)),
    "add_then_overwrite": lambda T, x, v: _set((x * 2).add_(x), slice(2, 4), v),
    "2d_view_column": lambda T, x, v: _col(T, x, v),
}


def _set(y, key, value):
    y[key] = value
    return y


def _view_op(y, fn):
    fn(y[1:3])
    return y


def _write_then_read(T, x, v):
    y = x * 2
    s = y[:2]
    s.copy_(v)
    return y * s.sum()          # the view read after the write sees the written value


def _col(T, x, v):
    y = (x * 2).reshape(2, 2)
    y[:, 1] = v * 10
    return y.reshape(4)


def _run(T, name):
    x = T.tensor([1., 2., 3., 4.], requires_grad=True)
    v = T.tensor([5., 6.], requires_grad=True)
    y = CASES[name](T, x, v)
    (y * _w(T)).sum().backward()
    return [None if t.grad is None else np.asarray(t.grad.tolist()) for t in (x, v)], \
        np.asarray(y.tolist())


@pytest.mark.skipif(torch is None, reason="PyTorch not installed")
@pytest.mark.parametrize("name", sorted(CASES))
def test_inplace_gradient_matches_pytorch(name):
    (gx, gv), y = _run(dt, name)
    (tx, tv), ty = _run(torch, name)
    np.testing.assert_allclose(y, ty)
    for got, want, which in ((gx, tx, "x"), (gv, tv, "v")):
        assert (got is None) == (want is None), (which, got, want)
        if want is not None:
            np.testing.assert_allclose(got, want, err_msg=which)


def test_issue_reproductions_hand_computed():
    x = dt.ones(3, requires_grad=True)
    y = x * 2
    y[:2] = dt.zeros(2)
    y.sum().backward()
    assert x.grad.tolist() == [0., 0., 2.]
    x = dt.ones(3, requires_grad=True)
    y = x * 2
    y.copy_(dt.zeros(3))
    assert y.requires_grad          # as PyTorch: the history is kept, with zero gradient
    y.sum().backward()
    assert x.grad.tolist() == [0., 0., 0.]


def test_written_source_is_not_changed():
    """copy_ of a plain tensor into a non-leaf must not give the source any history."""
    x = dt.ones(3, requires_grad=True)
    src = dt.zeros(3)
    y = x * 2
    y.copy_(src)
    assert not src.requires_grad and src.grad_fn is None
