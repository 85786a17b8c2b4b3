"""The fused optimizer kernels (`_fused_adam_`, `_fused_sgd_`) against the CPU kernel:
several steps, every option, contiguous and strided state, float32 and float16."""
from __future__ import annotations

import numpy as np
import pytest

from _helpers import NP, assert_close, place

SHAPES = [(33, 7), (1000,), (0,)]


def _state(rng, dtype, n_arrays):
    return [[rng.standard_normal(s).astype(NP[dtype]) for s in SHAPES] for _ in range(n_arrays)]


def _steps(ocl, cpu, name, lists, layout, dtype, n_steps=3, **kw):
    host = [[a.copy() for a in arrs] for arrs in lists]
    dev = [[place(ocl, a, layout if a.ndim == 2 else "contig") for a in arrs] for arrs in lists]
    rng = np.random.default_rng(1)
    counts_cpu = [np.zeros((), np.float32) for _ in SHAPES]
    counts_dev = [np.zeros((), np.float32) for _ in SHAPES]
    for _ in range(n_steps):
        grads = [rng.standard_normal(s).astype(NP[dtype]) for s in SHAPES]
        gdev = [place(ocl, g) for g in grads]
        if name == "_fused_adam_":
            p, m, v, vm = host
            cpu.kernels[name](p, grads, m, v, vm, counts_cpu, **kw)
            p, m, v, vm = dev
            ocl.kernels[name](p, gdev, m, v, vm, counts_dev, **kw)
        else:
            p, b = host
            cpu.kernels[name](p, grads, b, **kw)
            p, b = dev
            ocl.kernels[name](p, gdev, b, **kw)
    return host, [[ocl.to_host(h) for h in arrs] for arrs in dev], counts_cpu, counts_dev


ADAM = [dict(weight_decay=0.0, decoupled=False, amsgrad=False, maximize=False),
        dict(weight_decay=0.1, decoupled=False, amsgrad=True, maximize=False),
        dict(weight_decay=0.01, decoupled=True, amsgrad=False, maximize=True)]


@pytest.mark.parametrize("options", ADAM, ids=["plain", "l2_amsgrad", "adamw_maximize"])
@pytest.mark.parametrize("layout", ["contig", "strided"])
def test_fused_adam_matches_cpu(ocl, cpu, options, layout):
    rng = np.random.default_rng(0)
    lists = _state(rng, "float32", 4)
    lists[2] = [np.abs(a) for a in lists[2]]            # second moments are >= 0
    lists[3] = [np.abs(a) for a in lists[3]]
    want, got, c_cpu, c_dev = _steps(ocl, cpu, "_fused_adam_", lists, layout, "float32",
                                     lr=1e-2, beta1=0.9, beta2=0.999, eps=1e-8, **options)
    for w_arrs, g_arrs in zip(want, got):
        for w, g in zip(w_arrs, g_arrs):
            assert_close(g, w, "float32", rtol=1e-5, atol=1e-6)
    assert [float(c) for c in c_dev] == [3.0] * len(SHAPES) == [float(c) for c in c_cpu]


def test_fused_adam_float16_rounds_once(ocl, cpu):
    rng = np.random.default_rng(2)
    lists = _state(rng, "float16", 4)
    lists[2] = [np.abs(a) for a in lists[2]]
    want, got, _, _ = _steps(ocl, cpu, "_fused_adam_", lists, "contig", "float16", n_steps=2,
                             lr=1e-2, beta1=0.9, beta2=0.999, eps=1e-8, weight_decay=0.0,
                             decoupled=False, amsgrad=False, maximize=False)
    for w, g in zip(want[0], got[0]):
        assert_close(g, w, "float16")


SGD = [dict(momentum=0.9, dampening=0.0, weight_decay=0.0, nesterov=False, maximize=False),
       dict(momentum=0.9, dampening=0.0, weight_decay=0.01, nesterov=True, maximize=False),
       dict(momentum=0.5, dampening=0.3, weight_decay=0.0, nesterov=False, maximize=True),
       dict(momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False, maximize=False)]


@pytest.mark.parametrize("options", SGD, ids=["momentum", "nesterov_l2", "dampened_maximize",
                                              "plain"])
def test_fused_sgd_matches_cpu(ocl, cpu, options):
    rng = np.random.default_rng(3)
    lists = _state(rng, "float32", 2)
    want, got, _, _ = _steps(ocl, cpu, "_fused_sgd_", lists, "strided", "float32", lr=0.05,
                             **options)
    for w_arrs, g_arrs in zip(want, got):
        for w, g in zip(w_arrs, g_arrs):
            assert_close(g, w, "float32", rtol=1e-5, atol=1e-6)


def _one_launch_each(monkeypatch):
    """Make the fused rows use the per-tensor kernel for every tensor."""
    from dispatchtorch_opencl.kernels import optim
    monkeypatch.setattr(optim, "_multi_runs", lambda lists, steps=None: (
        [], [i for i, p in enumerate(lists[0]) if p.size]))


@pytest.mark.parametrize("name", ["_fused_sgd_", "_fused_adam_"])
def test_multi_tensor_launch_gives_the_per_tensor_bits(ocl, rng, monkeypatch, name):
    """One launch over a group (multi_tensor.py: more tensors than MAX_TENSORS, an empty
    one, a strided one left to its own launch, step counts that differ) writes exactly
    what one launch per tensor writes."""
    from dispatchtorch_opencl.kernels import multi_tensor
    monkeypatch.setattr(multi_tensor, "MAX_TENSORS", 3)     # (fewer kernel builds than 8)
    shapes = [(5, 3), (0,), (70,), (1,), (9,), (9,), (9,)]
    n_state = 2 if name == "_fused_sgd_" else 4
    init = [[np.abs(rng.standard_normal(s)).astype(np.float32) for s in shapes]
            for _ in range(n_state)]
    grads = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    results = []
    for per_tensor in (False, True):
        if per_tensor:
            _one_launch_each(monkeypatch)
        dev = [[place(ocl, a, "strided" if i == 0 else "contig") for i, a in enumerate(arrs)]
               for arrs in init]
        g = [place(ocl, a) for a in grads]
        counts = [np.full((), 2.0 if i == 3 else 0.0, np.float32) for i in range(len(shapes))]
        for _ in range(2):
            if name == "_fused_sgd_":
                ocl.kernels[name](dev[0], g, dev[1], lr=0.1, momentum=0.9, dampening=0.1,
                                  weight_decay=0.01, nesterov=False, maximize=True)
            else:
                p, m, v, vm = dev
                ocl.kernels[name](p, g, m, v, vm, counts, lr=1e-2, beta1=0.9, beta2=0.999,
                                  eps=1e-8, weight_decay=0.01, decoupled=True, amsgrad=True,
                                  maximize=False)
        results.append([[ocl.to_host(h) for h in arrs] for arrs in dev])
    for multi, single in zip(*results):
        for a, b in zip(multi, single):
            np.testing.assert_array_equal(a, b)
    moved = results[0][0][2] != init[0][2]
    assert moved.all()                         # the group's tensors were updated
