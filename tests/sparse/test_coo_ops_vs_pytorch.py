"""Arithmetic, reductions, softmax and transposes of COO tensors against PyTorch 2.13:
values (compared as dense), layout and coalesced flags, and gradients through the values
(of a sparse leaf's .grad and of the values a sparse tensor was made from); PyTorch's
errors for what it refuses, NotImplementedError naming the op for what is not here."""
from __future__ import annotations

import numpy as np
import pytest

import dispatchtorch as dt

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.filterwarnings("ignore:Sparse invariant checks")

IDX = np.array([[0, 2, 0, 3, 2], [1, 3, 1, 0, 3]])      # duplicates at (0, 1) and (2, 3)
VALS = np.array([1.5, -2.0, 0.25, 3.0, 0.5])
SIZE = (4, 5)
RNG = np.random.default_rng(7)
DENSE = RNG.standard_normal(SIZE)


def _np(t):
    t = t.detach()
    return (t.to_dense() if t.layout is not dt.strided else t).cpu().numpy()


def _tnp(t):
    t = t.detach()
    return (t.to_dense() if t.layout is not torch.strided else t).numpy()


def _pair(dtype="float64", leaf=True):
    v = VALS.astype(dtype)
    ours = dt.sparse_coo_tensor(dt.tensor(IDX), dt.tensor(v), SIZE, requires_grad=leaf)
    theirs = torch.sparse_coo_tensor(torch.tensor(IDX), torch.tensor(v), SIZE,
                                     requires_grad=leaf)
    return ours, theirs


def _loss(m, r):
    """A weighted sum of r's dense form (fixed weights of r's shape)."""
    d = r.to_dense() if r.layout is not m.strided else r
    w = np.random.default_rng(8).standard_normal(tuple(d.shape)).astype(str(d.dtype).split(".")[-1])
    return (d * m.tensor(w)).sum()


def _values_fd(f, dtype):
    """Central differences of _loss(f(values)) in each value (float64)."""
    g = np.zeros(len(VALS))
    for k in range(len(VALS)):
        out = []
        for h in (1e-6, -1e-6):
            v = VALS.copy()
            v[k] += h
            s = dt.sparse_coo_tensor(dt.tensor(IDX), dt.tensor(v), SIZE)
            out.append(_loss(dt, f(dt, s, dt.tensor(DENSE))).item())
        g[k] = (out[0] - out[1]) / 2e-6
    return g


