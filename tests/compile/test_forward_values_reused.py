"""The backward reads what the forward computed instead of computing it again
(passes.cse's `prior`): layer_norm's decomposition recomputes its mean and variance in
its backward rule; compiled, those kernels are gone and the gradients stay eager's."""
import math

import numpy as np
import pytest

import dispatchtorch as torch
from tests.compile.compile_helpers import DEVICES, _close, _entries, _np

_erf = np.vectorize(math.erf)


def _reference_grad(x, c, eps=1e-5):
    """d/dx sum(gelu(layer_norm(x)) * c) in float64 (weight 1, bias 0)."""
    mu = x.mean(-1, keepdims=True)
    sigma = np.sqrt(x.var(-1, keepdims=True) + eps)
    xh = (x - mu) / sigma
    dgelu = 0.5 * (1.0 + _erf(xh / math.sqrt(2.0))) + xh * np.exp(-0.5 * xh * xh) \
        / math.sqrt(2.0 * math.pi)
    g = c * dgelu
    return (g - g.mean(-1, keepdims=True) - xh * (g * xh).mean(-1, keepdims=True)) / sigma


@pytest.mark.parametrize("dev", DEVICES)
def test_layer_norm_backward_reads_the_forward_statistics(dev):
    rng = np.random.default_rng(0)
    data = rng.standard_normal((4, 8, 16)).astype(np.float32) * 3.0 + 1.0
    c = torch.tensor(rng.standard_normal((4, 8, 16)).astype(np.float32), device=dev)
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.LayerNorm(16), torch.nn.GELU()).to(dev)
    cm = torch.compile(model)
    grads = []
    for fn in (model, cm, cm):               # eager, the capture, a replay
        x = torch.tensor(data, device=dev, requires_grad=True)
        (fn(x) * c).sum().backward()
        grads.append(x.grad)
    _close(grads[2], grads[0], dev)
    want = _reference_grad(data.astype(np.float64), _np(c).astype(np.float64))
    np.testing.assert_allclose(_np(grads[2]), want, rtol=1e-4, atol=1e-5)
    entry, = _entries(cm._compiled)
    if dev == "opencl":                      # (the CPU runs layer_norm as one kernel)
        # the mean's sum and division, the centred square and its sum, the sqrt: read
        assert entry.backward.n_kernels == 11 and entry.backward.n_eager_kernels == 36
        names = " ".join(st[3] for st in entry.backward.steps)
        assert "(sub, mul)" not in names


@pytest.mark.parametrize("dev", DEVICES)
def test_gelu_backward_reads_the_forwards_erf(dev):
    data = np.random.default_rng(1).standard_normal((6, 40)).astype(np.float32)
    f = torch.nn.functional.gelu
    cf = torch.compile(f)
    grads = []
    for fn in (f, cf, cf):
        x = torch.tensor(data, device=dev, requires_grad=True)
        (fn(x) * 3.0).sum().backward()
        grads.append(x.grad)
    _close(grads[2], grads[0], dev)
    x64 = data.astype(np.float64)
    dgelu = 0.5 * (1.0 + _erf(x64 / math.sqrt(2.0))) + x64 * np.exp(-0.5 * x64 * x64) \
        / math.sqrt(2.0 * math.pi)
    np.testing.assert_allclose(_np(grads[2]), dgelu * 3.0, rtol=2e-6, atol=2e-6)
    entry, = _entries(cf)
    if dev == "opencl":                      # (the CPU runs gelu's rows as kernels)
        assert any("erf" in st[3] for st in entry.forward.steps)
        assert not any("erf" in st[3] for st in entry.backward.steps)


# reuse_forward on hand-made phases: x (0), the forward's t (1), the backward's u (2), w (3)
def _phases(between=(), writes_t=False):
    from dispatchtorch._capture.graph import KERNEL, MEMORY, Node, Scalar, Value
    values = [Value(i, (4,), "float32", (1,), 0, "cpu") for i in range(4)]
    k = lambda i, op, ins, outs, inplace=False: Node(i, op, KERNEL, ins, outs, {},    # noqa: E731
                                                       inplace=inplace)
    half = Scalar(0.5)
    forward = [Node(0, "empty", MEMORY, (), (1,), {}), k(1, "mul", (0, half), (1,)),
               k(2, "erf", (1,), (1,), True)]
    backward = [Node(3, "empty", MEMORY, (), (2,), {}), k(4, "mul", (0, half), (2,)),
                *between, k(5, "erf", (2,), (2,), True), k(6, "add", (2, Scalar(1.0)), (2,), True)]
    if writes_t:
        backward.append(k(7, "mul", (1, half), (1,), True))
    return forward, backward, values


def test_an_in_place_chain_recomputing_a_forward_buffer_becomes_a_copy():
    from dispatchtorch._compile.passes import Roots
    from dispatchtorch._compile.reuse import reuse_forward
    forward, backward, values = _phases()
    got = reuse_forward(forward, backward, values, Roots(values))
    assert [(n.op, n.inputs, n.outputs) for n in got] == [
        ("empty", (), (2,)), ("copy_", (1,), (2,)), ("add", (2, backward[-1].inputs[1]), (2,))]


@pytest.mark.parametrize("case", ["read between", "forward buffer written"])
def test_a_chain_read_meanwhile_or_a_written_forward_buffer_is_kept(case):
    from dispatchtorch._capture.graph import KERNEL, Node
    from dispatchtorch._compile.passes import Roots
    from dispatchtorch._compile.reuse import reuse_forward
    read = (Node(8, "exp", KERNEL, (2,), (3,), {}),) if case == "read between" else ()
    forward, backward, values = _phases(read, writes_t=case != "read between")
    assert reuse_forward(forward, backward, values, Roots(values)) == backward


def test_a_chain_never_written_again_is_replaced_by_the_forwards_buffer():
    from dispatchtorch._capture.graph import KERNEL, Node
    from dispatchtorch._compile.passes import Roots
    from dispatchtorch._compile.reuse import reuse_forward
    forward, backward, values = _phases()
    backward = backward[:-1] + [Node(9, "exp", KERNEL, (2,), (3,), {})]   # reads u, no write
    got = reuse_forward(forward, backward, values, Roots(values))
    assert [(n.op, n.inputs, n.outputs) for n in got] == [("empty", (), (2,)),
                                                           ("exp", (1,), (3,))]
