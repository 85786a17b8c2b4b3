"""The minimal CSR layout against PyTorch 2.13 (construction, its invariants' errors,
to_dense / to_sparse / to_sparse_csr, products with a dense operand and their gradients,
repr), and sparse tensors through pickle and dispatchtorch.save / load."""
from __future__ import annotations

import io
import pickle

import numpy as np
import pytest

import dispatchtorch as dt

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.filterwarnings("ignore:Sparse CSR tensor support",
                                        "ignore:Sparse invariant checks")

X = np.array([[0.0, 2.0, 0.0, -1.0], [0.0, 0.0, 0.0, 0.0], [3.0, 0.0, 0.5, 0.0]])


def _np(t):
    t = t.detach()
    return (t.to_dense() if t.layout is not dt.strided else t).cpu().numpy()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_to_sparse_csr_parts_repr_and_back(dtype):
    c, tc = dt.tensor(X.astype(dtype)).to_sparse_csr(), torch.tensor(X.astype(dtype)).to_sparse_csr()
    assert c.layout is dt.sparse_csr and c.is_sparse_csr and not c.is_sparse
    assert not dt.ones(2).is_sparse_csr and tc.is_sparse_csr and not tc.is_sparse
    for a, b in ((c.crow_indices(), tc.crow_indices()), (c.col_indices(), tc.col_indices()),
                 (c.values(), tc.values())):
        np.testing.assert_array_equal(_np(a), b.numpy())
    assert c._nnz() == tc._nnz() and tuple(c.shape) == tuple(tc.shape)
    np.testing.assert_array_equal(_np(c.to_dense()), X.astype(dtype))
    # the same text; lines wrap at 80 columns, which the longer module name moves
    assert repr(c).split() == repr(tc).replace("torch.", "dispatchtorch.").split()
    coo, tcoo = c.to_sparse(), tc.to_sparse()
    assert coo.is_sparse and coo.is_coalesced() == tcoo.is_coalesced()
    np.testing.assert_array_equal(_np(coo.indices()), tcoo.indices().numpy())
    back = dt.tensor(X).to_sparse().to_sparse_csr()
    np.testing.assert_array_equal(_np(back.crow_indices()), tc.crow_indices().numpy())


def test_csr_casts_and_clone():
    c = dt.tensor(X, dtype=dt.float32).to_sparse_csr()
    c64, cc = c.to(dt.float64), c.clone()
    assert c64.dtype is dt.float64 and c64.layout is dt.sparse_csr and c.to("cpu") is c
    assert cc.values() is not c.values() and c.detach().layout is dt.sparse_csr
    np.testing.assert_array_equal(_np(c64), X)
    np.testing.assert_array_equal(_np(cc.double()), X)


def test_sparse_csr_tensor_and_size_inference():
    c = dt.sparse_csr_tensor([0, 1, 3], [1, 0, 2], [1.0, 2.0, 3.0])
    tc = torch.sparse_csr_tensor([0, 1, 3], [1, 0, 2], [1.0, 2.0, 3.0])
    assert tuple(c.shape) == tuple(tc.shape) and c.crow_indices().dtype is dt.int64
    np.testing.assert_array_equal(_np(c), tc.to_dense().numpy())
    c64 = dt.sparse_csr_tensor(np.array([0, 1, 3]), np.array([1, 0, 2]), [1, 2, 3], (2, 4),
                               dtype=dt.float64)
    assert c64.dtype is dt.float64 and tuple(c64.shape) == (2, 4)


