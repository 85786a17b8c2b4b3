"""The `out=` argument (ops/_out.py), against PyTorch: every op that takes it writes its
result there and returns it; a wrong dtype, a wrong device, an expanded `out` or one that
shares memory with an input raises PyTorch's exception class and leaves `out` as it was."""
import numpy as np
import pytest

import dispatchtorch as dt

torch = pytest.importorskip("torch")

X = np.array([[3.0, -1.0, 2.5, 0.5], [1.5, 4.0, -2.0, 0.0], [2.0, 2.25, -3.5, 1.0]],
             dtype=np.float32)


def _lib(lib):
    return lib.tensor(X)


# op -> (call with out, the out tensors for a library)
WRITES = {
    "gather": (lambda L, x, o: L.gather(x, 1, L.tensor([[0, 1], [2, 3], [1, 1]]), out=o),
               lambda L: L.zeros(3, 2)),
    "index_select": (lambda L, x, o: L.index_select(x, 0, L.tensor([2, 0]), out=o),
                     lambda L: L.zeros(2, 4)),
    "take": (lambda L, x, o: L.take(x, L.tensor([0, 5, 11]), out=o), lambda L: L.zeros(3)),
    "masked_select": (lambda L, x, o: L.masked_select(x, x > 1, out=o), lambda L: L.zeros(0)),
    "nonzero": (lambda L, x, o: L.nonzero(x, out=o), lambda L: L.zeros(0, 2, dtype=L.int64)),
    "cat": (lambda L, x, o: L.cat([x, x], 1, out=o), lambda L: L.zeros(3, 8)),
    "stack": (lambda L, x, o: L.stack([x, x], out=o), lambda L: L.zeros(2, 3, 4)),
    "tril": (lambda L, x, o: L.tril(x, out=o), lambda L: L.zeros(3, 4)),
    "diag": (lambda L, x, o: L.diag(x, 1, out=o), lambda L: L.zeros(3)),
    "quantile": (lambda L, x, o: L.quantile(x, 0.25, dim=1, out=o), lambda L: L.zeros(3)),
    "searchsorted": (lambda L, x, o: L.searchsorted(L.tensor([0.0, 1.0, 2.0]), x, out=o),
                     lambda L: L.zeros(3, 4, dtype=L.int64)),
    "logcumsumexp": (lambda L, x, o: L.logcumsumexp(x, 1, out=o), lambda L: L.zeros(3, 4)),
    "sort": (lambda L, x, o: L.sort(x, 1, out=o),
             lambda L: (L.zeros(3, 4), L.zeros(3, 4, dtype=L.int64))),
    "topk": (lambda L, x, o: L.topk(x, 2, out=o),
             lambda L: (L.zeros(3, 2), L.zeros(3, 2, dtype=L.int64))),
    "kthvalue": (lambda L, x, o: L.kthvalue(x, 2, 1, out=o),
                 lambda L: (L.zeros(3), L.zeros(3, dtype=L.int64))),
    "median": (lambda L, x, o: L.median(x, 1, out=o),
               lambda L: (L.zeros(3), L.zeros(3, dtype=L.int64))),
    "max.dim": (lambda L, x, o: L.max(x, 0, out=o),
                lambda L: (L.zeros(4), L.zeros(4, dtype=L.int64))),
    "aminmax": (lambda L, x, o: L.aminmax(x, dim=1, out=o), lambda L: (L.zeros(3), L.zeros(3))),
    "cummax": (lambda L, x, o: L.cummax(x, 1, out=o),
               lambda L: (L.zeros(3, 4), L.zeros(3, 4, dtype=L.int64))),
    "frexp": (lambda L, x, o: L.frexp(x, out=o),
              lambda L: (L.zeros(3, 4), L.zeros(3, 4, dtype=L.int32))),
    "zeros": (lambda L, x, o: L.zeros(2, 3, out=o), lambda L: L.ones(1, dtype=L.int32)),
    "arange": (lambda L, x, o: L.arange(1, 8, 1.5, out=o), lambda L: L.zeros(0, dtype=L.int64)),
    "linspace": (lambda L, x, o: L.linspace(0, 1, 5, out=o), lambda L: L.zeros(5)),
}


def _tensors(o):
    return list(o) if isinstance(o, (tuple, list)) else [o]


@pytest.mark.parametrize("name", sorted(WRITES))
def test_out_receives_the_result_and_is_returned(name):
    call, make = WRITES[name]
    theirs_out, ours_out = make(torch), make(dt)
    theirs = call(torch, _lib(torch), theirs_out)
    ours = call(dt, _lib(dt), ours_out)
    for t, o, r in zip(_tensors(theirs_out), _tensors(ours_out), _tensors(ours)):
        assert r is o                                   # the very tensor passed as out=
        assert o.dtype.name == str(t.dtype)[6:]
        np.testing.assert_allclose(o.numpy(), t.numpy(), rtol=1e-6)
    if isinstance(theirs, tuple):                       # a named tuple of the out tensors
        fields = ("values", "indices", "min", "max", "mantissa", "exponent")
        assert [f for f in fields if hasattr(ours, f)] == [f for f in fields if hasattr(theirs, f)]


