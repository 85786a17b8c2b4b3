"""dispatchtorch.compile: compiled runs equal eager runs (values, gradients, in-place
effects, random numbers under a seed) with fewer kernel launches; guards, graph breaks
and the torch.compile / torch._dynamo API."""
import copy

import numpy as np
import pytest

import dispatchtorch as torch
from dispatchtorch._compile.compiled import EagerEntry, Entry
from benchmarks import models as M
from tests.compile.compile_helpers import DEVICES, TOL, _close, _entries, _np


def chain(x, y, z):
    return torch.exp(x * y + z) * x - y          # 5 elementwise prims


@pytest.mark.parametrize("dev", DEVICES)
def test_elementwise_chain_equals_eager_in_one_kernel(dev):
    x, y, z = (torch.randn(3, 1000, device=dev) for _ in range(3))
    cf = torch.compile(chain)
    cf(x, y, z)                                   # captures (runs eagerly)
    got = cf(x, y, z)                             # replays
    want = np.exp(_np(x) * _np(y) + _np(z)) * _np(x) - _np(y)
    np.testing.assert_allclose(_np(got), want, rtol=1e-5, atol=1e-6)
    _close(got, chain(x, y, z), dev)
    entry, = _entries(cf)
    assert entry.launches() == (5, 1) and entry.forward.n_regions == 1


@pytest.mark.parametrize("dev", DEVICES)
def test_chain_gradients_equal_eager(dev):
    torch.manual_seed(0)
    x, y, z = (torch.randn(64, 33, device=dev, requires_grad=True) for _ in range(3))
    cf = torch.compile(chain)
    for _ in range(2):
        for t in (x, y, z):
            t.grad = None
        cf(x, y, z).sum().backward()
        got = [t.grad for t in (x, y, z)]
        for t in (x, y, z):
            t.grad = None
        chain(x, y, z).sum().backward()
        for g, t in zip(got, (x, y, z)):
            _close(g, t.grad, dev)
    entry, = _entries(cf)
    eager, compiled = entry.launches()
    assert entry.differentiable and compiled < eager


def test_inplace_effects_on_inputs_and_buffers_match_eager():
    def f(a, b):
        a.mul_(2.0)
        b[1:] = a[:-1] + 1.0
        return a + b

    x, y = torch.randn(6), torch.zeros(6)
    ex, ey = x.clone(), y.clone()
    cf = torch.compile(f)
    for _ in range(3):
        got = cf(x, y)
        want = f(ex, ey)
        _close(got, want, "cpu")
        _close(x, ex, "cpu")
        _close(y, ey, "cpu")


@pytest.mark.parametrize("dev", DEVICES)
def test_dropout_draws_the_same_numbers_as_eager_under_a_seed(dev):
    x = torch.ones(8, 16, device=dev)
    f = lambda a: torch.nn.functional.dropout(a * 3.0, 0.5) + 1.0   # noqa: E731
    cf = torch.compile(f)
    outs = []
    for fn in (f, cf):
        torch.manual_seed(7)
        outs.append([_np(fn(x)) for _ in range(3)])
    for e, c in zip(*outs):
        np.testing.assert_array_equal(e, c)
    assert not np.array_equal(outs[1][1], outs[1][2])     # a fresh mask per call


def test_graph_break_runs_eagerly_and_fullgraph_names_the_op():
    def f(a):
        s = a.sum().item()
        return a * s

    x = torch.randn(5)
    cf = torch.compile(f)
    for _ in range(2):
        _close(cf(x), f(x), "cpu")
    entry, = _entries(cf)
    assert isinstance(entry, EagerEntry) and entry.graph.breaks[0].op == "item"
    with pytest.raises(torch._dynamo.exc.Unsupported, match=r"item .*test_compile.py"):
        torch.compile(f, fullgraph=True)(x)


