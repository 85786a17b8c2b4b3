"""torch.slice_copy / split_copy / view_as_real_copy / view_as_complex_copy and the sparse
accessors' copies against PyTorch's: values, no aliasing, gradients, out=, errors."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import dispatchtorch as dt  # noqa: E402

warnings.filterwarnings("ignore", "Sparse CSR tensor support", UserWarning)
rng = np.random.default_rng(0)
X = rng.standard_normal((3, 6))


def _both(fn):
    """fn(lib) for PyTorch and dispatchtorch: (result, None) or (None, exception)."""
    out = []
    for lib in (torch, dt):
        try:
            out.append((fn(lib), None))
        except Exception as e:       # noqa: BLE001 - compared below
            out.append((None, e))
    return out


def _same(a, b):
    if a is None or b is None:
        assert a is None and b is None
    elif isinstance(a, (tuple, list)):
        assert type(b) is tuple and len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)
    else:
        assert tuple(a.shape) == tuple(b.shape) and str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
        np.testing.assert_array_equal(b.detach().numpy(), a.detach().numpy())


def check(fn, prefix=False):
    (rt, et), (ro, eo) = _both(fn)
    if et is not None:
        assert type(eo) is type(et), (et, eo)
        want = str(et).split(" If you are")[0] if prefix else str(et)
        # out='s checks name the op first here ("slice_copy: Expected out tensor ...")
        assert str(eo).startswith(want) if prefix else \
            str(eo) == want or str(eo).endswith(": " + want), (et, eo)
        return
    assert eo is None, eo
    _same(rt, ro)


@pytest.mark.parametrize("args", [(1, -3, None, 2), (1, 10, 20), (1, -100, 2), (1, 3, 1),
                                  (0,), (-1, 1), (1, 0, 3, 0), (1, 0, 3, -1), (2,),
                                  (1, 0.5, 2), (1, None, 4, 3)])
def test_slice_copy(args):
    check(lambda lib: lib.slice_copy(lib.tensor(X), *args))


def test_slice_copy_0d_and_out_and_grad():
    check(lambda lib: lib.slice_copy(lib.tensor(3.0)))
    for lib in (torch, dt):
        x = lib.tensor(X)
        o = lib.empty(0, dtype=lib.float64)
        r = lib.slice_copy(x, 1, 1, 4, out=o)
        assert r is o and tuple(o.shape) == (3, 3)
    check(lambda lib: lib.slice_copy(lib.tensor(X), 1, out=lib.empty(3, 6)))   # dtype
    grads = []
    for lib in (torch, dt):
        x = lib.tensor(X, requires_grad=True)
        y = lib.slice_copy(x, 1, 1, 5, 2)
        assert y._base is None
        (y * lib.tensor([2.0, 3.0])).sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_array_equal(grads[1], grads[0])


def test_slice_copy_does_not_alias():
    x = dt.tensor(X)
    y = dt.slice_copy(x, 1, 0, 2)
    y.fill_(7.0)
    assert x[0, 0].item() == X[0, 0]


@pytest.mark.parametrize("args", [(2, 1), (4,), (1, 0), (0, 1), (-1, 1), ([1, 4], 1),
                                  (2, 5), (10, -1)])
def test_split_copy(args):
    check(lambda lib: lib.split_copy(lib.tensor(X), *args))


def test_split_copy_out():
    def out_run(outs):
        def fn(lib):
            o = outs(lib)
            r = lib.split_copy(lib.tensor(X), 4, 1, out=o)
            assert r is None
            return tuple(o)
        return fn
    check(out_run(lambda lib: [lib.empty(3, 4), lib.empty(3, 2)]))
    check(out_run(lambda lib: (lib.empty(3, 4, dtype=lib.float32), lib.empty(3, 2))))  # cast
    check(out_run(lambda lib: [lib.empty(3, 4), lib.empty(2, 3, 2)]))                 # broadcast
    check(out_run(lambda lib: [lib.empty(3, 4)]))
    check(out_run(lambda lib: [lib.empty(1, 4), lib.empty(3, 2)]))
    check(out_run(lambda lib: lib.empty(3)))


def test_split_copy_grad():
    grads = []
    for lib in (torch, dt):
        x = lib.tensor(X, requires_grad=True)
        a, b = lib.split_copy(x, 2, 0)
        (a.sum() * 2 + (b * b).sum()).backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0])


C = X[:, :4].reshape(3, 2, 2)


@pytest.mark.parametrize("case", ["real", "complex", "real_of_real", "complex_bad_last",
                                  "complex_stride", "complex_int", "complex_0d"])
def test_view_as_copies(case):
    make = {
        "real": lambda lib: lib.view_as_real_copy(lib.view_as_complex(lib.tensor(C))),
        "complex": lambda lib: lib.view_as_complex_copy(lib.tensor(C)),
        "real_of_real": lambda lib: lib.view_as_real_copy(lib.tensor(X)),
        "complex_bad_last": lambda lib: lib.view_as_complex_copy(lib.tensor(X)),
        "complex_stride": lambda lib: lib.view_as_complex_copy(lib.tensor(X[:2]).t()),
        "complex_int": lambda lib: lib.view_as_complex_copy(lib.tensor([[1, 2]])),
        "complex_0d": lambda lib: lib.view_as_complex_copy(lib.tensor(1.0)),
    }[case]
    check(make)


def test_view_as_copies_out_and_grad():
    check(lambda lib: lib.view_as_real_copy(lib.tensor([1 + 2j, 3j]),
                                            out=lib.empty(0, dtype=lib.float64)))
    check(lambda lib: lib.view_as_real_copy(lib.tensor([1 + 2j]), out=lib.empty(0)))
    check(lambda lib: lib.view_as_complex_copy(lib.tensor(C, requires_grad=True)))
    with_nograd = _both(lambda lib: _nograd(lib, lambda: lib.view_as_complex_copy(
        lib.tensor(C, requires_grad=True))))
    _same(with_nograd[0][0], with_nograd[1][0])
    grads = []
    for lib in (torch, dt):
        x = lib.tensor(C, requires_grad=True)
        r = lib.view_as_real_copy(lib.view_as_complex(x))
        (r * r).sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0])


def _nograd(lib, f):
    with lib.no_grad():
        return f()


D = np.array([[0.0, 1.5, 0.0], [2.0, 0.0, -3.0]])


@pytest.mark.parametrize("acc", ["indices", "values", "crow_indices", "col_indices",
                                 "row_indices", "ccol_indices"])
@pytest.mark.parametrize("form", ["dense", "coo", "csr"])
def test_sparse_accessor_copies(acc, form):
    def fn(lib):
        x = lib.tensor(D)
        x = {"dense": x, "coo": x.to_sparse(), "csr": x.to_sparse_csr()}[form]
        return getattr(lib, acc + "_copy")(x)
    check(fn, prefix=True)


def test_sparse_accessor_copies_out_and_no_alias():
    check(lambda lib: lib.crow_indices_copy(lib.tensor(D).to_sparse_csr(),
                                            out=lib.empty(0, dtype=lib.int64)))
    check(lambda lib: lib.col_indices_copy(lib.tensor(D).to_sparse_csr(),
                                           out=lib.empty(0, dtype=lib.int32)))
    s = dt.tensor(D).to_sparse_csr()
    v = dt.values_copy(s)
    v.fill_(0.0)
    assert s.values().tolist() == [1.5, 2.0, -3.0]
