"""The capture layer: what a traced run records, and that tracing leaves nothing behind."""
import threading

import numpy as np
import pytest

import dispatchtorch as torch
from dispatchtorch._capture import (COMPOSITE, CONSTANT, INPUT, KERNEL, PARAMETER, RANDOM,
                                    capture, current, trace, unflatten)
from dispatchtorch.dispatch import OPS


def _kernels(g, phase=None):
    return [n.op for n in g.prim_nodes(phase) if n.kind == KERNEL]


def test_elementwise_chain_in_order_with_data_flow():
    x, y = torch.randn(4, 3), torch.randn(4, 3)
    g, out = capture(lambda a, b: a * b + torch.exp(a), x, y)
    assert _kernels(g) == ["mul", "exp", "add"]
    mul, exp, add = [n for n in g.nodes if n.kind == KERNEL]
    a, b = g.placeholder("args[0]").value, g.placeholder("args[1]").value
    assert mul.inputs == (a, b) and exp.inputs == (a,)
    assert add.inputs == (mul.outputs[0], exp.outputs[0])
    assert g.outputs == [add.outputs[0]]
    v = g.values[add.outputs[0]]
    assert (v.shape, v.dtype, v.strides, v.device) == ((4, 3), "float32", (3, 1), "cpu")
    np.testing.assert_allclose(out.numpy(), x.numpy() * y.numpy() + np.exp(x.numpy()), rtol=1e-6)


def test_broadcast_and_views_are_as_strided_nodes():
    x, y = torch.randn(4, 3), torch.randn(3)
    g, _ = capture(lambda a, b: (a + b)[1:].t(), x, y)
    views = [n for n in g.nodes if n.op == "as_strided"]
    assert views[0].params == {"size": (4, 3), "stride": (0, 1), "storage_offset": 0}
    out = g.values[g.outputs[0]]
    assert (out.shape, out.strides, out.offset) == ((3, 3), (1, 3), 3)
    assert out.base == [n for n in g.nodes if n.op == "add"][0].outputs[0]


def test_inplace_on_an_input_is_marked_and_writes_the_input():
    x = torch.zeros(2, 3)

    def f(a):
        a[0] = 5.0
        a.mul_(2.0)
        return a

    g, out = capture(f, x)
    inp = g.placeholder("args[0]").value
    writes = [n for n in g.nodes if n.inplace]
    assert [n.op for n in writes] == ["fill_", "mul"]
    assert g.values[writes[0].outputs[0]].base == inp and writes[1].outputs == (inp,)
    assert x.tolist() == [[10.0] * 3, [0.0] * 3] and g.outputs == [inp]


def test_module_parameters_by_name_composites_whole_and_scalar_constants():
    torch.manual_seed(0)
    # group_norm: a composite without a CPU kernel of its own (layer_norm has one)
    m = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.GroupNorm(2, 4))
    g, _ = capture(m, torch.randn(2, 3))
    names = {p.name: p.kind for p in g.placeholders}
    assert names["0.weight"] == names["1.bias"] == PARAMETER and names["args[0]"] == INPUT
    whole = [n.op for n in g.whole_nodes() if n.kind in (KERNEL, COMPOSITE)]
    assert whole == ["linear", "group_norm"]
    ln = [n for n in g.nodes if n.op == "group_norm"][0]
    assert ln.kind == COMPOSITE and ln.params["eps"] == 1e-5
    assert any(n.parent == ln.id for n in g.nodes)
    eps = [p for p in g.placeholders if p.kind == CONSTANT and p.data.size == 1
           and abs(float(p.data) - 1e-5) < 1e-9]
    assert eps, "the eps scalar is a recorded constant"


@pytest.mark.parametrize("fn, op", [(lambda a: a * a.sum().item(), "item"),
                                    (lambda a: a[a > 0], "getitem"),
                                    (lambda a: a + 1 if bool(a.sum() > 0) else a - 1, "__bool__"),
                                    (lambda a: torch.nonzero(a), "nonzero")])
def test_data_dependent_ops_are_graph_breaks_naming_the_op(fn, op):
    g, _ = capture(fn, torch.randn(5))
    assert g.breaks and g.breaks[0].op == op
    assert "test_capture.py" in g.breaks[0].source


def test_dropout_mask_is_a_random_node_and_rand_is_a_break():
    x = torch.randn(3, 4)
    g, _ = capture(lambda a: torch.nn.functional.dropout(a, 0.5), x)
    assert [n.op for n in g.nodes if n.kind == RANDOM] == ["random"] and not g.breaks
    g, _ = capture(lambda a: a + torch.rand(3, 4), x)
    assert g.breaks and "random" in g.breaks[0].reason


def test_backward_is_recorded_with_gradients_by_name():
    w = torch.randn(3, requires_grad=True)
    x = torch.randn(4, 3)
    g, out = trace(lambda a, w: (a * w).sum(), (x,), {"w": w}, backward=True)
    assert _kernels(g, "forward") == ["mul", "sum"]
    assert "mul" in _kernels(g, "backward")
    (name, vid), = g.grad_inputs
    assert name == "kwargs['w']" and vid is not None
    out.backward()          # the eager graph was retained
    np.testing.assert_allclose(w.grad.numpy(), x.numpy().sum(0), rtol=1e-6)


def test_outputs_structure_round_trips():
    x = torch.randn(2)
    g, out = capture(lambda a: {"y": (a + 1, 3), "z": [a * 2]}, x)
    rebuilt = unflatten(g.output_spec, [out["y"][0], out["z"][0]])
    assert rebuilt["y"][1] == 3 and rebuilt["z"][0] is out["z"][0]


def test_tracing_is_per_thread_and_leaves_the_tables_as_they_were():
    x = torch.randn(8)
    before = {name: dict(op.kernels) for name, op in OPS.items()}
    other = []
    started, release = threading.Event(), threading.Event()

    def body(a):
        started.set()
        release.wait(5)
        return a + 1

    def worker():
        started.wait(5)
        other.append((current(), (x * 3).sum()))    # runs while the main thread traces
        release.set()

    t = threading.Thread(target=worker)
    t.start()
    g, _ = capture(body, x)
    t.join()
    assert _kernels(g) == ["add"]          # the other thread's mul and sum are not in it
    assert other[0][0] is None
    np.testing.assert_allclose(other[0][1].item(), (x.numpy() * 3).sum(), rtol=1e-5)
    after = {name: dict(op.kernels) for name, op in OPS.items()}
    for name, ks in after.items():
        for b, fn in ks.items():
            assert not hasattr(fn, "_dt_traced"), (name, b)
            if b in before[name]:
                assert fn is before[name][b]
    assert all(not hasattr(op.decomp, "_dt_traced") for op in OPS.values())
    place = x._place
    assert "empty" not in vars(place.bk) and place.empty.__func__ is type(place.bk).empty
