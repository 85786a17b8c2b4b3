"""A pytorch_geometric-style program written once for both libraries: self loops by
sparse + sparse, symmetric degree normalisation by torch.sparse.sum / pow / sparse *
dense, two GCN layers by torch.sparse.mm, a GAT-style attention head whose edge scores
go through torch.sparse.softmax, a saved and reloaded adjacency, and Adam steps. The
losses and the trained weights equal PyTorch's to float64 rounding."""
from __future__ import annotations

import io

import numpy as np
import pytest

import dispatchtorch as dt

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.filterwarnings("ignore:Sparse invariant checks")

V, E, F, H, C = 40, 120, 8, 6, 3


def _program(m, edges, feats, labels, device="cpu"):
    m.manual_seed(0)
    ei = m.tensor(edges)
    adj = m.sparse_coo_tensor(ei, m.ones(E, dtype=m.float64), (V, V))
    adj = (adj + adj.t()).coalesce()                             # symmetric, duplicates summed
    adj = adj + m.eye(V, dtype=m.float64).to_sparse()            # self loops
    deg = m.sparse.sum(adj, 1).to_dense()
    norm = deg.pow(-0.5)
    a_hat = (adj * norm.unsqueeze(1) * norm.unsqueeze(0)).coalesce()
    buf = io.BytesIO()
    m.save({"adj": a_hat}, buf)
    buf.seek(0)
    a_hat = m.load(buf)["adj"].to(device)

    w1 = m.nn.Parameter(m.tensor(np.linspace(-0.5, 0.5, F * H).reshape(F, H), device=device))
    w2 = m.nn.Parameter(m.tensor(np.linspace(0.4, -0.3, H * C).reshape(H, C), device=device))
    att = m.nn.Parameter(m.tensor(np.linspace(-0.2, 0.3, 2 * C).reshape(2, C), device=device))
    opt = m.optim.Adam([w1, w2, att], lr=0.05)
    x, y = m.tensor(feats, device=device), m.tensor(labels, device=device)
    idx = a_hat.indices()
    losses = []
    for _ in range(4):
        opt.zero_grad()
        h = m.relu(m.sparse.mm(a_hat, x @ w1))
        z = m.sparse.mm(a_hat, h @ w2)                              # GCN logits
        score = m.nn.functional.leaky_relu((z[idx[0]] * att[0]).sum(1)
                                           + (z[idx[1]] * att[1]).sum(1), 0.2)
        alpha = m.sparse.softmax(m.sparse_coo_tensor(idx, score, (V, V)), 1)
        out = m.sparse.mm(alpha, z) + z                             # attention + residual
        loss = m.nn.functional.cross_entropy(out, y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, [p.detach().cpu().numpy() for p in (w1, w2, att)]


def test_gcn_and_attention_program_matches_pytorch():
    rng = np.random.default_rng(5)
    edges = rng.integers(0, V, (2, E))
    feats = rng.standard_normal((V, F))
    labels = rng.integers(0, C, V)
    ours, ow = _program(dt, edges, feats, labels)
    theirs, tw = _program(torch, edges, feats, labels)
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)
    assert ours[-1] < ours[0]
    for a, b in zip(ow, tw):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_program_on_opencl_equal_to_cpu():
    if not dt.opencl.is_available():
        pytest.skip("no OpenCL device")
    rng = np.random.default_rng(6)
    edges, feats, labels = rng.integers(0, V, (2, E)), rng.standard_normal((V, F)), \
        rng.integers(0, C, V)
    cpu, _ = _program(dt, edges, feats, labels)
    ocl, _ = _program(dt, edges, feats, labels, device="opencl")
    np.testing.assert_allclose(ocl, cpu, rtol=1e-10, atol=1e-10)
