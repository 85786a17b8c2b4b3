"""torch.func.linearize, functionalize and replace_all_batch_norm_modules_, side by side
with PyTorch's."""
from __future__ import annotations

import numpy as np
import pytest

import dispatchtorch as torch
from dispatchtorch.func import functionalize, linearize

pt = pytest.importorskip("torch")


def _both(x):
    return torch.tensor(x), pt.tensor(x)


def _np(t):
    return t.detach().numpy()


def _raised(fn):
    with pytest.raises(Exception) as e:
        fn()
    return type(e.value), str(e.value)


def test_linearize_values_and_jvp_as_pytorch():
    rng = np.random.default_rng(0)
    x, v = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))

    def f(lib):
        return lambda a, b: (a.sin() * b, (a * b).sum())
    outs = []
    for lib in (torch, pt):
        a, b = lib.tensor(x), lib.tensor(x * 2)
        out, jvp_fn = linearize(f(lib), a, b) if lib is torch else \
            pt.func.linearize(f(lib), a, b)
        first = jvp_fn(lib.tensor(v), lib.tensor(v * 3))
        second = jvp_fn(lib.tensor(v * -1), lib.tensor(v))
        outs.append([_np(t) for t in (*out, *first, *second)])
    for ours, theirs in zip(*outs):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)


def test_linearize_reads_the_primals_when_jvp_fn_runs_as_pytorch():
    results = []
    for lib, lin in ((torch, linearize), (pt, pt.func.linearize)):
        x = lib.ones(3)
        _, jvp_fn = lin(lambda a: a * a, x)
        x.mul_(5)
        results.append(_np(jvp_fn(lib.ones(3))))
    np.testing.assert_array_equal(*results)
    np.testing.assert_array_equal(results[0], [10.0, 10.0, 10.0])


@pytest.mark.parametrize("bad", ["shape", "dtype", "structure"])
def test_linearize_checks_tangents_as_pytorch(bad):
    seen = []
    for lib, lin in ((torch, linearize), (pt, pt.func.linearize)):
        _, jvp_fn = lin(lib.sin, lib.zeros(3))
        tangents = {"shape": (lib.zeros(4),), "dtype": (lib.zeros(3, dtype=lib.float64),),
                    "structure": (lib.zeros(3), lib.zeros(3))}[bad]
        seen.append(_raised(lambda: jvp_fn(*tangents)))
    assert seen[0][0] is seen[1][0] is RuntimeError
    if bad != "structure":          # (the TreeSpec reprs differ; the sentence is the same)
        assert seen[0][1].replace("dispatchtorch.", "torch.") == seen[1][1]
    else:
        assert seen[0][1].startswith("Expected the tangents ")
        assert "to have the same argspec as the primals" in seen[0][1]


def _mutating(lib):
    def f(x):
        y = x.view(-1)
        y.add_(1)
        z = x * 2
        return y, x, z, z.view(-1)
    return f


@pytest.mark.parametrize("remove", ["mutations", "mutations_and_views"])
def test_functionalize_values_mutations_and_aliasing_as_pytorch(remove):
    seen = []
    for lib, fz in ((torch, functionalize), (pt, pt.func.functionalize)):
        x = lib.zeros(2, 2)
        out = fz(_mutating(lib), remove=remove)(x)
        ptrs = [o.data_ptr() for o in out]
        seen.append(([_np(o) for o in out], _np(x), [p == x.data_ptr() for p in ptrs],
                     [[p == q for q in ptrs] for p in ptrs]))
    (ov, ox, oa, og), (tv, tx, ta, tg) = seen
    for a, b in zip(ov, tv):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(ox, tx)        # the input's mutation is seen outside
    assert oa == ta == [False] * 4               # no output aliases the input
    assert og == tg                              # which outputs alias one another


def test_functionalize_pytree_inputs_kwargs_and_gradients():
    for lib, fz in ((torch, functionalize), (pt, pt.func.functionalize)):
        d = {"a": lib.zeros(2)}

        def g(x, d, k=1):
            d["a"].add_(k)
            return [x.t() * k]
        r = fz(g)(lib.ones(2, 3), d, k=3)
        assert _np(d["a"]).tolist() == [3.0, 3.0]
        assert list(r[0].shape) == [3, 2]
        w = lib.ones(2, requires_grad=True)
        fz(lambda a: (a * 3).sum())(w).backward()
        assert _np(w.grad).tolist() == [3.0, 3.0]


def test_functionalize_refuses_writing_a_leaf_that_requires_grad_and_leaves_it():
    def h(a):
        a.mul_(2)
        return a
    seen = []
    for lib, fz in ((torch, functionalize), (pt, pt.func.functionalize)):
        w = lib.ones(2, requires_grad=True)
        seen.append(_raised(lambda: fz(h)(w)))
        assert _np(w).tolist() == [1.0, 1.0]
    assert seen[0] == seen[1]


def test_functionalize_copies_inputs_that_share_memory_apart_as_pytorch():
    for lib, fz in ((torch, functionalize), (pt, pt.func.functionalize)):
        x = lib.zeros(4)

        def f(a, b):
            b.add_(1)                 # b views a's first two entries
            return a * 1
        out = fz(f)(x, x[:2])
        assert _np(out).tolist() == [0.0, 0.0, 0.0, 0.0]     # not seen inside
        assert _np(x).tolist() == [1.0, 1.0, 0.0, 0.0]       # seen after


def test_functionalize_bad_remove_as_pytorch():
    assert _raised(lambda: functionalize(abs, remove="x")) == \
        _raised(lambda: pt.func.functionalize(abs, remove="x"))


def test_replace_all_batch_norm_modules_as_pytorch():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4, 3, 5, 5)).astype(np.float32)
    w = rng.standard_normal((3, 3, 1, 1)).astype(np.float32)
    seen = []
    for lib in (torch, pt):
        net = lib.nn.Sequential(lib.nn.Conv2d(3, 3, 1, bias=False), lib.nn.BatchNorm2d(3),
                                lib.nn.Sequential(lib.nn.BatchNorm2d(3, track_running_stats=False)))
        with lib.no_grad():
            net[0].weight.copy_(lib.tensor(w))
        assert lib.func.replace_all_batch_norm_modules_(net) is net
        bn = net[1]
        state = (bn.running_mean, bn.running_var, bn.num_batches_tracked, bn.track_running_stats)
        net.eval()                       # no running statistics: batch statistics in eval too
        seen.append((state, sorted(net.state_dict()), net(lib.tensor(x)).detach().numpy()))
    assert seen[0][0] == seen[1][0] == (None, None, None, False)
    assert seen[0][1] == seen[1][1]
    np.testing.assert_allclose(seen[0][2], seen[1][2], rtol=1e-4, atol=1e-5)
