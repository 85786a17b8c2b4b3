"""Rules that differed from PyTorch only for an inf / NaN incoming gradient or in the
sign of a zero, found by tools/special_values.py (docs/special-values.md): xlog1py at
a = 0 (derivatives.yaml's `xlog1py(g, b)` masked where b <= -1, so inf * 0 is NaN),
softmax / log_softmax / softmin with a -0.0 g (PyTorch's last-dim kernel sums the row
from its first element: a row of -0.0 sums to -0.0, and g - (-0.0) is +0.0),
layer_norm without a bias (+0.0: PyTorch adds beta = 0), logcumsumexp (PyTorch's rule
splits g by sign: a NaN g gives 0), group_norm (PyTorch's backward formula). PyTorch
is the answer: these compare with it live, bit for bit on zeros (np.signbit) and NaN
positions, on cpu and opencl."""
import math

import numpy as np
import pytest

import dispatchtorch as dt

T = pytest.importorskip("torch")

inf, nan = math.inf, math.nan
VALUES = [0.0, -0.0, 1.0, -1.0, 0.5, -3.0, 2.0, inf, -inf, nan, 1e-300]
GRADS = [1.0, -1.0, -0.0, 0.0, 2.5, inf, -inf, nan]
DEVS = ["cpu", "opencl"]


def _dev(dev):
    if dev == "opencl" and not dt.opencl.is_available():
        pytest.skip("no OpenCL device")
    return dev


def _check(got, want, dtype, atol=0.0, signs=True):
    """NaN positions, values, and the sign of every zero PyTorch gives (atol: for sums
    that cancel, whose rounding is each kernel's own; signs are then compared where both
    are zero, and not at all without `signs`: a zero output times g - sum, a rounding)."""
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    assert got.shape == want.shape
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(got, want, rtol=1e-12 if dtype == "float64" else 2e-6, atol=atol)
    if not signs:
        return
    zero = (want == 0) & (got == 0) if atol else want == 0
    np.testing.assert_array_equal(np.signbit(got)[zero], np.signbit(want)[zero])


def _compare(fn, inputs, dev, dtype="float64", grads=GRADS, forward=True):
    """fn(lib, *tensors) on both libraries: the output, then every input's gradient for
    each incoming gradient (the same g everywhere)."""
    dev = _dev(dev)
    for g in ([None] if forward else []) + list(grads):
        res = []
        for lib, kw in ((T, {}), (dt, {"device": dev})):
            xs = [lib.tensor(v, dtype=getattr(lib, dtype), requires_grad=True, **kw)
                  for v in inputs]
            out = fn(lib, *xs)
            if g is None:
                res.append([out.detach().cpu().numpy()])
                continue
            gs = lib.autograd.grad([out], xs, [lib.full_like(out, g)])
            res.append([x.cpu().numpy() for x in gs])
        for want, got in zip(*res):
            _check(got, want, dtype)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("dev", DEVS)
def test_xlog1py_gradient_at_special_values(dev, dtype):
    a = [x for x in VALUES for _ in VALUES]
    b = [y for _ in VALUES for y in VALUES]
    a, b = a + [0.0, 0.0, -0.0], b + [-1.0, -2.0, -1.0]
    _compare(lambda L, x, y: L.special.xlog1py(x, y), [a, b], dev, dtype)


def test_xlog1py_number_operands():
    for a, b in ((2, [1.0, -1.0, -2.0, 0.0]), ([1.0, 0.0, -0.0, 3.0], -1), ([1.0, 0.0], 2.5)):
        want = T.special.xlog1py(a if not isinstance(a, list) else T.tensor(a, dtype=T.float64),
                                 b if not isinstance(b, list) else T.tensor(b, dtype=T.float64))
        got = dt.special.xlog1py(a if not isinstance(a, list) else dt.tensor(a, dtype=dt.float64),
                                 b if not isinstance(b, list) else dt.tensor(b, dtype=dt.float64))
        _check(got.numpy(), want.numpy(), "float64")


SOFTMAX_ROWS = [[1.0, 3.0, 3.0, 2.0], [0.0, -0.0, 0.0, -0.0], [-inf, -inf, 1.0, 2.0],
                [3.0, 3.0, 3.0, 3.0], [1.0, 1e-300, -0.0, 700.0], [-800.0, 0.0, 800.0, 1.0]]
