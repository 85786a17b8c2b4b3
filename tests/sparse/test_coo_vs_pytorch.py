"""dispatchtorch's COO sparse tensors against PyTorch 2.13: construction (dtype, size
inference, numpy indices), coalescing duplicates, to_dense / to_sparse, sparse @ dense
and dense @ sparse with their gradients (dense operand, values, a leaf's sparse grad),
empty nnz, float32 / float64, and PyTorch's errors for bad input."""
from __future__ import annotations

import numpy as np
import pytest

import dispatchtorch as dt

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.filterwarnings("ignore:Sparse invariant checks")

# duplicates at (0, 1) and (2, 3); rows 1 is empty
IDX = np.array([[0, 2, 0, 3, 2], [1, 3, 1, 0, 3]])
VALS = np.array([1.5, -2.0, 0.25, 3.0, 4.0])
SIZE = (4, 5)


def _np(t):
    return t.detach().cpu().numpy()


def _pair(dtype="float32", **kw):
    ours = dt.sparse_coo_tensor(dt.tensor(IDX), dt.tensor(VALS.astype(dtype)), SIZE, **kw)
    theirs = torch.sparse_coo_tensor(torch.tensor(IDX), torch.tensor(VALS.astype(dtype)),
                                     SIZE, **kw)
    return ours, theirs


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_coalesce_sums_duplicates_and_sorts(dtype):
    s, t = _pair(dtype)
    assert s.is_sparse and s.layout is dt.sparse_coo and not s.is_coalesced()
    assert s._nnz() == t._nnz() == 5 and tuple(s.shape) == tuple(t.shape)
    assert s.dtype.name == str(t.dtype).split(".")[1] and s.device.type == "cpu"
    c, tc = s.coalesce(), t.coalesce()
    assert c.is_coalesced() and c._nnz() == tc._nnz() == 3
    np.testing.assert_array_equal(_np(c.indices()), tc.indices().numpy())
    np.testing.assert_array_equal(_np(c.values()), tc.values().numpy())
    np.testing.assert_array_equal(_np(s.to_dense()), t.to_dense().numpy())
    with pytest.raises(RuntimeError, match="Cannot get indices on an uncoalesced tensor"):
        s.indices()


def test_numpy_int32_indices_dtype_cast_and_size_inference():
    edges = np.array([[0, 1], [2, 0], [2, 0]], dtype=np.int32)     # upstream gcn's call
    s = dt.sparse_coo_tensor(edges.T, dt.ones(3), (3, 3), dtype=dt.int64)
    t = torch.sparse_coo_tensor(edges.T, torch.ones(3), (3, 3), dtype=torch.int64)
    assert s.dtype is dt.int64 and s._indices().dtype is dt.int64
    np.testing.assert_array_equal(_np(s.to_dense()), t.to_dense().numpy())
    d, td = dt.eye(3) + s, torch.eye(3) + t                           # dense + sparse
    assert d.layout is dt.strided and d.dtype is dt.float32
    np.testing.assert_array_equal(_np(d), td.numpy())
    inferred = dt.sparse_coo_tensor([[0, 3], [1, 0]], [1.0, 2.0])
    assert tuple(inferred.shape) == tuple(torch.sparse_coo_tensor([[0, 3], [1, 0]],
                                                                  [1.0, 2.0]).shape)