def _check(f, dtype="float64", tol=1e-12, grad=True):
    """f(module, sparse, dense) on both libraries: values, layout, coalesced flag, and the
    gradients of the sparse leaf (sparse, on the coalesced pattern) and the dense operand.
    Where PyTorch's gradient of the sparse leaf is dense (dense + sparse), ours refuses
    the leaf; where PyTorch has no backward for a sparse leaf, the gradient of the values
    a sparse tensor is made from is checked (against PyTorch's, or finite differences)."""
    t = _pair(dtype, leaf=grad)[1]
    td = torch.tensor(DENSE.astype(dtype), requires_grad=grad)
    tr = f(torch, t, td)
    grad = grad and tr.dtype.is_floating_point
    leaf_ok = grad
    if grad:
        try:
            _loss(torch, tr).backward()
        except (NotImplementedError, RuntimeError):
            leaf_ok = False
    leaf_dense = leaf_ok and t.grad is not None and t.grad.layout is torch.strided
    s = _pair(dtype, leaf=grad)[0]
    d = dt.tensor(DENSE.astype(dtype), requires_grad=grad)
    if leaf_dense:
        with pytest.raises(NotImplementedError, match="dense in PyTorch"):
            f(dt, s, d)
    if grad and (leaf_dense or not leaf_ok):     # the values' gradient instead
        v = dt.tensor(VALS.astype(dtype), requires_grad=True)
        s = dt.sparse_coo_tensor(dt.tensor(IDX), v, SIZE)
    r = f(dt, s, d)
    assert (r.layout is dt.sparse_coo) == (tr.layout is torch.sparse_coo)
    assert tuple(r.shape) == tuple(tr.shape) and r.dtype.name == str(tr.dtype)[6:]
    if r.layout is dt.sparse_coo and tr.is_coalesced():   # ours may coalesce where it
        assert r.is_coalesced()                           # sums (sparse + sparse)
    np.testing.assert_allclose(_np(r), _tnp(tr), rtol=tol, atol=tol)
    if not grad:
        return r
    _loss(dt, r).backward()
    if leaf_dense:          # every entry's gradient: PyTorch's dense gradient at its index
        np.testing.assert_allclose(_np(v.grad), t.grad.numpy()[tuple(IDX)], rtol=tol, atol=tol)
    elif not leaf_ok:
        tv = torch.tensor(VALS.astype(dtype), requires_grad=True)
        try:
            _loss(torch, f(torch, torch.sparse_coo_tensor(torch.tensor(IDX), tv, SIZE),
                           torch.tensor(DENSE.astype(dtype)))).backward()
            want, wtol = tv.grad.numpy(), tol
        except (NotImplementedError, RuntimeError):
            want, wtol = _values_fd(f, dtype), 1e-5
        np.testing.assert_allclose(_np(v.grad), want, rtol=wtol, atol=wtol)
        return r
    elif t.grad is not None:
        assert s.grad.is_sparse            # PyTorch's may drop zero entries: as dense
        np.testing.assert_allclose(_np(s.grad), _tnp(t.grad), rtol=tol, atol=tol)
    else:
        assert s.grad is None
    if td.grad is not None:
        np.testing.assert_allclose(_np(d.grad), _tnp(td.grad), rtol=tol, atol=tol)
    else:
        assert d.grad is None
    return r


