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


def test_in_place_writes_to_closed_over_tensors_persist_across_replays():
    """A tensor from before the call that the graph writes (a parameter updated in
    place, a counter) is written where it lives, as eager writes it; before, every
    replay started from a copy of the captured values and the writes were lost."""
    torch.manual_seed(0)
    w = torch.randn(3)
    counter = torch.zeros(1)
    w0 = _np(w).copy()

    def update(g):
        w.sub_(0.1 * g)
        counter.add_(1)
        return w.sum()
    f = torch.compile(update)
    g = torch.ones(3)
    for i in range(1, 4):
        s = f(g)
        np.testing.assert_allclose(_np(w), w0 - 0.1 * i, rtol=1e-6)
        np.testing.assert_allclose(_np(s), (w0 - 0.1 * i).sum(), rtol=1e-6)
        assert float(counter) == i
    (entry,) = _entries(f)
    assert type(entry) is Entry


def test_a_constant_made_inside_the_call_still_starts_fresh():
    def f(a):
        t = torch.tensor([1.0, 2.0])
        t.mul_(a)
        return t
    cf = torch.compile(f)
    for _ in range(3):
        np.testing.assert_allclose(_np(cf(torch.tensor(3.0))), [3.0, 6.0])


def _train(compile_what):
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(6, 5), torch.nn.BatchNorm1d(5), torch.nn.ReLU(),
                            torch.nn.Dropout(0.3), torch.nn.Linear(5, 3))
    opt = torch.optim.SGD(m.parameters(), lr=0.05, momentum=0.9)
    x = torch.tensor(np.random.default_rng(2).standard_normal((8, 6)).astype(np.float32))
    y = torch.tensor([0, 1, 2, 0, 1, 2, 0, 1])
    step = opt.step
    if compile_what == "opt.step":
        step = torch.compile(opt.step)

    def train_step(a, b):
        opt.zero_grad()
        loss = F.cross_entropy(m(a), b)
        loss.backward()
        step()
        return loss
    if compile_what == "train_step":
        train_step = torch.compile(train_step)
    torch.manual_seed(5)
    losses = [float(train_step(x, y)) for _ in range(4)]
    return losses, [_np(t).copy() for t in m.state_dict().values()], train_step, step


@pytest.mark.parametrize("what", ["opt.step", "train_step"])
def test_a_compiled_optimizer_step_or_training_step_equals_eager(what):
    """The optimizer's state lives in Python (SGD's momentum buffers are made on the
    first step): optimizer.step() and backward() inside the call break the graph, so
    those calls run eagerly; before, SGD's replays made the momentum buffer afresh each
    step and trained without momentum."""
    want, state, _, _ = _train(None)
    got, got_state, train_step, step = _train(what)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    for a, b in zip(got_state, state):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
    cf = step if what == "opt.step" else train_step
    (entry,) = _entries(cf)
    assert type(entry) is EagerEntry
    reason = entry.graph.breaks[0].reason
    assert ("optimizer.step()" in reason) if what == "opt.step" else ("backward()" in reason)


def test_autocast_and_the_default_dtype_are_part_of_the_signature():
    """A capture under autocast computes in bfloat16: a call outside it captures again
    (before, it replayed the bfloat16 graph and returned bfloat16)."""
    torch.manual_seed(0)
    m = torch.nn.Linear(4, 3)
    cm = torch.compile(m)
    x = torch.randn(2, 4)
    for _ in range(2):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            assert cm(x).dtype == torch.bfloat16
        out = cm(x)
        assert out.dtype == torch.float32
        np.testing.assert_allclose(_np(out), _np(m(x)), rtol=1e-6)
    f = torch.compile(lambda a: a + torch.ones(2))
    torch.set_default_dtype(torch.float64)
    try:
        assert f(torch.zeros(2, dtype=torch.int64)).dtype == torch.float64
    finally:
        torch.set_default_dtype(torch.float32)
    assert f(torch.zeros(2, dtype=torch.int64)).dtype == torch.float32
    assert len(_entries(cm._compiled)) == 2 and len(_entries(f)) == 2