def test_module_with_a_break_compiles_its_children():
    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh())
            self.b = torch.nn.Linear(8, 2)

        def forward(self, x):
            h = self.a(x)
            if h.sum() > 0:                       # data-dependent control flow
                h = h * 2.0
            return self.b(h)

    torch.manual_seed(0)
    net = Net()
    cnet = torch.compile(copy.deepcopy(net))
    x = torch.randn(3, 4)
    for _ in range(2):
        _close(cnet(x), net(x), "cpu")
    children = cnet._compiled.patched_children
    assert {type(c).__name__ for c in children} == {"Sequential", "Linear"}
    assert all(isinstance(e, Entry) for c in children for e in c.forward.cache.values())
    torch._dynamo.reset()
    assert not cnet._compiled.cache and "forward" not in vars(children[0])


def test_new_shape_recaptures_and_guards_on_grad_mode():
    cf = torch.compile(chain)
    for n in (4, 9, 4):
        x, y, z = torch.randn(n), torch.randn(n), torch.randn(n)
        _close(cf(x, y, z), chain(x, y, z), "cpu")
        _close(cf(x, y, z), chain(x, y, z), "cpu")
    assert len(cf.cache) == 2
    w = torch.randn(4, requires_grad=True)
    cf(w, torch.randn(4), torch.randn(4))
    with torch.no_grad():
        cf(w, torch.randn(4), torch.randn(4))
    assert len(cf.cache) == 4


def test_module_api_decorator_disable_and_explain():
    lin = torch.nn.Linear(3, 3)
    c = torch.compile(lin)
    assert isinstance(c, torch.nn.Module) and c._orig_mod is lin
    assert [id(p) for p in c.parameters()] == [id(p) for p in lin.parameters()]
    assert list(c.state_dict()) == ["_orig_mod.weight", "_orig_mod.bias"]
    assert torch.compile(lin, disable=True) is lin

    @torch.compile(backend="eager")
    def g(a):
        return torch.relu(a) * 2.0 + 1.0

    x = torch.randn(10)
    g(x)
    _close(g(x), torch.relu(x) * 2.0 + 1.0, "cpu")
    assert _entries(g)[0].forward.n_regions == 0           # "eager": prims replayed unfused
    out = torch._dynamo.explain(chain)(x, x, x)
    assert out.graph_count == 1 and out.graph_break_count == 0
    assert out.ops_per_graph == [["mul", "add", "exp", "mul", "sub"]]
    assert "tiled numpy" in str(out.generated[0][0]) and "exp(" in str(out)
    assert torch.compile(chain, dynamic=True).dynamic is True     # tests/compile/test_dynamic.py
    with pytest.raises(RuntimeError, match="Unrecognized mode"):
        torch.compile(chain, mode="fastest")
    with pytest.raises(RuntimeError, match="Unexpected optimization option"):
        torch.compile(chain, options={"unroll": True})


def test_passes_cse_and_dce_remove_work():
    def f(a):
        unused = torch.exp(a) * 3.0           # noqa: F841  (dead)
        return torch.sin(a) + torch.sin(a)    # one sin is enough

    cf = torch.compile(f, options={"fusion": False})
    x = torch.randn(7)
    cf(x)
    _close(cf(x), f(x), "cpu")
    entry, = _entries(cf)
    assert entry.launches() == (5, 2)        # exp, mul gone; sin computed once, then add


def _train(dev, build, batch, opt, steps=2, lr=1e-2):
    torch.manual_seed(0)
    model = build(torch).to(dev)
    twin = copy.deepcopy(model)
    compiled = torch.compile(twin)
    x, y = batch(dev)
    s1 = M.training_step(torch, model, opt(model.parameters(), lr=lr), x, y)
    s2 = M.training_step(torch, compiled, opt(twin.parameters(), lr=lr), x, y)
    for i in range(steps):
        torch.manual_seed(10 + i)
        l1 = s1().item()
        torch.manual_seed(10 + i)
        l2 = s2().item()
        assert abs(l1 - l2) <= TOL[dev] * 10 * max(1.0, abs(l1)), (i, l1, l2)
    for p, q in zip(model.parameters(), twin.parameters()):
        _close(q, p, dev, scale=100)
    return compiled


def _batch(shape, classes):
    def make(dev):
        rng = np.random.default_rng(0)
        x = torch.tensor(rng.standard_normal(shape).astype(np.float32), device=dev)
        return x, torch.tensor(rng.integers(0, classes, shape[0]), device=dev)
    return make