BINARY = {
    "dense + sparse": lambda m, s, d: d + s,
    "add(dense, sparse, alpha)": lambda m, s, d: m.add(d, s, alpha=2.5),
    "dense.add(sparse)": lambda m, s, d: d.add(s),
    "dense - sparse": lambda m, s, d: d - s,
    "sub(dense, sparse)": lambda m, s, d: m.sub(d, s),
    "sparse + sparse": lambda m, s, d: s + s * 2,
    "add(sparse, sparse, alpha)": lambda m, s, d: m.add(s, s, alpha=-1.5),
    "sparse - sparse": lambda m, s, d: s - s.coalesce() * 3,
    "sparse * scalar": lambda m, s, d: s * 3,
    "scalar * sparse": lambda m, s, d: -0.5 * s,
    "sparse * 0-d": lambda m, s, d: s * d[1, 2],
    "sparse / scalar": lambda m, s, d: s / 4,
    "sparse / 0-d": lambda m, s, d: s / d[0, 0],
    "torch.div": lambda m, s, d: m.div(s, 2),
    "-sparse": lambda m, s, d: -s,
    "neg": lambda m, s, d: m.neg(s),
    "sparse * sparse": lambda m, s, d: s * s,
    "sparse * sparse coalesced": lambda m, s, d: s.coalesce() * (s * 2).coalesce(),
    "sparse * dense": lambda m, s, d: s * d,
    "dense * sparse": lambda m, s, d: d * s,
    "torch.mul": lambda m, s, d: m.mul(s, d),
    "sparse * row": lambda m, s, d: s * d[0],
    "coalesced * dense": lambda m, s, d: s.coalesce() * d,
    "sparse ** 2": lambda m, s, d: s ** 2,
    "pow(sparse, 3)": lambda m, s, d: m.pow(s, 3),
    "abs().pow(-0.5)": lambda m, s, d: s.abs().pow(-0.5),
    "sparse.sum": lambda m, s, d: m.sparse.sum(s) * d[0, 0],
    "sparse.sum(1)": lambda m, s, d: m.sparse.sum(s, 1),
    "sparse.sum(-2)": lambda m, s, d: m.sparse.sum(s, -2),
    "sparse.sum((0, 1))": lambda m, s, d: m.sparse.sum(s, (0, 1)),
    "Tensor.sum()": lambda m, s, d: s.sum(),
    "Tensor.sum(1)": lambda m, s, d: s.sum(1),
    "torch.sum": lambda m, s, d: m.sum(s),
    "t()": lambda m, s, d: s.t(),
    "torch.t": lambda m, s, d: m.t(s.coalesce()),
    "transpose(1, 0)": lambda m, s, d: s.transpose(1, 0),
    "torch.transpose": lambda m, s, d: m.transpose(s, -1, 0),
    "transpose(0, 0)": lambda m, s, d: s.coalesce().transpose(0, 0),
    "softmax(1)": lambda m, s, d: m.sparse.softmax(s * 3, 1),
    "softmax(0)": lambda m, s, d: m.sparse.softmax(s, 0),
    "log_softmax(1)": lambda m, s, d: m.sparse.log_softmax(s, -1),
    "t() @ dense": lambda m, s, d: m.sparse.mm(s.t(), d),
    "sparse @ vector": lambda m, s, d: s.detach() @ d[0],
    "vector @ sparse": lambda m, s, d: m.matmul(d[:, 1], s.detach()),
    "sparse.mm(sparse, sparse)": lambda m, s, d: m.sparse.mm(s, (s.t() * 2).coalesce()),
    "sparse @ sparse": lambda m, s, d: s @ m.sparse_coo_tensor([[1, 3, 0, 3], [0, 1, 2, 1]],
                                                               [1.0, 2.0, 3.0, -1.0], (5, 3),
                                                               dtype=m.float64),
    "torch.mm(sparse, sparse)": lambda m, s, d: m.mm(s.t(), s),
    "index_select(0)": lambda m, s, d: s.index_select(0, m.tensor([2, 0, 2])) * d[:3],
    "torch.index_select(1)": lambda m, s, d: m.index_select(s, 1, m.tensor([3, 1])) * d[:, :2],
    "sparse_mask": lambda m, s, d: d.sparse_mask(s.detach().coalesce()),
    "sparse_mask uncoalesced": lambda m, s, d: (d * 2).sparse_mask(s.detach()),
    "sparse.addmm": lambda m, s, d: m.sparse.addmm(d[:, :2], s, d.t()[:, :2], beta=0.5,
                                                   alpha=2),
    "clone": lambda m, s, d: s.clone() * 2,
    "double": lambda m, s, d: s.double() + s,
    "detach": lambda m, s, d: d + s.detach(),
    "gcn row normalisation": lambda m, s, d: m.sparse.mm(
        (s.abs() + s.abs()).coalesce() * m.sparse.sum(s.abs(), 1).to_dense().pow(-1).unsqueeze(1),
        d.t()),
}


@pytest.mark.parametrize("name", list(BINARY))
def test_ops_match_pytorch(name):
    _check(BINARY[name])


UNARY = ["abs", "sqrt", "relu", "sin", "tan", "tanh", "asin", "atan", "sinh", "asinh",
         "atanh", "expm1", "log1p", "trunc", "floor", "ceil", "round", "sign", "sgn",
         "square", "erf", "erfinv", "deg2rad", "rad2deg", "frac", "neg", "negative",
         "isnan", "isinf", "isposinf", "isneginf", "signbit", "nan_to_num", "positive",
         "fix", "absolute", "arctan", "arcsinh"]


# torch.<name> of these decomposes into comparisons, which sparse tensors do not have
METHOD_ONLY = ("positive", "isnan", "isinf", "isposinf", "isneginf", "nan_to_num", "sgn")