SOFTMAXES = {
    "softmax": lambda L, x, d: x.softmax(d), "log_softmax": lambda L, x, d: x.log_softmax(d),
    "softmin": lambda L, x, d: L.nn.functional.softmin(x, d),
}


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("dev", DEVS)
@pytest.mark.parametrize("name", list(SOFTMAXES))
@pytest.mark.parametrize("create_graph", [False, True])
def test_softmax_family_zero_signs(name, dev, dtype, create_graph):
    # dim 1 is PyTorch's last-dim kernel (rows summed from their first element), dim 0
    # its other kernel (sums from +0.0); create_graph runs the rule's decomposition
    # where the CPU backend has a kernel for the backward without a graph
    dev = _dev(dev)
    fn = SOFTMAXES[name]
    mixed = [-0.0, 0.0, -0.0, -0.0]
    for d in (1, 0, -1):
        for g in GRADS + [None]:
            res = []
            for lib, kw in ((T, {}), (dt, {"device": dev})):
                x = lib.tensor(SOFTMAX_ROWS, dtype=getattr(lib, dtype), requires_grad=True, **kw)
                y = fn(lib, x, d)
                w = lib.tensor([mixed] * len(SOFTMAX_ROWS), dtype=y.dtype, **kw) if g is None \
                    else lib.full_like(y, g)
                (gx,) = lib.autograd.grad([y], [x], [w], create_graph=create_graph)
                res.append(gx.detach().cpu().numpy())
            # the signs where g is a zero (the rule's sum); with g != 0 an output that
            # underflows to 0 takes the sign of g - sum(g y), a rounding of each kernel
            _check(res[1], res[0], dtype, atol=1e-15 if dtype == "float64" else 1e-6,
                   signs=g is None or g == 0)


def test_softmax_family_zero_signs_one_dim_and_long_rows():
    # a 1-d input is the last-dim kernel; rows longer than a vector register too
    for n in (1, 4, 37):
        for f in ("softmax", "log_softmax"):
            for g in (-0.0, 0.0):
                res = []
                for lib in (T, dt):
                    x = lib.linspace(-1, 1, n, dtype=lib.float64).requires_grad_()
                    y = getattr(x, f)(0)
                    res.append(lib.autograd.grad([y], [x], [lib.full_like(y, g)])[0].numpy())
                _check(res[1], res[0], "float64")


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("dev", DEVS)
@pytest.mark.parametrize("affine", ["none", "weight", "both"])
def test_layer_norm_forward_zero_signs(dev, dtype, affine):
    # PyTorch's kernel adds beta = 0 without a bias: a zero output is +0.0
    dev = _dev(dev)
    rows = SOFTMAX_ROWS + [[-0.0, -0.0, -0.0, -0.0], [-0.0, 1.0, -1.0, 0.0]]
    res = []
    for lib, kw in ((T, {}), (dt, {"device": dev})):
        x = lib.tensor(rows, dtype=getattr(lib, dtype), **kw)
        w = lib.tensor([1.0, -2.0, 0.5, 1.0], dtype=x.dtype, **kw)
        b = lib.tensor([0.0, -0.0, 0.0, -0.0], dtype=x.dtype, **kw)
        args = {"none": (None, None), "weight": (w, None), "both": (w, b)}[affine]
        res.append(lib.nn.functional.layer_norm(x, (4,), *args).cpu().numpy())
    _check(res[1], res[0], dtype, atol=1e-15 if dtype == "float64" else 1e-6)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("dev", DEVS)
def test_logcumsumexp_gradient_splits_g_by_sign(dev, dtype):
    # PyTorch's logcumsumexp_backward: a NaN or zero g contributes exp(lowest) = 0 on both
    # sides (the doubling scan's own derivative passed the NaN on and kept -0.0)
    rows = [[1.0, 3.0, 3.0, 2.0], [-inf, -inf, 1.0, 2.0], [0.0, -0.0, 0.0, -0.0],
            [-800.0, 0.0, 800.0, 1.0], [2.0, -1.0, 0.5, -3.0]]
    for d in (1, 0):
        _compare(lambda L, x: L.logcumsumexp(x, d), [rows], dev, dtype)