def _tokens(dev):
    rng = np.random.default_rng(0)
    return (torch.tensor(rng.integers(0, 65, (2, 16)), device=dev),
            torch.tensor(rng.integers(0, 65, (2, 16)), device=dev))


@pytest.mark.parametrize("dev", DEVICES)
def test_mlp_training_equals_eager(dev):
    c = _train(dev, lambda tl: M.mlp(tl, 32, 64), _batch((16, 32), 10), torch.optim.SGD)
    entry, = _entries(c._compiled)
    eager, compiled = entry.launches()
    assert compiled < eager


@pytest.mark.parametrize("dev", DEVICES)
def test_digits_cnn_training_equals_eager(dev):
    c = _train(dev, M.digits_cnn, _batch((8, 1, 8, 8), 10), torch.optim.Adam)
    entry, = _entries(c._compiled)
    assert entry.launches()[1] < entry.launches()[0]


@pytest.mark.parametrize("dev", DEVICES)
def test_tiny_transformer_training_equals_eager(dev):
    build = lambda tl: M.tiny_transformer(tl, d_model=32, layers=1, block=16)   # noqa: E731
    c = _train(dev, build, _tokens, torch.optim.AdamW)
    # the embeddings' index checks are kept in the graph (no break): one compiled entry
    entry, = _entries(c._compiled)
    assert isinstance(entry, Entry) and not entry.graph.breaks and not c._compiled.patched_children
    # fewer launches than eager besides the two index checks (eager's softmax backward is
    # one softmax_backward kernel since the fifth session, so fusion saves less here)
    assert entry.forward.n_checks == 2
    assert entry.launches()[1] - entry.forward.n_checks < entry.launches()[0]


def test_views_kwargs_nested_outputs_and_batchnorm_buffers():
    bn = torch.nn.Sequential(torch.nn.Linear(4, 6), torch.nn.BatchNorm1d(6))
    twin = copy.deepcopy(bn)
    cbn = torch.compile(twin)

    def f(a, *, scale):
        return {"t": a.t(), "pair": (a[1:] * scale, a.sum(0))}

    cf = torch.compile(f)
    x = torch.randn(5, 4)
    for _ in range(3):
        got, want = cf(x, scale=2.0), f(x, scale=2.0)
        assert got["t"].stride() == want["t"].stride() == (1, 4)
        _close(got["t"], want["t"], "cpu")
        for g, w in zip(got["pair"], want["pair"]):
            _close(g, w, "cpu")
        _close(cbn(x), bn(x), "cpu")
    _close(twin[1].running_mean, bn[1].running_mean, "cpu")      # updated in place, 3 times
    _close(twin[1].running_var, bn[1].running_var, "cpu")
    assert int(twin[1].num_batches_tracked) == int(bn[1].num_batches_tracked) == 3
    cbn.eval()
    bn.eval()
    _close(cbn(x), bn(x), "cpu")                                 # a new signature: eval mode
    assert len(cbn._compiled.cache) == 2


def test_double_backward_through_a_compiled_graph_says_so():
    w = torch.randn(3, requires_grad=True)
    cf = torch.compile(lambda a: (a * a).sum())
    cf(w)
    y = cf(w)
    with pytest.raises(NotImplementedError, match="double backward"):
        torch.autograd.grad(y, w, create_graph=True)
    g, = torch.autograd.grad(cf(w), w)
    _close(g, 2 * w, "cpu")


