"""Tensors that require grad which a compiled function reads without taking them as
arguments (a model in a closure or a global: `torch.compile(lambda x: loss(model(x)))`)
are lifted to parameters of the graph: the replayed calls' gradients reach them as in
eager. Before, they were constants and the second call's output had no grad_fn."""
import numpy as np
import pytest

import dispatchtorch as torch
import dispatchtorch.nn.functional as F
from dispatchtorch._compile.compiled import EagerEntry, Entry
from dispatchtorch._compile.errors import Unsupported
from tests.compile.compile_helpers import DEVICES, _close, _entries, _np


def _model(dev):
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(6, 5), torch.nn.ReLU(),
                               torch.nn.Linear(5, 3)).to(dev)


@pytest.mark.parametrize("dev", DEVICES)
def test_a_closure_over_a_model_trains_as_eager(dev):
    """SGD steps on a compiled loss closing over the model: losses and weights equal
    eager's step by step, the replay's gradients included."""
    x = torch.tensor(np.random.default_rng(1).standard_normal((4, 6)).astype(np.float32),
                     device=dev)
    y = torch.tensor([0, 2, 1, 2], device=dev)
    runs = []
    for compiled in (False, True):
        model = _model(dev)
        opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        loss_of = lambda a, b: F.cross_entropy(model(a), b)      # noqa: E731
        if compiled:
            loss_of = torch.compile(loss_of)
        losses = []
        for _ in range(4):
            opt.zero_grad()
            loss = loss_of(x, y)
            loss.backward()
            opt.step()
            losses.append(float(loss))
        runs.append((losses, [p.detach().clone() for p in model.parameters()], loss_of))
    (le, pe, _), (lc, pc, cf) = runs
    np.testing.assert_allclose(lc, le, rtol=1e-6 if dev == "cpu" else 1e-5)
    assert lc[0] != lc[-1]                                       # it did train
    for a, b in zip(pc, pe):
        _close(a, b, dev, scale=10)
    (entry,) = _entries(cf)
    assert type(entry) is Entry and entry.differentiable
    assert sorted(cf.lifted) == [f"closed[{i}]" for i in range(4)]


def test_a_closed_over_leaf_and_an_argument_both_get_their_gradients():
    torch.manual_seed(0)
    w = torch.randn(3, requires_grad=True)
    f = torch.compile(lambda a: (a * w).sum() + (w * w).sum())
    for _ in range(3):
        a = torch.randn(3, requires_grad=True)
        w.grad = None
        f(a).backward()
        np.testing.assert_allclose(_np(a.grad), _np(w))
        np.testing.assert_allclose(_np(w.grad), _np(a) + 2 * _np(w), rtol=1e-6)


def test_a_global_parameter_gets_its_gradient_and_in_place_updates_are_seen():
    torch.manual_seed(0)
    global _GLOBAL_W
    _GLOBAL_W = torch.nn.Parameter(torch.randn(4, 2))
    f = torch.compile(lambda a: (a @ _GLOBAL_W).square().sum())
    a = torch.randn(3, 4)
    for step in range(3):
        _GLOBAL_W.grad = None
        out = f(a)
        out.backward()
        want = 2 * _np(a).T @ (_np(a) @ _np(_GLOBAL_W))
        np.testing.assert_allclose(_np(out), (np.square(_np(a) @ _np(_GLOBAL_W))).sum(), rtol=1e-5)
        np.testing.assert_allclose(_np(_GLOBAL_W.grad), want, rtol=1e-5)
        with torch.no_grad():
            _GLOBAL_W.sub_(0.01 * _GLOBAL_W.grad)         # the replay reads the new values


def test_a_leaf_made_inside_the_call_is_no_lift_and_no_break():
    f = torch.compile(lambda a: (a * torch.ones(3, requires_grad=True)).sum())
    a = torch.randn(3, requires_grad=True)
    for _ in range(2):
        a.grad = None
        f(a).backward()
        np.testing.assert_allclose(_np(a.grad), np.ones(3))
    (entry,) = _entries(f)
    assert type(entry) is Entry and not f.lifted


def test_a_non_leaf_from_outside_breaks_the_graph_and_stays_right():
    """w2 = w * 2 made before the call: its gradient path to w is not in the graph's
    values, so the call runs eagerly (fullgraph=True says why)."""
    w = torch.randn(3, requires_grad=True)
    w2 = w * 2
    f = torch.compile(lambda a: (a * w2).sum())
    a = torch.randn(3)
    for _ in range(2):
        w.grad = None
        f(a).backward(retain_graph=True)
        np.testing.assert_allclose(_np(w.grad), 2 * _np(a))
    (entry,) = _entries(f)
    assert type(entry) is EagerEntry
    with pytest.raises(Unsupported, match="computed before the call"):
        torch.compile(lambda a: (a * w2).sum(), fullgraph=True)(a)


def test_an_argument_with_a_history_is_no_break():
    """A non-leaf argument (the output of an eager model) takes its gradient out of the
    graph as an input: its history's leaves are not the function's to lift."""
    torch.manual_seed(0)
    first = torch.nn.Linear(3, 3)
    second = torch.nn.Linear(3, 2)
    f = torch.compile(lambda h: second(h).sum())
    x = torch.randn(4, 3)
    for _ in range(2):
        first.zero_grad()
        second.zero_grad()
        f(first(x)).backward()
    got = [_np(p.grad).copy() for p in (*first.parameters(), *second.parameters())]
    first.zero_grad()
    second.zero_grad()
    second(first(x)).sum().backward()
    for g, p in zip(got, (*first.parameters(), *second.parameters())):
        np.testing.assert_allclose(g, _np(p.grad), rtol=1e-6)
    (entry,) = _entries(f)
    assert type(entry) is Entry and sorted(f.lifted) == ["closed[0]", "closed[1]"]