@pytest.mark.parametrize("form", ["method", "function"])
@pytest.mark.parametrize("name", UNARY)
def test_zero_preserving_unary_ops(name, form):
    small = name in ("asin", "atanh", "erfinv")        # their domain is (-1, 1)

    def f(m, s, d):
        x = s * 0.3 if small else s
        if name == "sqrt":
            x = x.abs()
        if form == "method" or name in METHOD_ONLY:
            return getattr(x, name)()
        return getattr(m, name)(x)
    _check(f, tol=1e-12)


def test_dense_updated_in_place_by_sparse():
    s, t = _pair(leaf=False)
    d, td = dt.tensor(DENSE), torch.tensor(DENSE)
    d += s
    td += t
    d.add_(s, alpha=2.5)
    td.add_(t, alpha=2.5)
    d.sub_(s)
    td.sub_(t)
    np.testing.assert_allclose(_np(d), td.numpy(), rtol=1e-12, atol=1e-12)


def test_float32_and_relu_through_functional():
    _check(lambda m, s, d: m.nn.functional.relu(s) * d, dtype="float32", tol=1e-6)
    _check(lambda m, s, d: m.sparse.softmax(s, 1), dtype="float32", tol=1e-6)


def test_values_gradient_through_ops():
    """A sparse tensor made from values that require grad passes them the gradient."""
    for f in (lambda m, s: (s * s).to_dense(), lambda m, s: m.sparse.sum(s, 0).to_dense(),
              lambda m, s: m.sparse.softmax(s, 1).to_dense(), lambda m, s: (s.t() / 3).to_dense()):
        v, tv = dt.tensor(VALS, requires_grad=True), torch.tensor(VALS, requires_grad=True)
        s = dt.sparse_coo_tensor(dt.tensor(IDX), v, SIZE)
        t = torch.sparse_coo_tensor(torch.tensor(IDX), tv, SIZE)
        r, tr = f(dt, s), f(torch, t)
        w = RNG.standard_normal(tuple(r.shape))
        (r * dt.tensor(w)).sum().backward()
        (tr * torch.tensor(w)).sum().backward()
        np.testing.assert_allclose(_np(v.grad), tv.grad.numpy(), rtol=1e-12, atol=1e-12)


def test_hybrid_sum_softmax_and_transpose():
    """sparse_dim 2, dense_dim 1: sums, a dense-dim softmax and transposes."""
    vals = RNG.standard_normal((5, 3))
    s = dt.sparse_coo_tensor(dt.tensor(IDX), dt.tensor(vals), SIZE + (3,))
    t = torch.sparse_coo_tensor(torch.tensor(IDX), torch.tensor(vals), SIZE + (3,))
    for f in (lambda m, x: m.sparse.sum(x, 2), lambda m, x: m.sparse.sum(x, (0, 1)),
              lambda m, x: m.sparse.sum(x, (0, 2)), lambda m, x: m.sparse.softmax(x, 2),
              lambda m, x: m.sparse.softmax(x, 0), lambda m, x: x.transpose(0, 1),
              lambda m, x: x * m.ones(3, dtype=m.float64) * 2):
        r, tr = f(dt, s), f(torch, t)
        assert (r.layout is dt.sparse_coo) == (tr.layout is torch.sparse_coo)
        np.testing.assert_allclose(_np(r), _tnp(tr), rtol=1e-12, atol=1e-12)


def test_int_values_and_dtypes():
    s = dt.sparse_coo_tensor(dt.tensor(IDX), dt.tensor([1, -2, 3, 4, 5]), SIZE)
    t = torch.sparse_coo_tensor(torch.tensor(IDX), torch.tensor([1, -2, 3, 4, 5]), SIZE)
    for f in (lambda x: x.abs(), lambda x: x.sqrt(), lambda x: x / 2, lambda x: x * 2.5,
              lambda x: x.sum(), lambda x: x.int().sum(1), lambda x: x.float(), lambda x: x.bool(),
              lambda x: x.double() * x.long()):
        r, tr = f(s), f(t)
        assert r.dtype.name == str(tr.dtype)[6:]
        np.testing.assert_array_equal(_np(r), _tnp(tr))