@pytest.mark.parametrize("form", ["@", "mm", "matmul", "dense @", "@ vector"])
def test_products_with_dense_and_gradients(form):
    rng = np.random.default_rng(3)
    y = rng.standard_normal((4, 2)) if form != "dense @" else rng.standard_normal((2, 3))
    if form == "@ vector":
        y = rng.standard_normal(4)
    f = {"@": lambda m, a, b: a @ b, "mm": lambda m, a, b: m.mm(a, b),
         "matmul": lambda m, a, b: m.matmul(a, b), "dense @": lambda m, a, b: b @ a,
         "@ vector": lambda m, a, b: a @ b}[form]
    vals = X[X != 0]
    v, tv = dt.tensor(vals, requires_grad=True), torch.tensor(vals, requires_grad=True)
    crow, col = [0, 2, 2, 4], [1, 3, 0, 2]
    c = dt.sparse_csr_tensor(crow, col, v, X.shape)
    tc = torch.sparse_csr_tensor(torch.tensor(crow), torch.tensor(col), tv, X.shape)
    dy, ty = dt.tensor(y, requires_grad=True), torch.tensor(y, requires_grad=True)
    out, tout = f(dt, c, dy), f(torch, tc, ty)
    assert out.layout is dt.strided and tuple(out.shape) == tuple(tout.shape)
    np.testing.assert_allclose(_np(out), tout.detach().numpy(), rtol=1e-13, atol=1e-13)
    w = rng.standard_normal(tuple(out.shape))
    (out * dt.tensor(w)).sum().backward()
    (tout * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(_np(dy.grad), ty.grad.numpy(), rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(_np(v.grad), tv.grad.numpy(), rtol=1e-13, atol=1e-13)


def test_csr_leaf_gradient_is_refused():
    c = dt.tensor(X).to_sparse_csr().requires_grad_()
    with pytest.raises(NotImplementedError, match="dense in PyTorch"):
        c @ dt.ones(4, 2, dtype=dt.float64)
    with dt.no_grad():
        assert tuple((c @ dt.ones(4, 2, dtype=dt.float64)).shape) == (3, 2)


BAD = [
    ([0, 1, 3], [1, 0], [1.0, 2.0], (2, 3)),
    ([1, 1, 2], [1, 0], [1.0, 2.0], (2, 3)),
    ([0, 1, 2], [1, 5], [1.0, 2.0], (2, 3)),
    ([0, 1, 2], [1, 0, 1], [1.0, 2.0], (2, 3)),
    ([0, 2, 1], [1, 0], [1.0, 2.0], (2, 3)),
    ([0, 1, 2, 2], [1, 0], [1.0, 2.0], (2, 3)),
    ([[0, 1, 2]], [1, 0], [1.0, 2.0], (2, 3)),
    ([0, 1, 2], [1, -1], [1.0, 2.0], (2, 3)),
    ([0, 1, 2], [1, 0], [1.0, 2.0], (2, 3, 4)),
]


@pytest.mark.parametrize("i", range(len(BAD)))
def test_bad_csr_raises_pytorchs_error(i):
    crow, col, vals, size = BAD[i]
    with pytest.raises(Exception) as theirs:     # PyTorch checks only when asked to
        torch.sparse_csr_tensor(torch.tensor(crow), torch.tensor(col), torch.tensor(vals), size,
                                check_invariants=True)
    with pytest.raises(type(theirs.value)) as ours:
        dt.sparse_csr_tensor(dt.tensor(crow), dt.tensor(col), dt.tensor(vals), size)
    assert str(ours.value) == str(theirs.value).split("\n")[0]


@pytest.mark.parametrize("call", [lambda c: c + c, lambda c: c.sum(), lambda c: dt.exp(c),
                                  lambda c: c * 2, lambda c: c[0]])
def test_other_csr_ops_raise_not_implemented(call):
    with pytest.raises(NotImplementedError, match="sparse CSR"):
        call(dt.tensor(X).to_sparse_csr())


def _coo():
    v = dt.tensor([1.5, -2.0, 0.25], requires_grad=True)
    return dt.sparse_coo_tensor([[0, 2, 0], [1, 3, 1]], v * 1.0, (3, 4))   # uncoalesced


def test_pickle_round_trip():
    s = _coo().detach()
    c = dt.tensor(X).to_sparse_csr()
    s2, c2 = pickle.loads(pickle.dumps(s)), pickle.loads(pickle.dumps(c))
    assert s2.is_sparse and s2.is_coalesced() == s.is_coalesced() and s2._nnz() == 3
    np.testing.assert_array_equal(_np(s2._indices()), _np(s._indices()))
    np.testing.assert_array_equal(_np(s2), _np(s))
    assert c2.layout is dt.sparse_csr
    np.testing.assert_array_equal(_np(c2), X)
    leaf = dt.tensor(X).to_sparse().requires_grad_()
    assert pickle.loads(pickle.dumps(leaf)).requires_grad


@pytest.mark.parametrize("where", ["state", "module"])
def test_save_and_load(tmp_path, where):
    s, c = _coo().detach(), dt.tensor(X, dtype=dt.float32).to_sparse_csr()
    path = tmp_path / "ckpt.pt"
    if where == "state":
        dt.save({"adj": s, "csr": c, "w": dt.ones(2), "same": s}, path)
        got = dt.load(path)
        assert got["same"]._values() is got["adj"]._values()    # stored once
    else:
        m = dt.nn.Module()
        m.adj, m.csr = s, c
        dt.save(m, path)
        got = vars(dt.load(path, weights_only=False))
    a, b = got["adj"], got["csr"]
    assert a.is_sparse and not a.is_coalesced() and a.dtype is dt.float32
    np.testing.assert_array_equal(_np(a._indices()), _np(s._indices()))
    np.testing.assert_array_equal(_np(a._values()), _np(s._values()))
    assert b.layout is dt.sparse_csr
    np.testing.assert_array_equal(_np(b), X.astype(np.float32))


def test_load_refuses_a_forged_sparse_node():
    """A checkpoint (checksums right) whose sparse entry's indices exceed its size is
    refused with sparse_coo_tensor's error, not built."""
    import json
    import zlib
    st = pytest.importorskip("safetensors.numpy")
    from dispatchtorch import serialization as S
    arrays = {}
    node = S._encode({"s": dt.sparse_coo_tensor([[0, 2]], [1.0, 2.0], (3,))}, arrays, memo={})
    node["__dict__"][0][1]["__sparse_coo__"][2] = [2]           # size 2, index 2
    meta = json.dumps({"format": S.FORMAT, "version": S.VERSION, "structure": node})
    data = st.save(arrays, metadata={S._META_KEY: meta,
                                     S._META_KEY + ".crc32": str(zlib.crc32(meta.encode()))})
    with pytest.raises(RuntimeError, match="size is inconsistent with indices"):
        dt.load(io.BytesIO(data))


def test_csr_on_opencl_equal_to_cpu():
    if not dt.opencl.is_available():
        pytest.skip("no OpenCL device")
    vals = X[X != 0].astype(np.float32)
    y = np.random.default_rng(9).standard_normal((4, 3)).astype(np.float32)
    out = {}
    for dev in ("cpu", "opencl"):
        v = dt.tensor(vals, device=dev, requires_grad=True)
        c = dt.sparse_csr_tensor([0, 2, 2, 4], [1, 3, 0, 2], v, X.shape)
        dy = dt.tensor(y, device=dev, requires_grad=True)
        r = c @ dy + (dy.t() @ c.to_dense().t()).t()
        r.sum().backward()
        assert c.device.type == dev and c.crow_indices().device.type == dev
        out[dev] = [_np(r), _np(v.grad), _np(dy.grad)]
    for a, b in zip(out["cpu"], out["opencl"]):
        np.testing.assert_allclose(b, a, rtol=1e-6, atol=1e-6)