def test_bad_input_after_capture_raises_what_eager_raises():
    # integer division checks its divisor on the host: a graph break, so the signature
    # runs eagerly and a zero divisor later gets eager's error, not garbage
    cf = torch.compile(lambda a, b: (a + 1) // b)
    a = torch.tensor([4, 9])
    cf(a, torch.tensor([2, 3]))
    _close(cf(a, torch.tensor([2, 3])), torch.tensor([2, 3]), "cpu")
    with pytest.raises(Exception) as eager:
        (a + 1) // torch.tensor([2, 0])
    with pytest.raises(type(eager.value), match="floor_divide") as got:
        cf(a, torch.tensor([2, 0]))
    assert str(got.value) == str(eager.value)


@pytest.mark.parametrize("shape", [(7, 5), (300, 1000), (3, 70000)])
def test_reductions_fed_by_a_chain_run_in_its_kernel_on_cpu(shape):
    def f(x, y):
        return ((x * y + 1.0).sum(-1), torch.exp(x - y).amax(dim=1, keepdim=True),
                (x * 2.0).sum(0))

    x, y = torch.randn(*shape), torch.randn(*shape)
    cf = torch.compile(f)
    cf(x, y)
    for g, w in zip(cf(x, y), f(x, y)):
        np.testing.assert_array_equal(_np(g), _np(w))      # the same sums, bit for bit
    entry, = _entries(cf)
    assert entry.launches() == (8, 1)
    np.testing.assert_allclose(_np(cf(x, y)[0]), (_np(x) * _np(y) + 1).sum(-1), rtol=1e-4,
                               atol=1e-4)


def test_a_tensor_literal_written_in_place_starts_fresh_each_call():
    def f(a):
        acc = torch.tensor([1.0, 2.0])
        acc.add_(a.sum())
        return acc * 2.0

    cf = torch.compile(f)
    x = torch.ones(3)
    for _ in range(3):
        _close(cf(x), torch.tensor([8.0, 10.0]), "cpu")


def test_an_unused_random_draw_still_advances_the_generator():
    def f(a):
        torch.nn.functional.dropout(a, 0.5)          # result unused, but it draws
        return torch.nn.functional.dropout(a, 0.5)

    x = torch.ones(4, 8)
    cf = torch.compile(f)
    outs = []
    for fn in (f, cf, cf):
        torch.manual_seed(3)
        outs.append(_np(fn(x)))
    np.testing.assert_array_equal(outs[0], outs[2])


def test_a_kernel_failing_in_a_replay_is_reported_as_eager_reports_it(monkeypatch):
    from dispatchtorch.dispatch import OPS
    x = torch.randn(4)
    torch.exp(x)                                       # resolve exp's cpu kernel
    real = OPS["exp"].kernels["cpu"]
    fail = []

    def flaky(out, a):
        if fail:
            raise ValueError("device lost")
        real(out, a)
    monkeypatch.setitem(OPS["exp"].kernels, "cpu", flaky)
    cf = torch.compile(lambda a: torch.exp(a) + 1.0, options={"fusion": False})
    cf(x)
    _close(cf(x), torch.exp(x) + 1.0, "cpu")
    fail.append(True)
    with pytest.raises(RuntimeError, match=r"exp \(in a compiled graph\) failed on backend "
                                           r"'cpu' \(dtypes: float32\): ValueError: device lost"):
        cf(x)


def test_a_tied_weight_used_before_a_compiled_child_gets_eagers_gradient():
    # the child's input depends on the child's own weight (used eagerly first): its
    # recorded backward would count that path twice, so the child runs eagerly
    emb = torch.nn.Embedding(6, 4)
    head = torch.nn.Linear(4, 6, bias=False)
    head.weight = emb.weight
    cf = torch.compile(head)
    idx = torch.tensor([1, 2, 5])
    grads = []
    for fn in (head, cf, cf):
        emb.weight.grad = None
        fn(torch.tanh(emb(idx))).square().sum().backward()
        grads.append(_np(emb.weight.grad))
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-6)
    np.testing.assert_allclose(grads[2], grads[0], rtol=1e-6)
    entry, = _entries(cf._compiled)
    assert isinstance(entry, EagerEntry) and "tied weight" in entry.graph.breaks[0].reason


def test_a_numpy_array_shared_inside_the_call_is_a_break_not_a_constant():
    rng = np.random.default_rng(0)

    def f(x):
        noise = torch.from_numpy(rng.standard_normal(3).astype(np.float32))
        return x * 2.0 + noise

    cf = torch.compile(f)
    x = torch.ones(3)
    got = [_np(cf(x)) for _ in range(3)]
    assert not np.array_equal(got[1], got[2])          # new noise at every call
    entry, = _entries(cf)
    assert isinstance(entry, EagerEntry) and "from_numpy" in entry.graph.breaks[0].reason
    with pytest.raises(torch._dynamo.exc.Unsupported, match="from_numpy"):
        torch.compile(f, fullgraph=True)(x)