BAD = [
    lambda m, s: s + m.ones(4, 5),
    lambda m, s: m.add(s, m.ones(4, 5)),
    lambda m, s: s - m.ones(4, 5),
    lambda m, s: s + 1,
    lambda m, s: m.ones(5) + s,
    lambda m, s: s / m.ones(4, 5),
    lambda m, s: s / s,
    lambda m, s: s ** 0,
    lambda m, s: s * m.ones(3),
    lambda m, s: s * m.sparse_coo_tensor([[0], [0]], [1.0], (4, 6)),
    lambda m, s: m.sparse.sum(s, 2),
    lambda m, s: m.sparse.sum(s, (1, 1)),
    lambda m, s: m.sparse.softmax(s, 2),
    lambda m, s: s.transpose(0, 2),
    lambda m, s: m.sparse.mm(s, s),
    lambda m, s: s.index_select(0, m.tensor([5])),
    lambda m, s: s.index_select(1, m.tensor([0.0])),
    lambda m, s: m.ones(3, 5).sparse_mask(s),
    lambda m, s: m.sparse_coo_tensor([[0], [0], [0]], [1.0], (2, 2, 2)).t(),
    lambda m, s: m.sparse_coo_tensor(m.tensor(IDX), m.ones(5, 3), (4, 5, 3)).transpose(0, 2),
]


@pytest.mark.parametrize("i", range(len(BAD)))
def test_bad_input_raises_pytorchs_error(i):
    s, t = _pair(leaf=False)
    with pytest.raises(Exception) as theirs:
        BAD[i](torch, t)
    with pytest.raises(type(theirs.value)) as ours:
        BAD[i](dt, s)
    # ours may name the op first ("sum(): Dimension out of range ...")
    assert str(ours.value).endswith(str(theirs.value).split("\n")[0])


@pytest.mark.parametrize("name, call", [
    ("exp", lambda s: dt.exp(s)), ("exp", lambda s: s.exp()), ("sigmoid", lambda s: dt.sigmoid(s)),
    ("view", lambda s: s.view(20)), ("getitem", lambda s: s[0]), ("mean", lambda s: s.mean()),
    ("softmax", lambda s: dt.softmax(s, 1)), ("mul", lambda s: s.mul_(2)),
    ("pow", lambda s: s ** dt.ones(4, 5)), ("pow", lambda s: 2 ** s),
    ("div", lambda s: 2 / s), ("sum", lambda s: s.sum(1, keepdim=True)),
    ("abs", lambda s: dt.abs(s, out=dt.empty(4, 5))), ("mul", lambda s: s * dt.ones(3, 4, 5)),
    ("numpy", lambda s: s.numpy()), ("sparse_mask", lambda s: dt.ones(4, 5).sparse_mask(dt.ones(4, 5))),
    ("index_select", lambda s: s.index_select(0, dt.tensor([1]), out=dt.empty(0)))])
def test_unsupported_ops_raise_not_implemented_naming_them(name, call):
    s, _ = _pair(leaf=False)
    with pytest.raises(NotImplementedError, match=name):
        call(s)


def test_on_opencl_equal_to_cpu():
    if not dt.opencl.is_available():
        pytest.skip("no OpenCL device")
    s, _ = _pair("float32", leaf=False)
    d = dt.tensor(DENSE.astype(np.float32))
    so, do = s.to("opencl"), d.to("opencl")
    for f in (lambda x, y: y + x, lambda x, y: x * y, lambda x, y: (x * x).abs().sqrt(),
              lambda x, y: dt.sparse.sum(x, 1), lambda x, y: dt.sparse.softmax(x, 1),
              lambda x, y: x.t() * 2):
        ro, rc = f(so, do), f(s, d)
        assert ro.device.type == "opencl"
        np.testing.assert_allclose(_np(ro), _np(rc), rtol=1e-6, atol=1e-6)