def test_logcumsumexp_mixed_gradient_and_double_backward():
    # g of both signs in one row, and the rule's own derivative (create_graph)
    res = []
    for lib in (T, dt):
        x = lib.tensor([[0.3, -1.2, 2.0, 0.7, -0.4]], dtype=lib.float64, requires_grad=True)
        g = lib.tensor([[1.0, -2.0, 0.5, -0.0, 3.0]], dtype=lib.float64, requires_grad=True)
        (gx,) = lib.autograd.grad([x.logcumsumexp(1)], [x], [g], create_graph=True)
        gg = lib.autograd.grad([(gx * gx).sum()], [x, g])
        res.append([gx.detach().numpy()] + [t.numpy() for t in gg])
    for got, want in zip(res[1], res[0]):
        _check(got, want, "float64", atol=1e-14)


@pytest.mark.parametrize("dev", DEVS)
@pytest.mark.parametrize("affine", [False, True])
def test_group_norm_gradient_zero_signs(dev, affine):
    # PyTorch's native_group_norm_backward formula (c1 g + c2 x + c3): at rows of +-0
    # with a -0.0 g the decomposition's derivative gave +0.0 where PyTorch gives -0.0
    dev = _dev(dev)
    rows = [[0.0, -0.0, 0.0, -0.0], [-0.0, -0.0, -0.0, -0.0], [1.0, 3.0, 3.0, 2.0],
            [-inf, -inf, 1.0, 2.0], [1.0, nan, nan, 2.0], [3.0, 3.0, 3.0, 3.0]]
    for g in GRADS:
        res = []
        for lib, kw in ((T, {}), (dt, {"device": dev})):
            x = lib.tensor(rows, dtype=lib.float64, requires_grad=True, **kw)
            w = lib.tensor([1.5, -2.0], dtype=lib.float64, requires_grad=True, **kw)
            b = lib.tensor([0.0, 1.0], dtype=lib.float64, requires_grad=True, **kw)
            ins = [x, w, b] if affine else [x]
            y = lib.nn.functional.group_norm(x.reshape(-1, 2, 2), 1, *ins[1:])
            res.append([t.cpu().numpy() for t in lib.autograd.grad([y], ins, [lib.full_like(y, g)])])
        for got, want in zip(res[1], res[0]):
            _check(got, want, "float64", atol=1e-12)


def test_group_norm_rule_values_and_double_backward():
    rng = np.random.default_rng(0)
    for shape, groups in (((2, 6, 5), 3), ((3, 4, 2, 3), 2), ((0, 4, 3), 2), ((2, 4), 2)):
        xv, gv = rng.standard_normal(shape), rng.standard_normal(shape)
        wv, bv = rng.standard_normal(shape[1]), rng.standard_normal(shape[1])
        res = []
        for lib in (T, dt):
            ins = [lib.tensor(v, requires_grad=True) for v in (xv, wv, bv)]
            y = lib.nn.functional.group_norm(ins[0], groups, ins[1], ins[2])
            gs = lib.autograd.grad([y], ins, [lib.tensor(gv)], create_graph=True)
            out = [t.detach().numpy() for t in gs]
            if xv.size:
                gg = lib.autograd.grad([(gs[0] * gs[0]).sum()], ins, allow_unused=True)
                out += [np.zeros(1) if t is None else t.numpy() for t in gg]
            res.append(out)
        for got, want in zip(res[1], res[0]):
            _check(got, want, "float64", atol=1e-12)


@pytest.mark.parametrize("dev", DEVS)
def test_prod_of_all_elements_with_two_zeros_or_more(dev):
    # PyTorch's prod_backward of all elements: zeros_like with two zeros or more (+0.0
    # for any g); one zero: the product of the others. Rows with infinities and no zero
    # are left out (PyTorch's g * result / x is inf / inf = NaN there; ours the product)
    dev = _dev(dev)
    rows = [[0.0, -0.0, 0.0, -0.0], [-0.0, -0.0, -0.0, -0.0], [1.0, 0.0, -0.0, 2.0],
            [1.0, 3.0, 3.0, 2.0], [1.0, nan, nan, 2.0], [0.0, 1.0, 2.0, 3.0],
            [0.0, inf, 1.0, 2.0], [0.0, 0.0, inf, 1.0], [[0.0, -0.0], [2.0, 0.0]]]
    for r in rows:
        _compare(lambda L, x: x.prod(), [r], dev)