def test_to_sparse_of_dense_and_repr():
    x = np.array([[0.0, 2.0, 0.0], [0.0, 0.0, -1.0]], dtype=np.float32)
    s, t = dt.tensor(x).to_sparse(), torch.tensor(x).to_sparse()
    assert s.is_coalesced() == t.is_coalesced()
    np.testing.assert_array_equal(_np(s.indices()), t.indices().numpy())
    np.testing.assert_array_equal(_np(s.values()), t.values().numpy())
    assert repr(s) == repr(t).replace("torch.", "dispatchtorch.")
    s64 = dt.sparse_coo_tensor([[0, 1], [1, 0]], [1.0, 2.0], dtype=dt.float64)
    t64 = torch.sparse_coo_tensor([[0, 1], [1, 0]], [1.0, 2.0], dtype=torch.float64)
    assert repr(s64) == repr(t64).replace("torch.", "dispatchtorch.")
    e = dt.sparse_coo_tensor(dt.zeros(2, 0, dtype=dt.int64), dt.zeros(0), (2, 2))
    te = torch.sparse_coo_tensor(torch.zeros(2, 0, dtype=torch.long), torch.zeros(0), (2, 2))
    assert repr(e) == repr(te).replace("torch.", "dispatchtorch.")
    assert dt.tensor(x).to_dense() is not None and dt.ones(2).layout is dt.strided


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("form", ["sparse.mm", "mm", "spmm", "matmul", "@"])
def test_sparse_times_dense_and_grad_of_dense(dtype, form):
    s, t = _pair(dtype)
    y = np.random.default_rng(1).standard_normal((5, 3)).astype(dtype)
    dy, ty = dt.tensor(y, requires_grad=True), torch.tensor(y, requires_grad=True)
    f = {"sparse.mm": lambda m, a, b: m.sparse.mm(a, b), "mm": lambda m, a, b: m.mm(a, b),
         "spmm": lambda m, a, b: m.spmm(a, b), "matmul": lambda m, a, b: m.matmul(a, b),
         "@": lambda m, a, b: a @ b}[form]
    out, tout = f(dt, s, dy), f(torch, t, ty)
    assert out.layout is dt.strided
    tol = 1e-6 if dtype == "float32" else 1e-13
    np.testing.assert_allclose(_np(out), tout.detach().numpy(), rtol=tol, atol=tol)
    w = np.arange(12, dtype=dtype).reshape(4, 3)
    (out * dt.tensor(w)).sum().backward()
    (tout * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(_np(dy.grad), ty.grad.numpy(), rtol=tol, atol=tol)


def test_dense_times_sparse_and_gcn_renormalisation():
    s, t = _pair("float64")
    x = np.random.default_rng(2).standard_normal((3, 4))
    np.testing.assert_allclose(_np(dt.tensor(x) @ s), (torch.tensor(x) @ t).numpy(),
                               rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(_np(dt.mm(dt.tensor(x), s)), torch.mm(torch.tensor(x), t).numpy(),
                               rtol=1e-13, atol=1e-13)
    deg = np.array([1.0, 0.5, 2.0, 0.25])
    a = np.random.default_rng(3).random((4, 4))
    ours = dt.diag(dt.tensor(deg)).to_sparse() @ dt.tensor(a) @ dt.diag(dt.tensor(deg)).to_sparse()
    theirs = (torch.diag(torch.tensor(deg)).to_sparse() @ torch.tensor(a)
              @ torch.diag(torch.tensor(deg)).to_sparse())
    np.testing.assert_allclose(_np(ours), theirs.numpy(), rtol=1e-13, atol=1e-13)


def test_gradient_to_values_and_sparse_leaf_grad():
    y = np.random.default_rng(4).standard_normal((5, 2)).astype(np.float32)
    v, tv = dt.tensor(VALS.astype(np.float32), requires_grad=True), \
        torch.tensor(VALS.astype(np.float32), requires_grad=True)
    s = dt.sparse_coo_tensor(dt.tensor(IDX), v, SIZE)
    t = torch.sparse_coo_tensor(torch.tensor(IDX), tv, SIZE)
    assert s.requires_grad and not s.is_leaf and t.requires_grad and not t.is_leaf
    (dt.sparse.mm(s, dt.tensor(y)) ** 2).sum().backward()
    (torch.sparse.mm(t, torch.tensor(y)) ** 2).sum().backward()
    np.testing.assert_allclose(_np(v.grad), tv.grad.numpy(), rtol=1e-5, atol=1e-6)
    leaf, tleaf = _pair(requires_grad=True)
    assert leaf.is_leaf and leaf.requires_grad
    (dt.sparse.mm(leaf, dt.tensor(y)) ** 2).sum().backward()
    (torch.sparse.mm(tleaf, torch.tensor(y)) ** 2).sum().backward()
    g, tg = leaf.grad, tleaf.grad
    assert g.is_sparse and g.is_coalesced() and tg.is_sparse
    tg = tg.coalesce()
    np.testing.assert_array_equal(_np(g.indices()), tg.indices().numpy())
    np.testing.assert_allclose(_np(g.values()), tg.values().numpy(), rtol=1e-5, atol=1e-6)
    with pytest.raises(NotImplementedError, match="torch.sparse.mm"):
        dt.mm(leaf, dt.tensor(y))          # PyTorch's gradient here is dense: not kept


def test_empty_nnz():
    s = dt.sparse_coo_tensor(dt.zeros(2, 0, dtype=dt.int64), dt.zeros(0), (3, 2))
    t = torch.sparse_coo_tensor(torch.zeros(2, 0, dtype=torch.long), torch.zeros(0), (3, 2))
    y = dt.ones(2, 4, requires_grad=True)
    out = dt.sparse.mm(s, y)
    np.testing.assert_array_equal(_np(out), torch.sparse.mm(t, torch.ones(2, 4)).numpy())
    out.sum().backward()
    np.testing.assert_array_equal(_np(y.grad), np.zeros((2, 4), np.float32))
    assert s.coalesce()._nnz() == 0 and _np(s.to_dense()).shape == (3, 2)


BAD = [
    (lambda m: m.sparse_coo_tensor([[0, 5], [1, 0]], [1.0, 2.0], (2, 2)), {"check_invariants": True}),
    (lambda m: m.sparse_coo_tensor([[0, -1], [1, 0]], [1.0, 2.0], (2, 2)), {"check_invariants": True}),
    (lambda m: m.sparse_coo_tensor([[0, 1], [1, 0]], [1.0, 2.0, 3.0], (2, 2)), {}),
    (lambda m: m.sparse_coo_tensor([0, 1], [1.0, 2.0], (2, 2)), {}),
    (lambda m: m.sparse_coo_tensor([[0, 1], [1, 0]], [1.0, 2.0], (2,)), {}),
    (lambda m: m.sparse.mm(m.sparse_coo_tensor([[0, 1], [1, 0]], [1.0, 2.0]), m.ones(3, 2)), {}),
    (lambda m: m.sparse.mm(m.sparse_coo_tensor([[0, 1], [1, 0]], [1.0, 2.0]),
                           m.ones(2, 2, dtype=m.float64)), {}),
    (lambda m: m.ones(2, 2) + m.sparse_coo_tensor([[0, 1]], [1.0, 2.0], (3,)), {}),
    (lambda m: m.sparse_coo_tensor([[0, 1]], [1.0, 2.0], (2,)) + m.ones(2), {}),
]


@pytest.mark.parametrize("i", range(len(BAD)))
def test_bad_input_raises_pytorchs_error(i):
    make, torch_kw = BAD[i]
    if torch_kw:             # PyTorch checks index ranges only when asked; we always do
        orig = torch.sparse_coo_tensor
        tmod = type("M", (), {"sparse_coo_tensor": staticmethod(
            lambda *a, **k: orig(*a, **k, **torch_kw))})
    else:
        tmod = torch
    with pytest.raises(Exception) as theirs:
        make(tmod)
    with pytest.raises(type(theirs.value)) as ours:
        make(dt)
    assert str(ours.value) == str(theirs.value).split("\n")[0]


@pytest.mark.parametrize("call", [lambda s: s.exp(), lambda s: dt.exp(s), lambda s: s.mean(),
                                  lambda s: dt.cumsum(s, 0), lambda s: s.view(2), lambda s: s[0]])
def test_other_ops_raise_not_implemented_naming_sparse(call):
    s = dt.sparse_coo_tensor([[0, 1]], [1.0, 2.0], (2,))
    with pytest.raises(NotImplementedError, match="sparse COO"):
        call(s)


def test_to_device_and_dtype():
    s, t = _pair()
    assert s.to("cpu") is s
    s64, t64 = s.to(dt.float64), t.to(torch.float64)
    assert s64.dtype is dt.float64 and not s64.is_coalesced()
    np.testing.assert_array_equal(_np(s64.to_dense()), t64.to_dense().numpy())
    np.testing.assert_array_equal(_np(s.t().to_dense()), t.t().to_dense().numpy())


def test_on_opencl_equal_to_cpu():
    """Everything is public ops, so a sparse tensor moved to OpenCL multiplies there."""
    if not dt.opencl.is_available():
        pytest.skip("no OpenCL device")
    s, _ = _pair()
    so = s.to("opencl")
    assert so.device.type == "opencl" and so._indices().device.type == "opencl"
    y = np.random.default_rng(6).standard_normal((5, 3)).astype(np.float32)
    yc, yo = dt.tensor(y, requires_grad=True), dt.tensor(y, device="opencl", requires_grad=True)
    oc, oo = dt.spmm(s, yc), dt.spmm(so, yo)
    np.testing.assert_allclose(_np(oo), _np(oc), rtol=1e-6, atol=1e-6)
    oc.sum().backward()
    oo.sum().backward()
    np.testing.assert_allclose(_np(yo.grad), _np(yc.grad), rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(_np(so.coalesce().to_dense()), _np(s.coalesce().to_dense()))