def test_hooks_and_plain_attributes_are_guarded():
    """A hook registered after the capture, and a plain attribute the forward reads,
    change what eager computes: the next call captures again. A user's hook (Python
    side effects a replay would not repeat) makes the module's call run eagerly;
    weight_norm's hook (tensor ops only) is replayed."""
    torch.manual_seed(0)
    m = torch.nn.Linear(4, 3)
    cm = torch.compile(m)
    x = torch.randn(2, 4)
    cm(x)
    cm(x)
    feats = []
    h = m.register_forward_hook(lambda mod, i, o: feats.append(o.detach()) or o * 2)
    for _ in range(2):
        np.testing.assert_allclose(_np(cm(x)), 2 * _np(x @ m.weight.T + m.bias), rtol=1e-6)
    assert len(feats) == 2                       # the hook ran on every call
    assert type(cm._compiled.cache[list(cm._compiled.cache)[-1]]) is EagerEntry
    h.remove()
    np.testing.assert_allclose(_np(cm(x)), _np(x @ m.weight.T + m.bias), rtol=1e-6)

    class Scaled(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = 1.0
            self.lin = torch.nn.Linear(4, 3)

        def forward(self, a):
            return self.lin(a) * self.scale
    s = Scaled()
    cs = torch.compile(s)
    cs(x)
    s.scale = 5.0
    np.testing.assert_allclose(_np(cs(x)), 5 * _np(s.lin(x)), rtol=1e-6)

    wn = torch.nn.utils.weight_norm(torch.nn.Linear(4, 3))
    cw = torch.compile(wn)
    for _ in range(2):
        out = cw(x)
    np.testing.assert_allclose(_np(out), _np(wn(x)), rtol=1e-6)
    assert all(type(e) is Entry for e in _entries(cw._compiled))


_SCALE = 2.0


def test_plain_values_a_function_reads_by_name_are_guarded():
    """A global, a closure variable and an attribute of a closed-over object that the
    function's code names: changing one captures again (before, the replay kept the
    captured value), as does model.eval() on a model the function closes over."""
    global _SCALE
    x = torch.ones(3)
    f = torch.compile(lambda a: a * _SCALE)
    np.testing.assert_allclose(_np(f(x)), 2.0)
    _SCALE = 3.0
    np.testing.assert_allclose(_np(f(x)), 3.0)
    _SCALE = 2.0

    k = 2.0
    g = torch.compile(lambda a: a * k)
    np.testing.assert_allclose(_np(g(x)), 2.0)
    k = 5.0
    np.testing.assert_allclose(_np(g(x)), 5.0)

    class Cfg:
        temp = 1.0
    cfg = Cfg()
    h = torch.compile(lambda a: a / cfg.temp)
    np.testing.assert_allclose(_np(h(x)), 1.0)
    cfg.temp = 4.0
    np.testing.assert_allclose(_np(h(x)), 0.25)

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 8), torch.nn.Dropout(0.5))
    run = torch.compile(lambda a: model(a))
    a = torch.randn(4, 3)
    run(a)
    model.eval()
    np.testing.assert_allclose(_np(run(a)), _np(model(a)), rtol=1e-6)   # no dropout now


def test_arguments_sharing_memory_are_part_of_the_signature():
    """f(x, x) after captures of f(a, b): the in-place writes through the first argument
    change what the second reads, as eager; before, the replay computed 10 for 16."""
    def f(a, b):
        a.mul_(2)
        c = b * 3
        a.add_(c)
        return a + b
    cf = torch.compile(f)
    for _ in range(2):
        cf(torch.ones(4), torch.ones(4))
    x, y = torch.ones(4), torch.ones(4)
    want, got = f(x, x), cf(y, y)
    np.testing.assert_allclose(_np(got), _np(want))
    np.testing.assert_allclose(_np(y), _np(x))
    assert len(_entries(cf)) == 2

    def g(a, b):                       # b a view of a: it reads a's update
        a.add_(1)
        return b * 1
    cg = torch.compile(g)
    for _ in range(2):
        cg(torch.zeros(4), torch.zeros(2))
    base = torch.zeros(4)
    np.testing.assert_allclose(_np(cg(base, base[:2])), [1.0, 1.0])
    assert len(_entries(cg)) == 2