# (call, PyTorch's exception) for outs PyTorch refuses; out is made by `out(L, x)`
REFUSED = {
    "gather dtype": lambda L, x: L.gather(x, 1, L.tensor([[0], [1], [2]]),
                                          out=L.zeros(3, 1, dtype=L.float64)),
    "amax dtype": lambda L, x: L.amax(x, 1, out=L.zeros(3, dtype=L.int32)),
    "sort dtype": lambda L, x: L.sort(x, out=(L.zeros(3, 4, dtype=L.float64),
                                             L.zeros(3, 4, dtype=L.int64))),
    "add float into int": lambda L, x: L.add(x, x, out=L.zeros(3, 4, dtype=L.int64)),
    "exp float into bool": lambda L, x: L.exp(x, out=L.zeros(3, 4, dtype=L.bool)),
    "tril into int": lambda L, x: L.tril(x, out=L.zeros(3, 4, dtype=L.int64)),
    "gather into its input": lambda L, x: L.gather(x[0], 0, L.tensor([0, 1]), out=x[0, 2:]),
    "index_select into its input": lambda L, x: L.index_select(x, 0, L.tensor([0, 1, 2]),
                                                               out=x),
    "cat into its input": lambda L, x: L.cat([x, x], out=x),
    "add partly over its input": lambda L, x: L.add(x[0, :3], 1, out=x[0, 1:]),
    "exp into expanded out": lambda L, x: L.exp(x, out=L.zeros(4).expand(3, 4)),
    "take into expanded": lambda L, x: L.take(x, L.tensor([0, 1, 2]),
                                              out=L.zeros(1).expand(3)),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_out_raises_pytorchs_class_and_changes_nothing(name):
    call = REFUSED[name]
    tx = _lib(torch)
    with pytest.raises(RuntimeError) as theirs:
        call(torch, tx)
    x = _lib(dt)
    with pytest.raises(RuntimeError) as ours:
        call(dt, x)
    assert type(ours.value) is type(theirs.value)
    np.testing.assert_array_equal(x.numpy(), X)          # the input (and any out over it)
    op = name.split()[0]
    assert str(ours.value).startswith(f"{op}: ")          # the message names the op


def test_the_very_same_tensor_is_a_valid_elementwise_out():
    """TensorIterator's rule: full overlap is allowed (in place by another name)."""
    x, tx = _lib(dt), _lib(torch)
    assert dt.mul(x, 2, out=x) is x
    torch.mul(tx, 2, out=tx)
    np.testing.assert_array_equal(x.numpy(), tx.numpy())


def test_overlaps_pytorch_cannot_decide_are_not_refused():
    """Non-dense views (PyTorch's "too hard" overlap status) are not refused. PyTorch then
    reads values it has already overwritten; here the result is computed out of place
    first, so `out` gets the answer of the inputs as they were."""
    x, tx = _lib(dt), _lib(torch)
    dt.add(x[:, :3], 1, out=x[:, 1:])
    torch.add(tx[:, :3], 1, out=tx[:, 1:])                 # no error either
    np.testing.assert_array_equal(x.numpy()[:, 1:], X[:, :3] + 1)


def test_a_wrong_dtype_or_device_out_is_left_as_it_was():
    x = _lib(dt)
    out = dt.full((3, 1), 7.0, dtype=dt.float64)
    with pytest.raises(RuntimeError, match="gather: Expected out tensor to have dtype float"):
        dt.gather(x, 1, dt.tensor([[0], [1], [2]]), out=out)
    np.testing.assert_array_equal(out.numpy(), np.full((3, 1), 7.0))
    meta = dt.zeros(3, 4, device="meta")
    with pytest.raises(RuntimeError, match="exp: Expected out tensor to have device cpu"):
        dt.exp(x, out=meta)


def test_a_reduction_converts_into_out_dtype_as_pytorch():
    """sum's out= names the dtype it computes in (no canCast refusal)."""
    t = torch.zeros(3, dtype=torch.float64)
    o = dt.zeros(3, dtype=dt.float64)
    torch.sum(_lib(torch), 1, out=t)
    assert dt.sum(_lib(dt), 1, out=o) is o
    np.testing.assert_allclose(o.numpy(), t.numpy())


def test_cat_refuses_an_out_it_cannot_cast_to_with_a_type_error():
    for lib in (torch, dt):      # PyTorch's cat raises TypeError here, not RuntimeError
        x = _lib(lib)
        with pytest.raises(TypeError, match="input types can't be cast to the desired output"):
            lib.cat([x, x], out=lib.zeros(6, 4, dtype=lib.int64))
        with pytest.raises(TypeError, match="input types can't be cast to the desired output"):
            lib.stack([x, x], out=lib.zeros(2, 3, 4, dtype=lib.int64))


def test_out_must_be_a_tensor():
    with pytest.raises(TypeError, match="gather\\(\\): argument 'out' must be Tensor"):
        dt.gather(_lib(dt), 1, dt.tensor([[0]]), out=[1])
    with pytest.raises(TypeError, match="must be tuple of Tensors"):
        dt.cat(_lib(dt))
